/**
 * The Dashboard's data: `metrics:get` (counts by status, queue, durations and failure rates per
 * workflow, dead letters, the oldest waiting instance), `metrics:series` (throughput and
 * P50/P99 over time) for the chosen range, `metrics:runtime` (this host's worker: the numbers
 * GET /metrics serves) and `schedule:list` (the upcoming scheduled starts). The view polls `load`
 * while it is shown.
 *
 * A store creator apart from hooks: tests pass a fake `invoke`.
 */
import { createStore, type StoreApi } from 'zustand/vanilla';
import type { Metrics, RuntimeMetricsView, ScheduleInfo, SeriesPoint } from '../../../engine/api/contract';
import type { ApiClient } from '../api/client';
import type { LoadStatus } from './workflows-store';

/** The chart ranges offered: span and bucket, ms. */
export const RANGES = {
  '15m': { spanMs: 15 * 60_000, bucketMs: 15_000 },
  '1h': { spanMs: 60 * 60_000, bucketMs: 60_000 },
  '6h': { spanMs: 6 * 60 * 60_000, bucketMs: 5 * 60_000 },
  '24h': { spanMs: 24 * 60 * 60_000, bucketMs: 15 * 60_000 },
} as const;
/** A key of {@link RANGES}. */
export type RangeKey = keyof typeof RANGES;

/** How many upcoming scheduled starts the dashboard shows. */
export const UPCOMING_STARTS = 8;

/** One upcoming start of an active schedule: when, which workflow and schedule. */
export interface UpcomingStart {
  at: number;
  workflow: string;
  schedule: string;
}

/** The next {@link UPCOMING_STARTS} starts over every active schedule, soonest first (ties by workflow, then schedule). */
export function upcomingStarts(schedules: readonly ScheduleInfo[]): UpcomingStart[] {
  return schedules
    .flatMap((s) => s.upcoming.map((at) => ({ at, workflow: s.workflow, schedule: s.id })))
    .sort((a, b) => a.at - b.at || a.workflow.localeCompare(b.workflow) || a.schedule.localeCompare(b.schedule))
    .slice(0, UPCOMING_STARTS);
}

/** State and actions of the dashboard store. */
export interface DashboardState {
  metrics: Metrics | undefined;
  /** This host's worker since it started (`metrics:runtime`: what GET /metrics serves); undefined until read. */
  runtime: RuntimeMetricsView | undefined;
  /** The next scheduled starts ({@link upcomingStarts}); kept as they were when `schedule:list` fails. */
  upcoming: UpcomingStart[];
  series: SeriesPoint[];
  bucketMs: number;
  range: RangeKey;
  status: LoadStatus;
  load(): Promise<void>;
  setRange(range: RangeKey): void;
}

/** A dashboard store over `api`; `now` is the clock of the chart range (tests pin it). */
export function createDashboardStore(
  api: Pick<ApiClient, 'invoke'>,
  options: { now?: () => number } = {},
): StoreApi<DashboardState> {
  const now = options.now ?? (() => Date.now());
  let seq = 0;
  return createStore<DashboardState>()((set, get) => ({
    metrics: undefined,
    runtime: undefined,
    upcoming: [],
    series: [],
    bucketMs: RANGES['1h'].bucketMs,
    range: '1h',
    status: 'idle',
    async load() {
      const mine = ++seq;
      const { spanMs, bucketMs } = RANGES[get().range];
      set((s) => ({ status: s.metrics === undefined ? 'loading' : s.status }));
      const end = now();
      const from = Math.floor((end - spanMs) / bucketMs) * bucketMs + bucketMs;
      const [m, series, runtime, schedules] = await Promise.all([
        api.invoke('metrics:get'),
        api.invoke('metrics:series', { from, to: end, bucketMs }),
        api.invoke('metrics:runtime'),
        api.invoke('schedule:list', {}),
      ]);
      if (mine !== seq) return;
      if (!m.ok) {
        set({ status: 'error' });
        return;
      }
      set((s) => ({
        metrics: m.value,
        series: series.ok ? series.value.points : [],
        runtime: runtime.ok ? runtime.value : s.runtime,
        upcoming: schedules.ok ? upcomingStarts(schedules.value) : s.upcoming,
        bucketMs,
        status: 'ready',
      }));
    },
    setRange(range) {
      set({ range });
      void get().load();
    },
  }));
}
