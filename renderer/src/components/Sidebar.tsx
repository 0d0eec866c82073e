/**
 * The workflow sidebar: every workflow with its latest version and live-instance count
 * (`workflow-list`, items `workflow-item-<name>`), a search box that filters them by name
 * (`workflow-search`; `workflow-search-empty` when none matches), plus Import and Export.
 */
import { useState } from 'react';
import { importWorkflow, exportWorkflow, type FileAccess } from '../commands';
import { useStores, useUi, useWorkflows } from '../hooks';

/** The sidebar; `files` is how a browser picks and saves files. */
export function Sidebar({ files }: { files: FileAccess }) {
  const stores = useStores();
  const items = useWorkflows((s) => s.items);
  const status = useWorkflows((s) => s.status);
  const selected = useWorkflows((s) => s.selected);
  const select = useWorkflows((s) => s.select);
  // The Designer has its own Import and Export (of the drawing, saved or not): one of each on screen.
  const designer = useUi((s) => s.view === 'designer');
  const [query, setQuery] = useState('');
  const needle = query.trim().toLowerCase();
  const shown = needle === '' ? items : items.filter((w) => w.name.toLowerCase().includes(needle));
  return (
    <aside className="sidebar" aria-label="Workflows">
      <div className="sidebar-header">
        <h2>Workflows</h2>
        {designer ? null : (
          <div className="sidebar-actions">
            <button
              type="button"
              data-testid="refresh-workflows"
              title="Reload the workflows (and the instance counts)"
              onClick={() => {
                void stores.workflows.getState().load();
                void stores.instances.getState().load();
              }}
            >
              ↻
            </button>
            <button type="button" data-testid="import-workflow" title="Import a workflow file (JSON or YAML)" onClick={() => void importWorkflow(stores, files)}>
              Import
            </button>
            <button type="button" data-testid="export-workflow" title="Export the selected workflow as JSON" disabled={selected === undefined} onClick={() => void exportWorkflow(stores, files)}>
              Export
            </button>
          </div>
        )}
      </div>
      {items.length > 0 ? (
        <input
          type="search"
          className="workflow-search"
          data-testid="workflow-search"
          aria-label="Search workflows by name"
          placeholder="Search workflows"
          value={query}
          onChange={(e) => setQuery(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === 'Escape') setQuery('');
          }}
        />
      ) : null}
      <ul className="workflow-list" data-testid="workflow-list" data-status={status}>
        {shown.map((w) => (
          <li key={w.name}>
            <button
              type="button"
              className={w.name === selected ? 'workflow-item selected' : 'workflow-item'}
              data-testid={`workflow-item-${w.name}`}
              aria-pressed={w.name === selected}
              onClick={() => select(w.name)}
            >
              <span className="workflow-name">{w.name}</span>
              <span className="workflow-meta">
                v{w.latestVersion}
                {w.liveInstances > 0 ? ` · ${w.liveInstances} live` : ''}
              </span>
            </button>
          </li>
        ))}
      </ul>
      {items.length > 0 && shown.length === 0 ? (
        <p className="empty" data-testid="workflow-search-empty">
          No workflow name contains “{query.trim()}”.
        </p>
      ) : null}
      {status === 'ready' && items.length === 0 ? (
        <p className="empty" data-testid="workflow-list-empty">
          No workflows yet. Import one, or deploy with <code>runnel deploy</code>.
        </p>
      ) : null}
      {status === 'loading' ? <p className="empty">Loading…</p> : null}
    </aside>
  );
}
