/**
 * The designer's dialogs: import (file or pasted text), run (variables checked against the
 * workflow's `inputSchema`), a name prompt (rename, duplicate), a confirmation, and the guard for
 * unsaved changes.
 *
 * Test ids: `import-dialog` (`import-file`, `import-text`, `import-confirm`, `import-error`,
 * `import-cancel`), `run-dialog` (`run-vars`, `run-vars-error`, `run-start`, `run-cancel`,
 * `run-version`), `name-dialog` (`name-dialog-input`, `name-dialog-ok`, `name-dialog-error`,
 * `name-dialog-cancel`), `confirm-dialog` (`confirm-ok`, `confirm-cancel`), `unsaved-dialog`
 * (`unsaved-save`, `unsaved-discard`, `unsaved-cancel`).
 */
import { useMemo, useState } from 'react';
import { parseVariables } from '../variables';
import { Modal } from './Modal';
import { checkAgainstSchema, schemaFields, variablesSkeleton } from './run-variables';

/** Import: pick a file, or paste JSON or YAML. */
export function ImportDialog({ onPickFile, onImport, onClose }: { onPickFile(): Promise<string | undefined>; onImport(text: string): string | undefined; onClose(): void }) {
  const [text, setText] = useState('');
  const [error, setError] = useState<string | undefined>(undefined);
  return (
    <Modal title="Import a workflow" testId="import-dialog" onClose={onClose} wide>
      <p className="muted">Choose a JSON or YAML file, paste its text below, or drop a file anywhere on the designer. It opens as an unsaved draft.</p>
      <div className="rn-modal-row">
        <button
          type="button"
          data-testid="import-file"
          onClick={() =>
            void onPickFile().then((why) => {
              if (why !== undefined) setError(why);
            })
          }
        >
          Choose a file…
        </button>
      </div>
      <textarea className="rn-mono rn-modal-text" data-testid="import-text" rows={12} spellCheck={false} placeholder='{ "name": "my-workflow", "nodes": [ … ], "edges": [ … ] }' value={text} onChange={(e) => setText(e.target.value)} />
      {error !== undefined ? (
        <p className="rn-field-error" role="alert" data-testid="import-error">
          {error}
        </p>
      ) : null}
      <div className="rn-modal-actions">
        <button type="button" data-testid="import-cancel" onClick={onClose}>
          Cancel
        </button>
        <button type="button" className="primary" data-testid="import-confirm" disabled={text.trim() === ''} onClick={() => setError(onImport(text))}>
          Import
        </button>
      </div>
    </Modal>
  );
}

/** Run: variables as JSON, checked against the input schema before the host sees them. */
export function RunDialog({
  workflow,
  version,
  unsaved,
  inputSchema,
  onStart,
  onClose,
}: {
  workflow: string;
  version: number;
  unsaved: boolean;
  inputSchema: unknown;
  onStart(vars: Record<string, unknown> | undefined): Promise<boolean>;
  onClose(): void;
}) {
  const initial = useMemo(() => variablesSkeleton(inputSchema), [inputSchema]);
  const fields = useMemo(() => schemaFields(inputSchema), [inputSchema]);
  const [text, setText] = useState(initial);
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const start = async (): Promise<void> => {
    const parsed = parseVariables(text);
    if (!parsed.ok) {
      setError(parsed.message);
      return;
    }
    const why = checkAgainstSchema(inputSchema, parsed.value ?? {});
    if (why !== undefined) {
      setError(`The variables do not match the workflow's input schema:\n${why}`);
      return;
    }
    setError(undefined);
    setBusy(true);
    const ok = await onStart(parsed.value);
    setBusy(false);
    if (!ok) setError('The host refused to start it (see the message in the corner).');
  };
  return (
    <Modal title={`Run ${workflow}`} testId="run-dialog" onClose={onClose} wide>
      <p className="muted" data-testid="run-version">
        Starts an instance of version {version}
        {unsaved ? ' as saved: your unsaved changes are not part of it' : ''}, then shows it.
      </p>
      <label className="rn-field-label" htmlFor="run-vars">
        Variables (JSON){inputSchema !== undefined ? ', checked against the input schema' : ''}
      </label>
      <textarea id="run-vars" className="rn-mono rn-modal-text" data-testid="run-vars" rows={10} spellCheck={false} value={text} onChange={(e) => setText(e.target.value)} />
      {fields.length > 0 ? (
        <p className="rn-field-hint" data-testid="run-fields">
          Fields: {fields.join(', ')}
          {fields.some((f) => f.includes('*')) ? ' (* required)' : ''}
        </p>
      ) : null}
      {error !== undefined ? (
        <p className="rn-field-error rn-pre" role="alert" data-testid="run-vars-error">
          {error}
        </p>
      ) : null}
      <div className="rn-modal-actions">
        <button type="button" data-testid="run-cancel" onClick={onClose}>
          Cancel
        </button>
        <button type="button" className="primary" data-testid="run-start" disabled={busy} onClick={() => void start()}>
          Start
        </button>
      </div>
    </Modal>
  );
}

