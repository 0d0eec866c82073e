/**
 * The instance table: a windowed list over the loaded server-side pages (the next page loads as
 * the end comes into view), with the "why is it stuck" columns: current node(s), attempt n of m,
 * next retry, what it waits for (and since when), the suspension or failure reason.
 *
 * Test ids: `instances-table` (`data-status`, `data-loads`), `instances-rows` (`data-rows`,
 * `data-rendered`), `instance-row-<id>` (`data-status`),
 * `instance-status-<id>`, `instance-paused-<id>` (the PAUSED badge, while paused), `instance-current-<id>`, `instance-attempt-<id>`,
 * `instance-next-retry-<id>`, `instance-waiting-<id>`, `instance-reason-<id>`,
 * `instances-summary` (`data-load-ms`, `data-loaded`), `instances-empty`, `instances-load-more`,
 * `sort-<column>` (the header buttons; their `columnheader` carries `aria-sort`),
 * `instances-sort-note` (shown when a column sorts only the loaded rows).
 *
 * A click on a header sorts by that column, a second click the other way (monitor/sort.ts): the
 * id and the start time on the engine, over every matching instance; the other columns over the
 * rows loaded so far (the next page then loads on "load more" only, not on scroll, so rows do not
 * jump under the pointer).
 */
import { useMemo } from 'react';
import type { InstanceListItem } from '../../../engine/api/contract';
import {
  errorText,
  formatCount,
  formatDuration,
  formatDurationShort,
  formatRelative,
  formatRelativeShort,
  formatTime,
  formatTimestamp,
} from './format';
import { useList, useStatusCounts } from './hooks';
import { nextSort, sortedByEngine, sortRows, type SortColumn } from './sort';
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
        data-testid={`instance-workflow-${row.id}`}
        title={`${row.workflow} v${row.workflowVersion}${row.businessKey ? ` · ${row.businessKey}` : ''}`}
      >
        {row.workflow}
        {row.workflowVersion > 0 ? <span className="muted"> v{row.workflowVersion}</span> : null}
        {row.businessKey ? <span className="muted key"> · {row.businessKey}</span> : null}
      </span>
      <span role="cell">
        <span className={`status status-${status}`} data-testid={`instance-status-${row.id}`}>
          {row.status}
        </span>
        {row.pausedAt != null ? (
          <span
            className="badge-paused"
            data-testid={`instance-paused-${row.id}`}
            title={`Paused since ${formatTimestamp(row.pausedAt)}: it starts no node until unpaused`}
          >
            paused
          </span>
        ) : null}
      </span>
      <span role="cell" className="ellipsis" title={formatTimestamp(row.createdAt)}>
        {formatTime(row.createdAt, now)}
      </span>
      <span role="cell" className="num" title={`${formatDuration((row.endedAt ?? now) - start)}${live && row.status !== 'PENDING' ? ', still going' : ''}`}>
        {formatDurationShort((row.endedAt ?? now) - start)}
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
        title={row.nextRetryAt !== null ? `${formatRelative(row.nextRetryAt, now)}, at ${formatTimestamp(row.nextRetryAt)}` : ''}
      >
        {row.nextRetryAt !== null ? formatRelativeShort(row.nextRetryAt, now) : <span className="muted">—</span>}
      </span>
      <span
        role="cell"
        data-testid={`instance-waiting-${row.id}`}
        title={
          row.waitingFor !== null && row.waitingSince !== null
            ? `${WAITING_TEXT[row.waitingFor]} for ${formatDuration(now - row.waitingSince)}, since ${formatTimestamp(row.waitingSince)}`
            : ''
        }
      >
        {row.waitingFor !== null ? (
          <>
            <span className={`wait wait-${row.waitingFor}`}>{WAITING_TEXT[row.waitingFor]}</span>
            {row.waitingSince !== null ? (
              <span className="muted"> {formatDurationShort(now - row.waitingSince)}</span>
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

/** The columns: sort key, header text, and a tooltip where the header is short. */
const COLUMNS: ReadonlyArray<{ column: SortColumn; label: string; title?: string }> = [
  { column: 'id', label: 'ID' },
  { column: 'workflow', label: 'Workflow' },
  { column: 'status', label: 'Status' },
  { column: 'started', label: 'Started' },
  { column: 'duration', label: 'Duration' },
  { column: 'current', label: 'Current', title: 'The current node(s)' },
  { column: 'attempt', label: 'Attempt', title: 'Attempt n of m of the current node' },
  { column: 'nextRetry', label: 'Next retry' },
  { column: 'waiting', label: 'Waiting for' },
  { column: 'reason', label: 'Reason' },
];

/** The header row: a sort button per column. */
function Head() {
  const sort = useList((s) => s.sort);
  const setSort = useList((s) => s.setSort);
  return (
    <div role="row" className="itable-row itable-head">
      {COLUMNS.map((c) => {
        const active = sort.column === c.column;
        const how = sortedByEngine(c.column) ? 'every matching instance' : 'the loaded rows';
        return (
          <span key={c.column} role="columnheader" aria-sort={active ? sort.direction : 'none'}>
            <button
              type="button"
              className={active ? 'sort-button active' : 'sort-button'}
              data-testid={`sort-${c.column}`}
              title={`${c.title ? `${c.title}. ` : ''}Sort ${how} by ${c.label.toLowerCase()}`}
              onClick={() => setSort(nextSort(sort, c.column))}
            >
              {c.label}
              <span className="sort-mark" aria-hidden="true">
                {active ? (sort.direction === 'ascending' ? '▲' : '▼') : ''}
              </span>
            </button>
          </span>
        );
      })}
    </div>
  );
}

/** See the module comment. */
export function InstanceTable() {
  const loaded = useList((s) => s.items);
  const sort = useList((s) => s.sort);
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
  const byEngine = sortedByEngine(sort.column);
  // Sorted once per change of the rows or the sort, not per tick of the clock: live durations
  // would otherwise reorder rows every second.
  const items = useMemo(() => (byEngine ? loaded : sortRows(loaded, sort, Date.now())), [loaded, sort, byEngine]);
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
      <Head />
      {status === 'ready' && items.length === 0 ? (
        <p className="empty" data-testid="instances-empty">
          No instances match. Start one above, or clear the filter.
        </p>
      ) : (
        <VirtualList
          // a new sort starts at the top
          key={`${sort.column}-${sort.direction}`}
          testId="instances-rows"
          rowCount={items.length}
          rowHeight={ROW_HEIGHT}
          initialScrollTop={scrollTop}
          onScroll={setScrollTop}
          onNearEnd={nextBeforeId === null || !byEngine ? undefined : () => void loadMore()}
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
        {!byEngine && nextBeforeId !== null ? (
          <span className="sort-note" data-testid="instances-sort-note">
            sorted among the {formatCount(items.length)} loaded rows; the engine orders by id only
          </span>
        ) : null}
        {lastLoadMs !== null ? <span className="muted">first page in {lastLoadMs} ms</span> : null}
      </div>
    </div>
  );
}
