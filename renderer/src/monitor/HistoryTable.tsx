/**
 * The instance's history, oldest first: when, what, which node and attempt, who, and the details
 * (errors, decisions, and for manual actions the variables diff they recorded).
 *
 * Test ids: `history-table`, `history-row-<eventId>` (`data-type`), `history-actor-<eventId>`,
 * `history-diff-<eventId>`, `history-event-<eventId>`, `history-paused-<eventId>`,
 * `history-unpaused-<eventId>`, `history-only-actions`.
 */
import { useState } from 'react';
import type { HistoryEvent } from '../../../engine/api/contract';
import { asDiff } from './diff';
import { DiffView } from './DiffView';
import { errorText, formatDuration, formatTimestamp, previewJson } from './format';

/** Event types a person causes (or that need one): the "actions only" view keeps these. */
const PEOPLE: ReadonlySet<string> = new Set([
  'instance.created',
  'instance.resumed',
  'instance.retried',
  'instance.cancel_requested',
  'instance.paused',
  'instance.unpaused',
  'approval.requested',
  'approval.decided',
  'node.skipped_by_hand',
  'compensation.skipped',
  'instance.suspended',
  'event.received',
]);

/** A history entry's `data` fields read leniently (the engine writes them; old rows may lack some). */
function text(v: unknown): string {
  return typeof v === 'string' ? v : v === null || v === undefined ? '' : String(v);
}

function Details({ e }: { e: HistoryEvent }) {
  const d = (typeof e.data === 'object' && e.data !== null ? e.data : {}) as Record<string, unknown>;
  switch (e.type) {
    case 'instance.resumed':
      return (
        <div>
          <span>
            <strong>{String(d.action)}</strong> ({String(d.reason)})
            {'result' in d ? (
              <>
                {' '}
                with result <code>{previewJson(d.result, 120)}</code>
              </>
            ) : null}
          </span>
          <DiffView diff={asDiff(d.diff)} testId={`history-diff-${e.id}`} />
        </div>
      );
    case 'node.failed':
    case 'compensation.failed':
      return (
        <span className="error-text">
          {errorText(d.error)}
          {d.willRetry === true ? (
            <span className="muted">
              {' '}
              · retry at {formatTimestamp(typeof d.nextAttemptAt === 'number' ? d.nextAttemptAt : null)}
            </span>
          ) : null}
          {typeof d.durationMs === 'number' ? (
            <span className="muted"> · after {formatDuration(d.durationMs)}</span>
          ) : null}
        </span>
      );
    case 'instance.suspended':
      return (
        <span className="error-text">
          {String(d.reason)} after {String(d.attempts)} attempt(s): {errorText(d.error)}
        </span>
      );
    case 'instance.paused':
      return <span data-testid={`history-paused-${e.id}`}>paused: starts no node until unpaused</span>;
    case 'instance.unpaused':
      return (
        <span data-testid={`history-unpaused-${e.id}`}>
          unpaused{typeof d.pausedMs === 'number' ? ` after ${formatDuration(d.pausedMs)} paused` : ''}
        </span>
      );
    case 'node.completed':
      return typeof d.durationMs === 'number' ? (
        <span className="muted">in {formatDuration(d.durationMs)}</span>
      ) : null;
    case 'event.received':
      return (
        <span data-testid={`history-event-${e.id}`} data-consumed-by={text(d.consumedBy)}>
          event <strong>{text(d.name)}</strong>
          {typeof d.key === 'string' ? (
            <>
              {' '}
              key <code>{d.key}</code>
            </>
          ) : null}{' '}
          {typeof d.consumedBy === 'string' ? (
            <>
              → taken by <code>{d.consumedBy}</code>
            </>
          ) : (
            <span className="muted">→ kept (no node waited for it)</span>
          )}
          {d.data !== undefined && d.data !== null ? (
            <>
              {' '}
              data <code>{previewJson(d.data, 100)}</code>
            </>
          ) : null}
        </span>
      );
    case 'event.waiting':
      return (
        <span>
          waits for event <strong>{text(d.name)}</strong>
          {typeof d.key === 'string' ? (
            <>
              {' '}
              key <code>{d.key}</code>
            </>
          ) : null}
          {typeof d.timeoutAt === 'number' ? <span className="muted"> · times out {formatTimestamp(d.timeoutAt)}</span> : null}
        </span>
      );
    case 'children.started': {
      const items = typeof d.items === 'number' ? d.items : 0;
      return (
        <span>
          {items === 1 ? 'a child instance' : `${items} child instances`} of <strong>{text(d.workflow)}</strong>
          {typeof d.version === 'number' ? ` v${d.version}` : ''}
          {items > 1 && typeof d.maxConcurrency === 'number' ? <span className="muted"> · at most {d.maxConcurrency} at once</span> : null}
        </span>
      );
    }
    case 'child.failed':
      return (
        <span className="error-text">
          child <code>#{text(d.childId)}</code>
          {typeof d.index === 'number' ? ` (item ${d.index})` : ''} ended {text(d.status)}
        </span>
      );
    case 'approval.decided':
      return (
        <span>
          {d.approved === true ? 'approved' : 'rejected'}
          {typeof d.comment === 'string' ? `: “${d.comment}”` : ''}
          {d.data !== undefined ? (
            <>
              {' '}
              data <code>{previewJson(d.data, 100)}</code>
            </>
          ) : null}
        </span>
      );
    default:
      return e.data === undefined ? null : <code className="muted">{previewJson(e.data, 160)}</code>;
  }
}

/** See the module comment. */
export function HistoryTable({
  history,
  createdAt,
}: {
  history: readonly HistoryEvent[];
  createdAt: number;
}) {
  const [onlyActions, setOnlyActions] = useState(false);
  const shown = onlyActions ? history.filter((e) => PEOPLE.has(e.type) || e.actor !== null) : history;
  return (
    <div className="history">
      <label className="inline-field">
        <input
          type="checkbox"
          data-testid="history-only-actions"
          checked={onlyActions}
          onChange={(e) => setOnlyActions(e.target.checked)}
        />
        only actions by people
      </label>
      <table className="history-table" data-testid="history-table">
        <thead>
          <tr>
            <th>At</th>
            <th>+</th>
            <th>Event</th>
            <th>Node</th>
            <th>Try</th>
            <th>Who</th>
            <th>Details</th>
          </tr>
        </thead>
        <tbody>
          {shown.map((e) => (
            <tr
              key={e.id}
              data-testid={`history-row-${e.id}`}
              data-type={e.type}
              className={e.actor !== null ? 'by-person' : ''}
            >
              <td className="nowrap" title={formatTimestamp(e.at)}>
                {formatTimestamp(e.at).slice(11)}
              </td>
              <td className="nowrap muted">+{formatDuration(e.at - createdAt)}</td>
              <td className="nowrap">
                <code>{e.type}</code>
              </td>
              <td className="mono">{e.nodeId ?? ''}</td>
              <td className="num">{e.attempt ?? ''}</td>
              <td data-testid={`history-actor-${e.id}`}>{e.actor ?? ''}</td>
              <td className="details">
                <Details e={e} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