/** Asks for a name; `onSubmit` returns an error to show, or undefined when done. */
export function NameDialog({ title, label, initial, submitLabel, onSubmit, onClose, testId = 'name-dialog' }: { title: string; label: string; initial: string; submitLabel: string; onSubmit(name: string): Promise<string | undefined>; onClose(): void; testId?: string }) {
  const [name, setName] = useState(initial);
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const submit = async (): Promise<void> => {
    setBusy(true);
    const why = await onSubmit(name);
    setBusy(false);
    if (why === undefined) onClose();
    else setError(why);
  };
  return (
    <Modal title={title} testId={testId} onClose={onClose}>
      <label className="rn-field-label" htmlFor="name-dialog-input">
        {label}
      </label>
      <input
        id="name-dialog-input"
        data-testid="name-dialog-input"
        type="text"
        autoFocus
        value={name}
        onChange={(e) => setName(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter') void submit();
        }}
      />
      {error !== undefined ? (
        <p className="rn-field-error" role="alert" data-testid="name-dialog-error">
          {error}
        </p>
      ) : null}
      <div className="rn-modal-actions">
        <button type="button" data-testid="name-dialog-cancel" onClick={onClose}>
          Cancel
        </button>
        <button type="button" className="primary" data-testid="name-dialog-ok" disabled={busy || name.trim() === ''} onClick={() => void submit()}>
          {submitLabel}
        </button>
      </div>
    </Modal>
  );
}

/** Asks to confirm something that cannot be undone. */
export function ConfirmDialog({ title, message, confirmLabel, onConfirm, onClose }: { title: string; message: string; confirmLabel: string; onConfirm(): void; onClose(): void }) {
  return (
    <Modal title={title} testId="confirm-dialog" onClose={onClose}>
      <p>{message}</p>
      <div className="rn-modal-actions">
        <button type="button" data-testid="confirm-cancel" onClick={onClose}>
          Cancel
        </button>
        <button
          type="button"
          className="danger"
          data-testid="confirm-ok"
          onClick={() => {
            onClose();
            onConfirm();
          }}
        >
          {confirmLabel}
        </button>
      </div>
    </Modal>
  );
}

/** Unsaved changes would be lost: save first, discard them, or stay. */
export function UnsavedDialog({ name, onSave, onDiscard, onClose }: { name: string; onSave(): void; onDiscard(): void; onClose(): void }) {
  return (
    <Modal title="Unsaved changes" testId="unsaved-dialog" onClose={onClose}>
      <p>
        <strong>{name}</strong> has changes that are not saved. They are lost if you go on.
      </p>
      <div className="rn-modal-actions">
        <button type="button" data-testid="unsaved-cancel" onClick={onClose}>
          Stay
        </button>
        <button type="button" className="danger" data-testid="unsaved-discard" onClick={onDiscard}>
          Discard changes
        </button>
        <button type="button" className="primary" data-testid="unsaved-save" onClick={onSave}>
          Save first
        </button>
      </div>
    </Modal>
  );
}
