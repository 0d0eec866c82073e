/**
 * The instance table: a windowed list over the loaded server-side pages (the next page loads as
 * the end comes into view), with the "why is it stuck" columns: current node(s), attempt n of m,
 * next retry, what it waits for (and since when), the suspension or failure reason.
 *
 * Test ids: `instances-table` (`data-status`, `data-loads`), `instances-rows` (`data-rows`,
 * `data-rendered`), `instance-row-<id>` (`data-status`),
 * `instance-status-<id>`, `instance-current-<id>`, `instance-attempt-<id>`,
 * `instance-next-retry-<id>`, `instance-waiting-<id>`, `instance-reason-<id>`,
 * `instances-summary` (`data-load-ms`, `data-loaded`), `instances-empty`, `instances-load-more`.
 */
import type { InstanceListItem } from '../../../engine/api/contract';
import {
  errorText,
  formatCount,
  formatDuration,
  formatRelative,
  formatTime,
  formatTimestamp,
} from './format';
import { useList, useStatusCounts } from './hooks';
import { useNow } from './useNow';
import { VirtualList } from './VirtualList';

/** Row height, px (the windowing needs it fixed). */
export const ROW_HEIGHT = 34;

const WAITING_TEXT: Record<string, string> = {
  timer: 'timer',
  approval: 'approval',
  retry: 'retry',
  person: 'person',
  event: 'event',
  children: 'child instances',
};

function Row({
  row,
  now,
  onOpen,
  stale,
}: {
  row: InstanceListItem;
  now: number;
  onOpen: (id: number) => void;
  stale: boolean;
}) {
  const status = row.status.toLowerCase();
  const live = row.endedAt === null;
  const start = row.startedAt ?? row.createdAt;
  const reason = row.reason ?? (row.error !== undefined ? errorText(row.error) : '');
  return (
    <div
      role="row"
      tabIndex={0}
      className={`itable-row row-${status}${stale ? ' row-stale' : ''}`}
      title={stale ? 'Its status changed and no longer matches the filter; Refresh to drop it' : undefined}
      data-testid={`instance-row-${row.id}`}
      data-status={row.status}
      onClick={() => onOpen(row.id)}
      onKeyDown={(e) => {
        if (e.key === 'Enter') onOpen(row.id);
      }}
    >
      <span role="cell" className="num">
        {row.id}
      </span>
      <span
        role="cell"
        className="ellipsis"
        title={row.businessKey ? `${row.workflow} · ${row.businessKey}` : row.workflow}
      >
        {row.workflow}
        {row.workflowVersion > 0 ? <span className="muted"> v{row.workflowVersion}</span> : null}
        {row.businessKey ? <span className="muted key"> · {row.businessKey}</span> : null}
      </span>
      <span role="cell">
        <span className={`status status-${status}`} data-testid={`instance-status-${row.id}`}>
          {row.status}
        </span>
      </span>
      <span role="cell" title={formatTimestamp(row.createdAt)}>
        {formatTime(row.createdAt, now)}
      </span>
      <span role="cell" className="num">
        {formatDuration((row.endedAt ?? now) - start)}
        {live && row.status !== 'PENDING' ? <span className="live-dot" title="still going" /> : null}
      </span>
      <span
        role="cell"
        className="ellipsis mono"
        data-testid={`instance-current-${row.id}`}
        title={row.currentNodes.join(', ')}
      >
        {row.currentNodes.length > 0 ? row.currentNodes.join(', ') : <span className="muted">—</span>}
      </span>
      <span role="cell" className="num" data-testid={`instance-attempt-${row.id}`}>
        {row.attempt !== null && row.maxAttempts !== null && row.attempt > 0 ? (
          <span className={row.attempt > 1 ? 'attempt warn' : 'attempt'}>
            {row.attempt}/{row.maxAttempts}
          </span>
        ) : (
          <span className="muted">—</span>
        )}
      </span>
      <span
        role="cell"
        data-testid={`instance-next-retry-${row.id}`}
        title={formatTimestamp(row.nextRetryAt)}
      >
        {row.nextRetryAt !== null ? formatRelative(row.nextRetryAt, now) : <span className="muted">—</span>}
      </span>
      <span
        role="cell"
        data-testid={`instance-waiting-${row.id}`}
        title={row.waitingSince !== null ? `since ${formatTimestamp(row.waitingSince)}` : ''}
      >
        {row.waitingFor !== null ? (
          <>
            <span className={`wait wait-${row.waitingFor}`}>{WAITING_TEXT[row.waitingFor]}</span>
            {row.waitingSince !== null ? (
              <span className="muted"> {formatDuration(now - row.waitingSince)}</span>
            ) : null}
          </>
        ) : (
          <span className="muted">—</span>
        )}
      </span>
      <span role="cell" className="ellipsis reason" data-testid={`instance-reason-${row.id}`} title={reason}>
        {reason || <span className="muted">—</span>}
      </span>
    </div>
  );
}

