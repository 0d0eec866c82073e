/**
 * The Dashboard, all from the engine's SQL views through the contract (`metrics:get`,
 * `metrics:series`): instance counts by status (each opens the list filtered to it), throughput
 * (completed and failed per bucket, started as the top of the stack's context), P50/P99 duration
 * over time, per-workflow failure rate and latency, the queue, the oldest waiting instance, and
 * the latest dead letters with their errors. Refreshed every 5 s while shown.
 *
 * Test ids: `view-dashboard`, `dash-range-<15m|1h|6h|24h>`, `dash-count-<STATUS>` (`data-count`),
 * `dash-total`, `chart-throughput`, `chart-latency`, `dash-queue`, `dash-oldest-waiting`
 * (`data-id`), `dash-oldest-open`, `dash-needs-person` (`data-count`: suspended + approvals),
 * `dash-needs-suspended`, `dash-needs-approvals`, `dash-workflows`, `dash-workflow-<name>`, `dash-dead-letters`,
 * `dash-dead-letter-<id>`, `dash-dead-letter-open-<id>`, `dash-runtime` (this host's worker:
 * `dash-runtime-turns`, `dash-runtime-claimed` with `data-count`, `dash-runtime-failures`,
 * `dash-runtime-type-<type>` with `data-count`).
 */
import './monitor.css';
import { Fragment, useEffect } from 'react';
import {
  INSTANCE_STATUS_VALUES,
  type InstanceStatusValue,
  type SeriesPoint,
} from '../../../engine/api/contract';
import { useInstances, useUi } from '../hooks';
import { RANGES, type RangeKey } from '../stores/dashboard-store';
import { Lines, StackedBars, type Series } from './charts';
import { errorText, formatCount, formatDuration, formatTime, formatTimestamp } from './format';
import { useApprovals, useDashboard, useList } from './hooks';
import { useNow } from './useNow';

const THROUGHPUT: Series<SeriesPoint>[] = [
  { key: 'completed', label: 'completed', className: 's-completed' },
  { key: 'failed', label: 'failed', className: 's-failed' },
  { key: 'cancelled', label: 'cancelled', className: 's-cancelled' },
];
const LATENCY: Series<SeriesPoint>[] = [
  { key: 'p50Ms', label: 'P50', className: 's-p50' },
  { key: 'p99Ms', label: 'P99', className: 's-p99' },
];

function parseError(json: unknown): string {
  if (typeof json !== 'string') return errorText(json);
  try {
    return errorText(JSON.parse(json));
  } catch {
    return json;
  }
}

