/**
 * The designer's toolbar: file actions, the workflow's name with its unsaved marker and version
 * picker, edit actions, and Save / Run.
 *
 * Test ids: `new-workflow`, `import-workflow`, `export-workflow`, `workflow-title`,
 * `unsaved-marker`, `version-picker`, `undo`, `redo`, `auto-layout`, `fit-view`,
 * `workflow-settings`, `rename-workflow`, `duplicate-workflow`, `delete-workflow`, `save-workflow`,
 * `run-workflow`.
 */
import { useReactFlow, type FitViewOptions } from '@xyflow/react';
import { useStore } from 'zustand';
import { fitOptions } from './Canvas';
import { useDesigner, useDesignerStore } from './context';

/** What the toolbar's buttons open or do outside the store. */
export interface ToolbarActions {
  onNew(): void;
  onImport(): void;
  onExport(): void;
  onPickVersion(version: number): void;
  onRename(): void;
  onDuplicate(): void;
  onDelete(): void;
  onRun(): void;
  /** Saves (asking for a name first when the draft still has the one it gave itself). */
  onSave(): void;
  /** Whether the workflow's settings are shown. */
  workflowOpen: boolean;
  /** Shows or hides the workflow's settings. */
  onWorkflow(): void;
  /** Px on the canvas's right the properties drawer covers. */
  fitInset: number;
}

const isMac = typeof navigator !== 'undefined' && /Mac|iPhone|iPad/u.test(navigator.platform);
const MOD = isMac ? '⌘' : 'Ctrl+';

