/**
 * The Designer view (issue 4): palette, canvas, properties, problems, toolbar and dialogs over
 * the designer store; keyboard shortcuts; the guard for unsaved changes (switching workflow,
 * new, import, another version; closing the window); files dropped on the view are imported.
 *
 * It follows the sidebar: selecting a workflow there opens it here (asking first when the drawing
 * has unsaved changes). Test ids: `view-designer` (with `data-dirty`, `data-workflow`,
 * `data-version`, `data-readonly`), `designer-message`, `readonly-banner`, `restore-version`,
 * `back-to-latest`, `drop-overlay`, and those of the parts (see each module).
 */
import { ReactFlowProvider } from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import { useCallback, useEffect, useRef, useState, type DragEvent } from 'react';
import type { FileAccess } from '../commands';
import { useStores } from '../hooks';
import { useMonitor } from '../monitor/hooks';
import type { DesignerState } from '../stores/designer-store';
import { Canvas } from './Canvas';
import { DesignerStoreContext, designerStoreFor, useDesigner, useDesignerStore } from './context';
import { readWorkflowFile } from './convert';
import { ConfirmDialog, ImportDialog, NameDialog, RunDialog, UnsavedDialog } from './dialogs';
import { ProblemsPanel } from './ProblemsPanel';
import { Palette } from './Palette';
import { PANEL_WIDTH, PropertiesPanel } from './PropertiesPanel';
import { Toolbar } from './Toolbar';
import { DnDProvider } from './use-dnd';
import './designer.css';

type Dialog = 'import' | 'run' | 'rename' | 'duplicate' | 'delete' | 'name-first' | undefined;

/** A pending action waiting for the unsaved-changes answer; `cancel` undoes what asked for it. */
interface Pending {
  go(): void | Promise<unknown>;
  cancel?(): void;
}

/** How long an info message stays, ms (errors stay until the next message). */
const INFO_MS = 6000;

/** What the canvas shows, as the sidebar selection spells it: no version for the latest. */
function shownOf(s: Pick<DesignerState, 'source' | 'readOnly'>): { name: string | undefined; version: number | undefined } {
  return { name: s.source?.name, version: s.source && s.readOnly ? s.source.version : undefined };
}

/**
 * Whether the canvas shows the selection `name` at `version` (undefined: the latest). A version
 * named that is the latest is shown too: its address keeps its number (no second history entry).
 */
function shows(s: Pick<DesignerState, 'source' | 'readOnly'>, name: string | undefined, version: number | undefined): boolean {
  const shown = shownOf(s);
  if (name !== shown.name) return false;
  return version === shown.version || (version !== undefined && !s.readOnly && s.source?.version === version);
}

function isTextTarget(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  if (target.isContentEditable || target instanceof HTMLTextAreaElement || target instanceof HTMLSelectElement) return true;
  if (target instanceof HTMLInputElement) return !['checkbox', 'radio', 'button', 'submit', 'range', 'color', 'file'].includes(target.type);
  return false;
}

function Message() {
  const message = useDesigner((s) => s.message);
  const store = useDesignerStore();
  useEffect(() => {
    if (!message || message.kind !== 'info') return;
    const timer = setTimeout(() => {
      if (store.getState().message?.seq === message.seq) store.getState().clearMessage();
    }, INFO_MS);
    return () => clearTimeout(timer);
  }, [message, store]);
  if (!message) return null;
  return (
    <div className={`rn-message ${message.kind}`} role={message.kind === 'error' ? 'alert' : 'status'} data-testid="designer-message" data-kind={message.kind} data-seq={message.seq}>
      <span data-testid="designer-message-text">{message.text}</span>
      <button type="button" className="rn-message-close" aria-label="Dismiss" onClick={() => store.getState().clearMessage()}>
        ×
      </button>
    </div>
  );
}

function ReadOnlyBanner({ onLatest }: { onLatest(): void }) {
  const store = useDesignerStore();
  const source = useDesigner((s) => s.source);
  const readOnly = useDesigner((s) => s.readOnly);
  const busy = useDesigner((s) => s.busy);
  if (!readOnly || !source) return null;
  return (
    <div className="rn-readonly" data-testid="readonly-banner">
      <span>
        Version {source.version} of {source.latest}, read-only.
      </span>
      <button type="button" className="primary" data-testid="restore-version" disabled={busy} onClick={() => void store.getState().restoreVersion()}>
        Restore as new version
      </button>
      <button type="button" data-testid="back-to-latest" onClick={onLatest}>
        Back to the latest
      </button>
    </div>
  );
}

