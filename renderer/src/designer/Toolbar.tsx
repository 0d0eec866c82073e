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
        <button type="button" data-testid="import-workflow" title="Import a JSON or YAML file (or drop one on the designer)" onClick={actions.onImport}>
          Import
        </button>
        <button type="button" data-testid="export-workflow" title="Export the drawing as JSON (DSL with positions)" onClick={actions.onExport}>
          Export
        </button>
      </div>
      <div className="rn-tool-title">
        <span className="rn-workflow-name" data-testid="workflow-title" title={name}>
          {name === '' ? '(no name)' : name}
        </span>
        {dirty ? (
          <span className="rn-unsaved" data-testid="unsaved-marker" title="Unsaved changes">
            ● unsaved
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
        <button type="button" data-testid="rename-workflow" title="Rename the workflow" disabled={readOnly || busy} onClick={actions.onRename}>
          Rename
        </button>
        <button type="button" data-testid="duplicate-workflow" title="Save a copy under another name" disabled={busy || nodeCount === 0} onClick={actions.onDuplicate}>
          Duplicate
        </button>
        <button type="button" data-testid="delete-workflow" title={source ? 'Delete the workflow (refused while instances are live)' : 'Discard this draft'} disabled={busy} onClick={actions.onDelete}>
          Delete
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