/** See the module comment. */
export function InstanceTable() {
  const items = useList((s) => s.items);
  const status = useList((s) => s.status);
  const counts = useStatusCounts();
  const filterStatuses = useList((s) => s.filter.status);
  const nextBeforeId = useList((s) => s.nextBeforeId);
  const loadingMore = useList((s) => s.loadingMore);
  const lastLoadMs = useList((s) => s.lastLoadMs);
  const loads = useList((s) => s.loads);
  const loadMore = useList((s) => s.loadMore);
  const open = useList((s) => s.open);
  const scrollTop = useList((s) => s.scrollTop);
  const setScrollTop = useList((s) => s.setScrollTop);
  const now = useNow(1000);
  const matching =
    filterStatuses.length === 0
      ? Object.values(counts).reduce((a, b) => a + b, 0)
      : filterStatuses.reduce((a, s) => a + (counts[s] ?? 0), 0);
  return (
    <div
      className="itable"
      role="table"
      aria-label="Instances"
      aria-rowcount={matching}
      data-testid="instances-table"
      data-status={status}
      data-loads={loads}
    >
      <div role="row" className="itable-row itable-head">
        <span role="columnheader">ID</span>
        <span role="columnheader">Workflow</span>
        <span role="columnheader">Status</span>
        <span role="columnheader">Started</span>
        <span role="columnheader">Duration</span>
        <span role="columnheader">Current node</span>
        <span role="columnheader" title="Attempt n of m of the current node">
          Attempt
        </span>
        <span role="columnheader">Next retry</span>
        <span role="columnheader">Waiting for</span>
        <span role="columnheader">Reason</span>
      </div>
      {status === 'ready' && items.length === 0 ? (
        <p className="empty" data-testid="instances-empty">
          No instances match. Start one above, or clear the filter.
        </p>
      ) : (
        <VirtualList
          testId="instances-rows"
          rowCount={items.length}
          rowHeight={ROW_HEIGHT}
          initialScrollTop={scrollTop}
          onScroll={setScrollTop}
          onNearEnd={nextBeforeId === null ? undefined : () => void loadMore()}
          renderRow={(i) => {
            const row = items[i];
            return row ? (
              <Row
                key={row.id}
                row={row}
                now={now}
                onOpen={open}
                stale={filterStatuses.length > 0 && !(filterStatuses as readonly string[]).includes(row.status)}
              />
            ) : null;
          }}
        />
      )}
      <div
        className="itable-foot"
        data-testid="instances-summary"
        data-load-ms={lastLoadMs ?? ''}
        data-loaded={items.length}
      >
        <span>
          {formatCount(items.length)} of {formatCount(matching)} loaded
          {nextBeforeId !== null ? (
            <button
              type="button"
              className="link"
              data-testid="instances-load-more"
              disabled={loadingMore}
              onClick={() => void loadMore()}
            >
              {loadingMore ? 'loading…' : 'load more'}
            </button>
          ) : null}
        </span>
        {lastLoadMs !== null ? <span className="muted">first page in {lastLoadMs} ms</span> : null}
      </div>
    </div>
  );
}