function DesignerBody({ files }: { files: FileAccess }) {
  const app = useStores();
  const monitor = useMonitor();
  const store = useDesignerStore();
  const [dialog, setDialog] = useState<Dialog>(undefined);
  const [pending, setPending] = useState<Pending | undefined>(undefined);
  const [dropping, setDropping] = useState(false);
  const [workflowOpen, setWorkflowOpen] = useState(false);
  const selecting = useDesigner((s) => s.nodes.some((n) => n.selected) || s.edges.some((e) => e.selected));
  const panelOpen = workflowOpen || selecting;
  const dirty = useDesigner((s) => s.dirty);
  const name = useDesigner((s) => s.meta.name);
  const source = useDesigner((s) => s.source);
  const readOnly = useDesigner((s) => s.readOnly);
  const inputSchema = useDesigner((s) => s.meta.inputSchema);
  const dialogOpen = dialog !== undefined || pending !== undefined;
  const dialogRef = useRef(dialogOpen);
  dialogRef.current = dialogOpen;
  // What waits for the first save of a draft that had to be named first (the unsaved-changes
  // question's "Save": the action it guarded).
  const afterNamed = useRef<Pending | undefined>(undefined);

  /**
   * Saves, or asks for a name first when a new draft without problems still has the one it gave
   * itself ("untitled"). True when saved now; false when refused or asking.
   */
  const saveOrName = useCallback(async (): Promise<boolean> => {
    const s = store.getState();
    if (!s.needsName()) return s.save();
    // Problems first: a name would not make it savable (save says what to fix).
    s.analyzeNow();
    if (store.getState().problems.length + store.getState().serverProblems.length > 0) return s.save();
    setDialog('name-first');
    return false;
  }, [store]);

  /** Runs `go` now, or after the user agrees to lose unsaved changes. */
  const guard = useCallback(
    (go: Pending['go'], cancel?: () => void): void => {
      if (store.getState().dirty) setPending({ go, cancel });
      else void go();
    },
    [store],
  );

  // The palette, and what to show: the sidebar's selection (picked here or in another view),
  // unless the drawing has unsaved changes, which stay (the sidebar then shows their workflow).
  useEffect(() => {
    void store.getState().loadTypes();
    const s = store.getState();
    const { selected, selectedVersion } = app.workflows.getState();
    const shown = shownOf(s);
    if (shows(s, selected, selectedVersion)) return;
    if (selected !== undefined && !s.dirty) void s.open(selected, selectedVersion);
    else if (s.dirty) app.workflows.getState().select(shown.name, shown.version);
  }, [store, app]);

  // The canvas moved to another version of its workflow (the version picker, "Back to the
  // latest", a restore, a save): the selection follows, and with it the address.
  useEffect(
    () =>
      store.subscribe((s, prev) => {
        if (s.source === prev.source && s.readOnly === prev.readOnly) return;
        const shown = shownOf(s);
        const w = app.workflows.getState();
        if (shown.name === undefined || w.selected !== shown.name || shows(s, w.selected, w.selectedVersion)) return;
        w.select(shown.name, shown.version);
      }),
    [app, store],
  );

  // Follow the sidebar: a click opens that workflow (guarded); a list reload that moved the
  // selection on its own is put back to what the canvas shows, or opens it on a pristine canvas.
  useEffect(
    () =>
      app.workflows.subscribe((w, prev) => {
        if (w.selected === prev.selected && w.selectedVersion === prev.selectedVersion) return;
        const s = store.getState();
        const shown = shownOf(s);
        if (w.selected === undefined || shows(s, w.selected, w.selectedVersion)) return;
        const pristine = !s.source && !s.dirty && s.nodes.length === 0;
        if (w.items !== prev.items && !pristine) {
          app.workflows.getState().select(shown.name, shown.version);
          return;
        }
        const target = w.selected;
        const version = w.selectedVersion;
        guard(
          () => store.getState().open(target, version),
          () => app.workflows.getState().select(shown.name, shown.version),
        );
      }),
    [app, store, guard],
  );

  // App-menu commands meant for this view (commands.ts asks through the store).
  const request = useDesigner((s) => s.request);
  const handled = useRef(request?.seq);
  useEffect(() => {
    if (!request || handled.current === request.seq) return;
    handled.current = request.seq;
    if (request.kind === 'new')
      guard(() => {
        store.getState().newWorkflow();
        app.workflows.getState().select(undefined);
      });
    else if (request.kind === 'import') void pickFile().then((why) => why !== undefined && store.getState().setMessage('error', why));
    else void exportDrawing();
    // pickFile and exportDrawing read the latest state when called; only a new request matters.
  }, [request]);

  // A workflow-level problem was clicked: show the workflow's settings.
  const focus = useDesigner((s) => s.focus);
  useEffect(() => {
    if (focus?.kind === 'workflow') setWorkflowOpen(true);
  }, [focus]);

  // Keyboard: Delete, Ctrl/Cmd+Z, Shift+Ctrl/Cmd+Z (or Ctrl+Y), Ctrl/Cmd+C/V/D/S/A.
  useEffect(() => {
    const onKey = (e: KeyboardEvent): void => {
      if (dialogRef.current) return;
      const mod = e.ctrlKey || e.metaKey;
      const key = e.key.toLowerCase();
      const s = store.getState();
      if (mod && key === 's') {
        e.preventDefault();
        void saveOrName();
        return;
      }
      if (isTextTarget(e.target)) return;
      if ((key === 'delete' || key === 'backspace') && !mod) {
        e.preventDefault();
        s.deleteSelection();
      } else if (mod && key === 'z' && !e.shiftKey) {
        e.preventDefault();
        s.undo();
      } else if (mod && ((key === 'z' && e.shiftKey) || key === 'y')) {
        e.preventDefault();
        s.redo();
      } else if (mod && key === 'c') {
        s.copySelection();
      } else if (mod && key === 'v') {
        e.preventDefault();
        s.paste();
      } else if (mod && key === 'd') {
        e.preventDefault();
        s.duplicateSelection();
      } else if (mod && key === 'a') {
        e.preventDefault();
        s.selectAll();
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [store, saveOrName]);

  // Closing the window (or reloading) with unsaved changes asks first.
  useEffect(() => {
    if (!dirty) return;
    const onBeforeUnload = (e: BeforeUnloadEvent): void => {
      e.preventDefault();
      e.returnValue = '';
    };
    window.addEventListener('beforeunload', onBeforeUnload);
    return () => window.removeEventListener('beforeunload', onBeforeUnload);
  }, [dirty]);

  /**
   * Imports a file's text: refused at once (with why) when it does not read, else opened after
   * the unsaved-changes question. Returns the refusal.
   */
  const importText = useCallback(
    (text: string, fileName?: string): string | undefined => {
      const readable = readWorkflowFile(text, fileName);
      if (!readable.ok) return readable.message;
      guard(() => {
        const r = store.getState().importText(text, fileName);
        if (!r.ok) {
          store.getState().setMessage('error', r.message);
          return;
        }
        setDialog(undefined);
        app.workflows.getState().select(store.getState().source?.name);
      });
      return undefined;
    },
    [store, app, guard],
  );

  const pickFile = async (): Promise<string | undefined> => {
    let file: { text: string; fileName: string } | undefined;
    if (app.api.desktop) {
      const r = await app.api.desktop('file:openWorkflow');
      if (r.ok && !r.value.canceled) file = { text: r.value.text, fileName: r.value.fileName };
    } else {
      file = await files.pickWorkflowFile();
    }
    if (!file) return undefined;
    return importText(file.text, file.fileName);
  };

  const exportDrawing = async (): Promise<void> => {
    const file = store.getState().exportFile();
    if (app.api.desktop) await app.api.desktop('file:saveWorkflow', { suggestedName: file.fileName, text: file.text });
    else await files.saveFile(file.fileName, file.text);
  };

  const onDragOver = (e: DragEvent): void => {
    if (!e.dataTransfer.types.includes('Files')) return;
    e.preventDefault();
    e.dataTransfer.dropEffect = 'copy';
    if (!dropping) setDropping(true);
  };
  const onDrop = (e: DragEvent): void => {
    setDropping(false);
    const file = e.dataTransfer.files[0];
    if (!file) return;
    e.preventDefault();
    void file.text().then((text) => {
      const why = importText(text, file.name);
      if (why !== undefined) store.getState().setMessage('error', `Cannot import ${file.name}: ${why}`);
    });
  };

  return (
    <div
      className="view designer-view"
      data-testid="view-designer"
      data-dirty={dirty}
      data-workflow={source?.name ?? ''}
      data-version={source?.version ?? ''}
      data-readonly={readOnly}
      onDragOver={onDragOver}
      onDragLeave={(e) => {
        if (e.currentTarget === e.target) setDropping(false);
      }}
      onDrop={onDrop}
    >
      <Toolbar
        onNew={() =>
          guard(() => {
            store.getState().newWorkflow();
            app.workflows.getState().select(undefined);
          })
        }
        onImport={() => setDialog('import')}
        onExport={() => void exportDrawing()}
        onPickVersion={(v) => {
          const s = store.getState();
          const src = s.source;
          if (!src) return;
          guard(() => store.getState().open(src.name, v === src.latest ? undefined : v));
        }}
        onRename={() => setDialog('rename')}
        onDuplicate={() => setDialog('duplicate')}
        onDelete={() => setDialog('delete')}
        onRun={() => setDialog('run')}
        onSave={() => void saveOrName()}
        workflowOpen={workflowOpen}
        fitInset={panelOpen ? PANEL_WIDTH : 0}
        onWorkflow={() => {
          if (!workflowOpen) store.getState().selectOnly('none');
          setWorkflowOpen(!workflowOpen);
        }}
      />
      <Message />
      <div className="rn-body">
        <Palette />
        <div className="rn-centre">
          <ReadOnlyBanner onLatest={() => source && void store.getState().open(source.name)} />
          <div className="rn-stage">
            <Canvas inset={panelOpen ? PANEL_WIDTH : 0} />
            <PropertiesPanel
              showWorkflow={workflowOpen}
              onRename={() => setDialog('rename')}
              onClose={() => {
                setWorkflowOpen(false);
                store.getState().selectOnly('none');
              }}
            />
          </div>
          <ProblemsPanel />
        </div>
      </div>
      {dropping ? (
        <div className="rn-drop-overlay" data-testid="drop-overlay">
          Drop a workflow file (JSON or YAML) to import it
        </div>
      ) : null}

      {dialog === 'import' ? <ImportDialog onClose={() => setDialog(undefined)} onPickFile={pickFile} onImport={(text) => importText(text)} /> : null}
      {dialog === 'run' && source ? (
        <RunDialog
          workflow={source.name}
          version={source.version}
          unsaved={dirty}
          inputSchema={inputSchema}
          nodes={store.getState().nodes.map((n) => ({ id: n.id, type: n.data.def.type }))}
          onClose={() => setDialog(undefined)}
          onStart={async (vars, pins) => {
            const r = await store.getState().run(vars, pins === undefined ? undefined : { pins });
            if (!r.ok) return r.error;
            const started = r.value;
            setDialog(undefined);
            void app.instances.getState().load();
            // Show the instance just started: its address (#/instances/<id>) follows.
            monitor.list.getState().open(started.id);
            app.ui.getState().setView('instances');
            return undefined;
          }}
        />
      ) : null}
      {dialog === 'rename' ? (
        <NameDialog title="Rename the workflow" label="New name" initial={name} submitLabel="Rename" onClose={() => setDialog(undefined)} onSubmit={(n) => store.getState().rename(n)} />
      ) : null}
      {dialog === 'name-first' ? (
        <NameDialog
          title="Name the workflow"
          label="Its name (a new workflow is saved under it)"
          initial=""
          submitLabel="Save"
          testId="save-name-dialog"
          onClose={() => {
            setDialog(undefined);
            afterNamed.current?.cancel?.();
            afterNamed.current = undefined;
          }}
          onSubmit={async (n) => {
            const why = await store.getState().nameAndSave(n);
            if (why !== undefined) return why;
            const next = afterNamed.current;
            afterNamed.current = undefined;
            if (next) {
              if (!store.getState().dirty && store.getState().source) void next.go();
              else next.cancel?.();
            }
            return undefined;
          }}
        />
      ) : null}
      {dialog === 'duplicate' ? (
        <NameDialog
          title="Duplicate the workflow"
          label="Name of the copy (saved at once)"
          initial={`${name}-copy`}
          submitLabel="Duplicate"
          onClose={() => setDialog(undefined)}
          onSubmit={(n) => store.getState().duplicate(n)}
        />
      ) : null}
      {dialog === 'delete' ? (
        <ConfirmDialog
          title={source ? `Delete ${source.name}?` : 'Discard this draft?'}
          message={
            source
              ? 'Every version leaves the list and can no longer be started. Refused while an instance is live; finished instances keep their history.'
              : 'The drawing is not saved anywhere; it is lost.'
          }
          confirmLabel={source ? 'Delete' : 'Discard'}
          onClose={() => setDialog(undefined)}
          onConfirm={() => void store.getState().deleteWorkflow()}
        />
      ) : null}
      {pending ? (
        <UnsavedDialog
          name={name}
          onClose={() => {
            pending.cancel?.();
            setPending(undefined);
          }}
          onDiscard={() => {
            setPending(undefined);
            void pending.go();
          }}
          onSave={() => {
            setPending(undefined);
            if (store.getState().needsName()) {
              afterNamed.current = pending;
              setDialog('name-first');
              return;
            }
            void store
              .getState()
              .save()
              .then((saved) => {
                if (saved) return pending.go();
                pending.cancel?.();
                return undefined;
              });
          }}
        />
      ) : null}
    </div>
  );
}

/** The Designer view; `files` is how a browser picks and saves files. */
export function DesignerView({ files }: { files: FileAccess }) {
  const app = useStores();
  const store = designerStoreFor(app);
  return (
    <DesignerStoreContext.Provider value={store}>
      <ReactFlowProvider>
        <DnDProvider>
          <DesignerBody files={files} />
        </DnDProvider>
      </ReactFlowProvider>
    </DesignerStoreContext.Provider>
  );
}
