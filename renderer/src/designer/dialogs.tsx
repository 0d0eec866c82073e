/**
 * The designer's dialogs: import (file or pasted text), run (variables checked against the
 * workflow's `inputSchema`), a name prompt (rename, duplicate), a confirmation, and the guard for
 * unsaved changes.
 *
 * Test ids: `import-dialog` (`import-file`, `import-text`, `import-confirm`, `import-error`,
 * `import-cancel`), `run-dialog` (`run-vars`, `run-vars-error` (a check's message, or the host's
 * refusal with `data-code` and `run-error-code`, `run-error-message`, `run-error-field`), `run-start`, `run-cancel`,
 * `run-version`; `run-test`; a test run's `run-pins`, `pin-<node>`, `pin-value-<node>`), `name-dialog` (`name-dialog-input`, `name-dialog-ok`, `name-dialog-error`,
 * `name-dialog-cancel`), `confirm-dialog` (`confirm-ok`, `confirm-cancel`), `unsaved-dialog`
 * (`unsaved-save`, `unsaved-discard`, `unsaved-cancel`).
 */
import { useMemo, useState } from 'react';
import type { ApiError } from '../../../engine/api/contract';
import { parseVariables } from '../variables';
import { Modal } from './Modal';
import { checkAgainstSchema, pinSample, pinsFrom, schemaFields, variablesSkeleton } from './run-variables';

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

/** A node a test run may pin: its id and type. */
export interface PinnableNode {
  id: string;
  type: string;
}

/**
 * Run: variables as JSON, checked against the input schema before the host sees them. Ticked
 * "Test run" (`run-test`), it starts a test run, and a result may be pinned per node of `nodes`:
 * the node then completes with it and its handler does not run (an http or custom node calls
 * nothing); `onStart` then gets the pins (an empty object when none is pinned). `onStart` answers
 * the host's refusal, which the dialog shows in place (code, message and the fields it names),
 * the dialog open and the variables as typed, to fix and start again.
 */
