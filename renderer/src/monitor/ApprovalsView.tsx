/**
 * The Approvals inbox: every approval waiting for a person, the longest-waiting first, each with
 * its prompt, assignee, how long it has waited and when it times out, and the decision form
 * (approve or reject, optional data and comment). Live: new requests appear, decided ones leave.
 *
 * Test ids: `view-approvals`, `approvals-count`, `approvals-empty`,
 * `approval-item-<instanceId>-<nodeId>`, `approval-open-<instanceId>-<nodeId>`, plus the form's.
 */
import './monitor.css';
import { useUi } from '../hooks';
import { ActorField } from './ActorField';
import { ApprovalForm } from './ApprovalForm';
import { formatCount, formatDuration, formatRelative, formatTimestamp } from './format';
import { useApprovals, useList } from './hooks';
import { useNow } from './useNow';

/** See the module comment. */
export function ApprovalsView() {
  const items = useApprovals((s) => s.items);
  const total = useApprovals((s) => s.total);
  const status = useApprovals((s) => s.status);
  const decide = useApprovals((s) => s.decide);
  const load = useApprovals((s) => s.load);
  const open = useList((s) => s.open);
  const setView = useUi((s) => s.setView);
  const now = useNow(1000);
  return (
    <div className="view approvals-view monitor-view" data-testid="view-approvals">
      <div className="monitor-head">
        <h2>
          Approvals{' '}
          <span className="count-badge" data-testid="approvals-count" data-count={total}>
            {formatCount(total)}
          </span>
        </h2>
        <span className="muted">waiting for a person, longest first</span>
        <span className="spacer" />
        <ActorField />
        <button type="button" onClick={() => void load()} data-testid="approvals-refresh">
          ↻ Refresh
        </button>
      </div>
      {status === 'ready' && items.length === 0 ? (
        <p className="empty" data-testid="approvals-empty">
          Nothing waits for a decision.
        </p>
      ) : null}
      <ul className="approval-list">
        {items.map((a) => {
          const suffix = `${a.instanceId}-${a.nodeId}`;
          return (
            <li key={suffix} className="approval-card" data-testid={`approval-item-${suffix}`}>
              <div className="approval-meta">
                <button
                  type="button"
                  className="link"
                  data-testid={`approval-open-${suffix}`}
                  onClick={() => {
                    open(a.instanceId);
                    setView('instances');
                  }}
                >
                  #{a.instanceId}
                </button>
                <span>
                  {a.workflow} <span className="muted">v{a.workflowVersion}</span>
                </span>
                {a.businessKey ? <span className="muted">key {a.businessKey}</span> : null}
                <span className="mono">{a.nodeName ?? a.nodeId}</span>
                <span className="spacer" />
                <span className="muted" title={formatTimestamp(a.since)}>
                  waiting {a.since !== null ? formatDuration(now - a.since) : '—'}
                </span>
                {a.timeoutAt !== null ? (
                  <span className="muted" title={formatTimestamp(a.timeoutAt)}>
                    · times out {formatRelative(a.timeoutAt, now)}
                  </span>
                ) : null}
              </div>
              <ApprovalForm
                target={a}
                onDecide={(approved, data, comment) => decide(a, approved, data, comment)}
              />
            </li>
          );
        })}
      </ul>
      {total > items.length ? (
        <p className="muted">
          Showing the {items.length} longest-waiting of {formatCount(total)}.
        </p>
      ) : null}
    </div>
  );
}