/** A loop turn or commit time: sub-millisecond ones with their decimals (`0.25 ms`), longer ones as formatDuration. */
const short = (ms: number | null | undefined): string =>
  ms === null || ms === undefined ? '—' : ms < 10 ? `${ms.toFixed(ms < 1 ? 2 : 1)} ms` : formatDuration(ms);

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** See the module comment. */
export function DashboardView() {
  const metrics = useDashboard((s) => s.metrics);
  const runtime = useDashboard((s) => s.runtime);
  const series = useDashboard((s) => s.series);
  const bucketMs = useDashboard((s) => s.bucketMs);
  const range = useDashboard((s) => s.range);
  const setRange = useDashboard((s) => s.setRange);
  const load = useDashboard((s) => s.load);
  const status = useDashboard((s) => s.status);
  const upcoming = useDashboard((s) => s.upcoming);
  const replaceFilter = useList((s) => s.replaceFilter);
  const openInstance = useList((s) => s.open);
  const setView = useUi((s) => s.setView);
  const now = useNow(5000);

  useEffect(() => {
    void load();
    const t = setInterval(() => void load(), 5000);
    return () => clearInterval(t);
  }, [load]);

  const showStatus = (status: InstanceStatusValue): void => {
    openInstance(undefined);
    replaceFilter({ status: [status] });
    setView('instances');
  };
  const showInstance = (id: number): void => {
    openInstance(id);
    setView('instances');
  };
  // The app's counts: the same numbers, refreshed on the same events, as the status bar and chips.
  const counts = useInstances((s) => s.counts);
  // Approvals waiting for a decision (a WAITING instance may wait for a mere timer or retry).
  const approvals = useApprovals((s) => s.total);
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  const durations = new Map((metrics?.durations ?? []).map((d) => [String(d.workflow), d]));
  const sum = (k: keyof SeriesPoint): number => series.reduce((a, p) => a + (Number(p[k]) || 0), 0);
  const spanMin = RANGES[range].spanMs / 60_000;
  const oldest = metrics?.oldestWaiting ?? null;

  return (
    <div className="view dashboard-view monitor-view" data-testid="view-dashboard" data-status={status}>
      <div className="monitor-head">
        <h2>Dashboard</h2>
        <span className="muted">
          {formatCount(total)} instances · refreshed {formatTime(now, now)}
        </span>
        <span className="spacer" />
        <div className="seg-group" role="group" aria-label="Chart range">
          {(Object.keys(RANGES) as RangeKey[]).map((r) => (
            <button
              key={r}
              type="button"
              className={r === range ? 'seg active' : 'seg'}
              data-testid={`dash-range-${r}`}
              aria-pressed={r === range}
              onClick={() => setRange(r)}
            >
              last {r}
            </button>
          ))}
        </div>
      </div>

      <div className="count-tiles">
        <div className="tile total" data-testid="dash-total" data-count={total}>
          <span className="tile-label">all</span>
          <span className="tile-value">{formatCount(total)}</span>
        </div>
        {INSTANCE_STATUS_VALUES.map((s) => (
          <button
            key={s}
            type="button"
            className={`tile tile-${s.toLowerCase()}${(counts[s] ?? 0) === 0 ? ' zero' : ''}`}
            data-testid={`dash-count-${s}`}
            data-count={counts[s] ?? 0}
            onClick={() => showStatus(s)}
            title={`Show the ${s} instances`}
          >
            <span className="tile-label">{s.toLowerCase()}</span>
            <span className="tile-value">{formatCount(counts[s] ?? 0)}</span>
          </button>
        ))}
      </div>

      <div className="dash-grid">
        <section className="card">
          <header>
            <h3>Throughput</h3>
            <span className="muted">
              per {formatDuration(bucketMs)} · {formatCount(sum('completed'))} completed,{' '}
              {formatCount(sum('failed'))} failed, {formatCount(sum('started'))} started in{' '}
              {spanMin >= 60 ? `${spanMin / 60} h` : `${spanMin} min`}
            </span>
          </header>
          <StackedBars
            points={series}
            series={THROUGHPUT}
            bucketMs={bucketMs}
            testId="chart-throughput"
            emptyText="No instance started or ended in this range yet."
          />
        </section>
        <section className="card">
          <header>
            <h3>Duration of completed instances</h3>
            <span className="muted">P50 and P99 per {formatDuration(bucketMs)}</span>
          </header>
          <Lines
            points={series}
            series={LATENCY}
            bucketMs={bucketMs}
            testId="chart-latency"
            format={(v) => formatDuration(v)}
            emptyText="No instance completed in this range yet."
          />
        </section>
      </div>

      <div className="dash-grid three">
        <section className="card" data-testid="dash-oldest-waiting" data-id={oldest?.id ?? ''}>
          <header>
            <h3>Oldest waiting instance</h3>
          </header>
          {oldest ? (
            <div className="oldest">
              <button
                type="button"
                className="link big"
                data-testid="dash-oldest-open"
                onClick={() => showInstance(oldest.id)}
              >
                #{oldest.id} {oldest.workflow} <span className="muted">v{oldest.workflowVersion}</span>
              </button>
              <div>
                <span className={`status status-${oldest.status.toLowerCase()}`}>{oldest.status}</span>{' '}
                waiting for <strong>{oldest.waitingFor ?? 'something'}</strong>
                {oldest.currentNodes.length > 0 ? (
                  <>
                    {' '}
                    at <code>{oldest.currentNodes.join(', ')}</code>
                  </>
                ) : null}
              </div>
              <div className="muted">
                started {formatTimestamp(oldest.createdAt).slice(0, 19)} (
                {formatDuration(now - oldest.createdAt)} ago)
                {oldest.waitingSince !== null
                  ? ` · waiting ${formatDuration(now - oldest.waitingSince)}`
                  : ''}
              </div>
              {oldest.reason ? <div className="error-text small">{oldest.reason}</div> : null}
            </div>
          ) : (
            <p className="muted">Nothing waits.</p>
          )}
        </section>
        <section className="card" data-testid="dash-upcoming" data-count={upcoming.length}>
          <header>
            <h3>Upcoming scheduled starts</h3>
          </header>
          {upcoming.length === 0 ? (
            <p className="muted">No active schedule.</p>
          ) : (
            <dl className="facts">
              {upcoming.map((u, i) => (
                <Fragment key={`${u.workflow}\u001f${u.schedule}\u001f${u.at}`}>
                  <dt data-testid={`dash-upcoming-${i}`}>
                    {u.workflow} <span className="muted">· {u.schedule}</span>
                  </dt>
                  <dd title={formatTimestamp(u.at)}>{formatTimestamp(u.at).slice(0, 16)} (in {formatDuration(Math.max(0, u.at - now))})</dd>
                </Fragment>
              ))}
            </dl>
          )}
        </section>
        <section className="card" data-testid="dash-queue">
          <header>
            <h3>Queue</h3>
          </header>
          <dl className="facts">
            <dt>steps ready</dt>
            <dd>{formatCount(num(metrics?.queue.pending) ?? 0)}</dd>
            <dt>steps running</dt>
            <dd>{formatCount(num(metrics?.queue.running) ?? 0)}</dd>
            <dt>timers pending</dt>
            <dd>{formatCount(num(metrics?.queue.timers) ?? 0)}</dd>
          </dl>
        </section>
        <section className="card" data-testid="dash-needs-person" data-count={(counts.SUSPENDED ?? 0) + approvals}>
          <header>
            <h3>Needs a person</h3>
            <span className="muted">{formatCount((counts.SUSPENDED ?? 0) + approvals)}</span>
          </header>
          <dl className="facts">
            <dt>suspended</dt>
            <dd>
              <button type="button" className="link" data-testid="dash-needs-suspended" onClick={() => showStatus('SUSPENDED')}>
                {formatCount(counts.SUSPENDED ?? 0)}
              </button>
            </dd>
            <dt>approvals to decide</dt>
            <dd>
              <button type="button" className="link" data-testid="dash-needs-approvals" onClick={() => setView('approvals')}>
                {formatCount(approvals)}
              </button>
            </dd>
            <dt>failed</dt>
            <dd>
              <button type="button" className="link" onClick={() => showStatus('FAILED')}>
                {formatCount(counts.FAILED ?? 0)}
              </button>
            </dd>
          </dl>
        </section>
      </div>

      <section className="card">
        <header>
          <h3>Per workflow</h3>
          <span className="muted">failure rate = failed / all instances of the workflow</span>
        </header>
        <table className="dash-table" data-testid="dash-workflows">
          <thead>
            <tr>
              <th>Workflow</th>
              <th className="num">Instances</th>
              <th className="num">Failed</th>
              <th className="num">Suspended</th>
              <th className="num">Cancelled</th>
              <th>Failure rate</th>
              <th className="num">P50</th>
              <th className="num">P99</th>
            </tr>
          </thead>
          <tbody>
            {(metrics?.failures ?? []).map((f) => {
              const name = String(f.workflow);
              const rate = num(f.failure_rate) ?? 0;
              const d = durations.get(name);
              return (
                <tr key={name} data-testid={`dash-workflow-${name}`} data-failure-rate={rate}>
                  <td>{name}</td>
                  <td className="num">{formatCount(num(f.total))}</td>
                  <td className="num">{formatCount(num(f.failed))}</td>
                  <td className="num">{formatCount(num(f.suspended))}</td>
                  <td className="num">{formatCount(num(f.cancelled))}</td>
                  <td>
                    <span className="rate-bar">
                      <i
                        style={{ width: `${Math.min(100, rate * 100)}%` }}
                        className={rate > 0.2 ? 'high' : rate > 0 ? 'some' : ''}
                      />
                    </span>{' '}
                    {(rate * 100).toFixed(1)} %
                  </td>
                  <td className="num">{formatDuration(num(d?.p50_ms))}</td>
                  <td className="num">{formatDuration(num(d?.p99_ms))}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
        {(metrics?.failures ?? []).length === 0 ? (
          <p className="muted" data-testid="dash-workflows-empty">
            No instances yet: start one from Instances, or run <code>npx runnel demo</code>.
          </p>
        ) : null}
      </section>

      <section className="card" data-testid="dash-runtime">
        <header>
          <h3>This host&apos;s worker</h3>
          <span className="muted">since it started: the numbers GET /metrics serves (percentiles are bucket bounds)</span>
        </header>
        {runtime === undefined || runtime.turns.count === 0 ? (
          <p className="muted">No loop turn yet.</p>
        ) : (
          <div className="dash-grid">
            <dl className="facts">
              <dt>loop turns</dt>
              <dd data-testid="dash-runtime-turns" data-count={runtime.turns.count}>
                {formatCount(runtime.turns.count)} · P50 ≤ {short(runtime.turns.p50Ms)} · P99 ≤ {short(runtime.turns.p99Ms)}
              </dd>
              <dt>commits</dt>
              <dd data-testid="dash-runtime-commits">
                P50 ≤ {short(runtime.commits.p50Ms)} · P99 ≤ {short(runtime.commits.p99Ms)}
              </dd>
              <dt>steps claimed</dt>
              <dd data-testid="dash-runtime-claimed" data-count={runtime.claimed}>
                {formatCount(runtime.claimed)}
              </dd>
              <dt>failures</dt>
              <dd data-testid="dash-runtime-failures">
                {runtime.failures.length === 0
                  ? 'none'
                  : runtime.failures
                      .slice(0, 5)
                      .map((f) => `${f.code} ×${formatCount(f.count)} (${f.type})`)
                      .join(', ')}
              </dd>
            </dl>
            <table className="dash-table" data-testid="dash-runtime-types">
              <thead>
                <tr>
                  <th>Node type</th>
                  <th className="num">Attempts</th>
                  <th className="num">Duration P99 ≤</th>
                  <th className="num">Due→committed P99 ≤</th>
                </tr>
              </thead>
              <tbody>
                {runtime.nodeDuration.map((d) => (
                  <tr key={d.type} data-testid={`dash-runtime-type-${d.type}`} data-count={d.count}>
                    <td>{d.type}</td>
                    <td className="num">{formatCount(d.count)}</td>
                    <td className="num">{short(d.p99Ms)}</td>
                    <td className="num">{short(runtime.dueToCommitted.find((l) => l.type === d.type)?.p99Ms)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>

      <section className="card">
        <header>
          <h3>Dead letters</h3>
          <span className="muted">work whose retries ran out, newest first</span>
        </header>
        {(metrics?.deadLetters ?? []).length === 0 ? (
          <p className="muted">None.</p>
        ) : (
          <table className="dash-table" data-testid="dash-dead-letters">
            <thead>
              <tr>
                <th>When</th>
                <th>Instance</th>
                <th>Workflow</th>
                <th>Node</th>
                <th>Kind</th>
                <th className="num">Attempts</th>
                <th>Error</th>
              </tr>
            </thead>
            <tbody>
              {(metrics?.deadLetters ?? []).map((d) => {
                const id = num(d.id) ?? 0;
                const instance = num(d.instance_id) ?? 0;
                return (
                  <tr key={id} data-testid={`dash-dead-letter-${id}`}>
                    <td className="nowrap" title={formatTimestamp(num(d.created_at))}>
                      {formatTime(num(d.created_at), now)}
                    </td>
                    <td>
                      <button
                        type="button"
                        className="link"
                        data-testid={`dash-dead-letter-open-${id}`}
                        onClick={() => showInstance(instance)}
                      >
                        #{instance}
                      </button>
                    </td>
                    <td>{String(d.workflow ?? '')}</td>
                    <td className="mono">{String(d.node_id ?? '')}</td>
                    <td>{String(d.kind ?? '')}</td>
                    <td className="num">{String(d.attempts ?? '')}</td>
                    <td className="error-text">{parseError(d.error_json)}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        )}
      </section>
    </div>
  );
}