function formatShort(ms: number): string {
  return new Date(ms).toLocaleString(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
}

function formatDate(ms: number): string {
  return new Date(ms).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/** The SVG paths (16 × 16, stroked) of the file and workflow actions' icons. */
const ACTION_ICONS = {
  import: 'M8 2v8M5 7l3 3 3-3M3 11v3h10v-3',
  export: 'M8 10V2M5 5l3-3 3 3M3 11v3h10v-3',
  rename: 'M10.5 2.5l3 3L6 13H3v-3z',
  duplicate: 'M5.5 5.5h8v8h-8zM3 10.5V2.5h8',
  delete: 'M2.5 4h11M6 4V2.5h4V4M4 4l.8 9.5h6.4L12 4',
} as const;

/**
 * A toolbar button's content: its label, and an icon that stands in for it where the window is
 * narrow (designer.css hides one or the other), so the workflow's name keeps its room at 1280 px.
 * The button's accessible name stays the label (aria-label).
 */
function Labelled({ icon, label }: { icon: keyof typeof ACTION_ICONS; label: string }) {
  return (
    <>
      <svg className="rn-btn-icon" width="16" height="16" viewBox="0 0 16 16" aria-hidden="true">
        <path d={ACTION_ICONS[icon]} fill="none" stroke="currentColor" strokeWidth="1.4" strokeLinecap="round" strokeLinejoin="round" />
      </svg>
      <span className="rn-btn-label">{label}</span>
    </>
  );
}

/** The toolbar. */
export function Toolbar(actions: ToolbarActions) {
  const store = useDesignerStore();
  const name = useDesigner((s) => s.meta.name);
  const source = useDesigner((s) => s.source);
  const versions = useDesigner((s) => s.versions);
  const dirty = useDesigner((s) => s.dirty);
  const readOnly = useDesigner((s) => s.readOnly);
  const busy = useDesigner((s) => s.busy);
  const problemCount = useDesigner((s) => s.problems.length);
  const nodeCount = useDesigner((s) => s.nodes.length);
  const canUndo = useStore(store.temporal, (t) => t.pastStates.length > 0);
  const canRedo = useStore(store.temporal, (t) => t.futureStates.length > 0);
  const { fitView } = useReactFlow();
  const s = store.getState();
  return (
    <div className="rn-toolbar" role="toolbar" aria-label="Designer">
      <div className="rn-tool-group">
        <button type="button" data-testid="new-workflow" title="New workflow" onClick={actions.onNew}>
          New
        </button>
        <button type="button" className="compact" data-testid="import-workflow" aria-label="Import" title="Import a JSON or YAML file (or drop one on the designer)" onClick={actions.onImport}>
          <Labelled icon="import" label="Import" />
        </button>
        <button type="button" className="compact" data-testid="export-workflow" aria-label="Export" title="Export the drawing as JSON (DSL with positions)" onClick={actions.onExport}>
          <Labelled icon="export" label="Export" />
        </button>
      </div>
      <div className="rn-tool-title">
        <span className="rn-workflow-name" data-testid="workflow-title" title={name}>
          {name === '' ? '(no name)' : name}
        </span>
        {dirty ? (
          // A draft never saved says "not saved yet" beside it: the dot alone leaves its name the room.
          <span className="rn-unsaved" data-testid="unsaved-marker" title="Unsaved changes" aria-label="Unsaved changes">
            {source ? '● unsaved' : '●'}
          </span>
        ) : null}
        {source ? (
          <select className="rn-version-picker" data-testid="version-picker" aria-label="Version" value={source.version} onChange={(e) => actions.onPickVersion(Number(e.target.value))}>
            {(versions.length > 0 ? versions : [{ version: source.version, createdAt: 0 }]).map((v) => (
              <option key={v.version} value={v.version} title={v.createdAt > 0 ? `Saved ${formatDate(v.createdAt)}` : undefined}>
                {`v${v.version}${v.version === source.latest ? ' · latest' : v.createdAt > 0 ? ` · ${formatShort(v.createdAt)}` : ''}`}
              </option>
            ))}
          </select>
        ) : (
          <span className="rn-draft-tag" data-testid="draft-tag">
            not saved yet
          </span>
        )}
      </div>
      <div className="rn-tool-group">
        <button type="button" className="icon" data-testid="undo" title={`Undo (${MOD}Z)`} aria-label="Undo" disabled={readOnly || !canUndo} onClick={s.undo}>
          ↶
        </button>
        <button type="button" className="icon" data-testid="redo" title={`Redo (${isMac ? '⇧⌘Z' : 'Ctrl+Shift+Z'})`} aria-label="Redo" disabled={readOnly || !canRedo} onClick={s.redo}>
          ↷
        </button>
        <button type="button" data-testid="auto-layout" title="Arrange the nodes left to right (one undo step)" disabled={readOnly || nodeCount === 0} onClick={s.layout}>
          Auto-layout
        </button>
        <button type="button" data-testid="fit-view" title="Fit the drawing into view" onClick={() => void fitView({ ...(fitOptions(actions.fitInset) as FitViewOptions), duration: 200 })}>
          Fit
        </button>
      </div>
      <div className="rn-tool-group">
        <button type="button" data-testid="workflow-settings" title="The workflow's own settings: name, description, deadline, default retry, input variables" aria-pressed={actions.workflowOpen} className={actions.workflowOpen ? 'pressed' : undefined} onClick={actions.onWorkflow}>
          Workflow
        </button>
        <button type="button" className="compact" data-testid="rename-workflow" aria-label="Rename" title="Rename the workflow" disabled={readOnly || busy} onClick={actions.onRename}>
          <Labelled icon="rename" label="Rename" />
        </button>
        <button type="button" className="compact" data-testid="duplicate-workflow" aria-label="Duplicate" title="Duplicate: save a copy under another name" disabled={busy || nodeCount === 0} onClick={actions.onDuplicate}>
          <Labelled icon="duplicate" label="Duplicate" />
        </button>
        <button
          type="button"
          className="compact"
          data-testid="delete-workflow"
          aria-label="Delete"
          title={source ? 'Delete the workflow (refused while instances are live)' : 'Discard this draft'}
          disabled={busy}
          onClick={actions.onDelete}
        >
          <Labelled icon="delete" label="Delete" />
        </button>
      </div>
      <div className="rn-tool-group rn-tool-end">
        <button
          type="button"
          className="primary"
          data-testid="save-workflow"
          title={problemCount > 0 ? `Fix ${problemCount} problem${problemCount === 1 ? '' : 's'} first (${MOD}S)` : `Save as a new version (${MOD}S)`}
          disabled={readOnly || busy}
          onClick={actions.onSave}
        >
          Save
        </button>
        <button type="button" className="run" data-testid="run-workflow" title={source ? `Start an instance of version ${source.version}` : 'Save the workflow first'} disabled={!source || busy} onClick={actions.onRun}>
          ▶ Run
        </button>
      </div>
    </div>
  );
}