export function RunDialog({
  workflow,
  version,
  unsaved,
  inputSchema,
  nodes = [],
  onStart,
  onClose,
}: {
  workflow: string;
  version: number;
  unsaved: boolean;
  inputSchema: unknown;
  /** The version's nodes, any of which a test run may pin. */
  nodes?: readonly PinnableNode[];
  /** Starts it: undefined when started, else the host's refusal. */
  onStart(vars: Record<string, unknown> | undefined, pins?: Record<string, unknown>): Promise<ApiError | undefined>;
  onClose(): void;
}) {
  const initial = useMemo(() => variablesSkeleton(inputSchema), [inputSchema]);
  const fields = useMemo(() => schemaFields(inputSchema), [inputSchema]);
  const [text, setText] = useState(initial);
  const [error, setError] = useState<string | undefined>(undefined);
  const [refusal, setRefusal] = useState<ApiError | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const [test, setTest] = useState(false);
  const [pinned, setPinned] = useState<ReadonlySet<string>>(new Set());
  const [pinTexts, setPinTexts] = useState<Record<string, string>>(() => Object.fromEntries(nodes.map((n) => [n.id, pinSample(n.type)])));
  const start = async (): Promise<void> => {
    setRefusal(undefined);
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
    let pins: Record<string, unknown> | undefined;
    if (test) {
      const p = pinsFrom(pinned, pinTexts);
      if (!p.ok) {
        setError(p.message);
        return;
      }
      pins = p.pins;
    }
    setError(undefined);
    setBusy(true);
    const refused = await onStart(parsed.value, pins);
    setBusy(false);
    setRefusal(refused);
  };
  const refusedFields = refusalFields(refusal);
  return (
    <Modal title={`${test ? 'Test run' : 'Run'} ${workflow}`} testId="run-dialog" onClose={onClose} wide>
      <p className="muted" data-testid="run-version">
        Starts {test ? 'a test run' : 'an instance'} of version {version}
        {unsaved ? ' as saved: your unsaved changes are not part of it' : ''}, then shows it.
        {test ? ' A test run runs for real, but the metrics and the instance list leave it out; pinned nodes return their pinned result instead of running.' : ''}
      </p>
      <label className="rn-field-label" htmlFor="run-vars">
        Variables (JSON){inputSchema !== undefined ? ', checked against the input schema' : ''}
      </label>
      <textarea
        id="run-vars"
        className="rn-mono rn-modal-text"
        data-testid="run-vars"
        rows={test ? 6 : 10}
        spellCheck={false}
        aria-invalid={error !== undefined || refusedFields.some((f) => /^variables\b/.test(f))}
        aria-describedby={refusal !== undefined ? 'run-refusal' : undefined}
        value={text}
        onChange={(e) => setText(e.target.value)}
      />
      {fields.length > 0 ? (
        <p className="rn-field-hint" data-testid="run-fields">
          Fields: {fields.join(', ')}
          {fields.some((f) => f.includes('*')) ? ' (* required)' : ''}
        </p>
      ) : null}
      <label className="rn-run-test">
        <input type="checkbox" data-testid="run-test" checked={test} onChange={(e) => setTest(e.target.checked)} /> Test run: pin node results, keep it out of the
        metrics and the instance list
      </label>
      {test ? (
        <fieldset className="rn-pins" data-testid="run-pins">
          <legend>Pin results (the node returns this instead of running)</legend>
          {nodes.map((n) => (
            <div key={n.id} className="rn-pin">
              <label>
                <input
                  type="checkbox"
                  data-testid={`pin-${n.id}`}
                  checked={pinned.has(n.id)}
                  onChange={(e) => {
                    const next = new Set(pinned);
                    if (e.target.checked) next.add(n.id);
                    else next.delete(n.id);
                    setPinned(next);
                  }}
                />{' '}
                <code>{n.id}</code> <span className="muted">({n.type})</span>
              </label>
              {pinned.has(n.id) ? (
                <textarea
                  className="rn-mono"
                  data-testid={`pin-value-${n.id}`}
                  aria-label={`Pinned result of ${n.id} (JSON)`}
                  rows={2}
                  spellCheck={false}
                  value={pinTexts[n.id] ?? ''}
                  onChange={(e) => setPinTexts({ ...pinTexts, [n.id]: e.target.value })}
                />
              ) : null}
            </div>
          ))}
        </fieldset>
      ) : null}
      {error !== undefined ? (
        <p className="rn-field-error rn-pre" role="alert" data-testid="run-vars-error">
          {error}
        </p>
      ) : null}
      {refusal !== undefined ? <Refusal error={refusal} /> : null}
      <div className="rn-modal-actions">
        <button type="button" data-testid="run-cancel" onClick={onClose}>
          Cancel
        </button>
        <button type="button" className="primary" data-testid="run-start" disabled={busy} onClick={() => void start()}>
          {test ? 'Start test run' : 'Start'}
        </button>
      </div>
    </Modal>
  );
}

/** The fields a refusal names: the paths of its `details.issues` (BAD_REQUEST, a schema's refusal), or `details.field`. */
function refusalFields(error: ApiError | undefined): string[] {
  const details = error?.details as { issues?: unknown; field?: unknown } | undefined;
  if (!details || typeof details !== 'object') return [];
  const fields = Array.isArray(details.issues)
    ? details.issues.flatMap((i) => {
        const path = (i as { path?: unknown } | null)?.path;
        return typeof path === 'string' ? [path] : Array.isArray(path) ? [path.map(String).join('.')] : [];
      })
    : [];
  if (typeof details.field === 'string') fields.push(details.field);
  return [...new Set(fields)];
}

/** The host's refusal to start, in the dialog: its code, its message and the fields it names. */
function Refusal({ error }: { error: ApiError }) {
  const fields = refusalFields(error);
  return (
    <div className="rn-field-error rn-run-refusal" role="alert" id="run-refusal" data-testid="run-vars-error" data-code={error.code}>
      <p>
        The host refused to start it: <code data-testid="run-error-code">{error.code}</code>{' '}
        <span className="rn-pre" data-testid="run-error-message">
          {error.message}
        </span>
      </p>
      {fields.length > 0 ? (
        <p data-testid="run-error-field">
          {fields.length === 1 ? 'Field' : 'Fields'}:{' '}
          {fields.map((f, i) => (
            <span key={f}>
              {i > 0 ? ', ' : ''}
              <code>{f}</code>
            </span>
          ))}
        </p>
      ) : null}
    </div>
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
