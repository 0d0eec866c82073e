/**
 * The Instances view (issue 3's minimal monitor; issue 5 brings filters, paging, detail and
 * actions): start an instance of the selected workflow with JSON variables, and a live table of
 * the newest instances whose status cells change as events arrive.
 *
 * Test ids: `start-vars`, `start-instance`, `start-vars-error`, `instances-table`,
 * `instance-row-<id>`, `instance-status-<id>`, `refresh-instances`.
 */
import { useState } from 'react';
import { useInstances, useWorkflows } from '../hooks';
import { parseVariables } from '../variables';

function formatTime(ms: number | null): string {
  return ms === null ? '—' : new Date(ms).toLocaleTimeString();
}

function formatDuration(start: number | null, end: number | null): string {
  if (start === null || end === null) return '—';
  const ms = Math.max(0, end - start);
  return ms < 1000 ? `${ms} ms` : ms < 60_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 60_000)} min`;
}

function StartPanel() {
  const selected = useWorkflows((s) => s.selected);
  const start = useInstances((s) => s.start);
  const [vars, setVars] = useState('{}');
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const onStart = async (): Promise<void> => {
    if (selected === undefined) return;
    const parsed = parseVariables(vars);
    if (!parsed.ok) {
      setError(parsed.message);
      return;
    }
    setError(undefined);
    setBusy(true);
    try {
      await start(selected, parsed.value);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section className="start-panel" aria-label="Start an instance">
      <div className="start-row">
        <label htmlFor="start-vars">
          Variables for <strong data-testid="selected-workflow">{selected ?? 'no workflow selected'}</strong> (JSON)
        </label>
        <button type="button" className="primary" data-testid="start-instance" disabled={selected === undefined || busy} onClick={() => void onStart()}>
          Start
        </button>
      </div>
      <textarea id="start-vars" data-testid="start-vars" spellCheck={false} rows={3} value={vars} onChange={(e) => setVars(e.target.value)} />
      {error !== undefined ? (
        <p className="field-error" role="alert" data-testid="start-vars-error">
          {error}
        </p>
      ) : null}
    </section>
  );
}

/** The Instances view. */
export function InstancesView() {
  const items = useInstances((s) => s.items);
  const status = useInstances((s) => s.status);
  const load = useInstances((s) => s.load);
  return (
    <div className="view instances-view" data-testid="view-instances">
      <StartPanel />
      <div className="table-header">
        <h2>Instances</h2>
        <button type="button" data-testid="refresh-instances" onClick={() => void load()}>
          Refresh
        </button>
      </div>
      <table className="instances-table" data-testid="instances-table" data-status={status}>
        <thead>
          <tr>
            <th scope="col">ID</th>
            <th scope="col">Workflow</th>
            <th scope="col">Status</th>
            <th scope="col">Business key</th>
            <th scope="col">Created</th>
            <th scope="col">Duration</th>
          </tr>
        </thead>
        <tbody>
          {items.map((row) => (
            <tr key={row.id} data-testid={`instance-row-${row.id}`}>
              <td className="num">{row.id}</td>
              <td>
                {row.workflow}
                {row.workflowVersion > 0 ? <span className="muted"> v{row.workflowVersion}</span> : null}
              </td>
              <td>
                <span className={`status status-${row.status.toLowerCase()}`} data-testid={`instance-status-${row.id}`}>
                  {row.status}
                </span>
              </td>
              <td>{row.businessKey ?? <span className="muted">—</span>}</td>
              <td>{formatTime(row.createdAt)}</td>
              <td>{formatDuration(row.startedAt ?? row.createdAt, row.endedAt)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {status === 'ready' && items.length === 0 ? (
        <p className="empty" data-testid="instances-empty">
          No instances yet. Select a workflow and press Start.
        </p>
      ) : null}
    </div>
  );
}
