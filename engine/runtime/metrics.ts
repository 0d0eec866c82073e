/**
 * Prometheus metrics of one engine (issue 14), in the text exposition format, with prom-client.
 *
 * Each {@link EngineMetrics} has a registry of its own: two engines in one process (tests, the
 * desktop app switching files) never share or leak series, and prom-client's global default
 * registry is never used. Storage-neutral: it reads only the storage port and the engine's events.
 *
 * - Gauges read at scrape time: instances by workflow and status (the read model), the WAL's size
 *   and bound and the checkpoints the backend reports ({@link StorageHealth}).
 * - Counters and histograms fed by the engine's events after commit, kept as plain numbers
 *   until a scrape reads them (engine/runtime/metric-tallies.ts), so the hot path pays only
 *   listeners and a few Map lookups: instance and node transitions by status (`instance.*`, `node.changed`); node
 *   attempts by type and outcome, failures by type and error code, attempt duration and
 *   due→committed latency by type, loop turn and commit time (`worker.turn`, one per turn of this
 *   process's worker). They count what THIS process did since it started, as Prometheus counters
 *   do: `runnel metrics`, a process of its own, shows them at zero.
 * - Test runs count nowhere, as in the read model's gauge and the Dashboard: their events say so
 *   (`test: true`) and their attempt ends do (`step.test`), so leaving them out costs a property
 *   test. The loop's own figures (turns, commits, steps claimed) stay whole: the worker did that
 *   work, whoever it was for.
 */
import { Counter, Gauge, Registry } from 'prom-client';
import { CounterTally, HistogramTally, type HistogramSeries } from './metric-tallies';
import { INSTANCE_STATUSES } from '../vocabulary';
import type { StorageBackend } from '../store/port';
import type { CompiledWorkflow } from './compiled';
import type { EngineListener, WorkerTurnEvent } from './events';
import type { Outcome } from './state-machine/outcome';

/** What the metrics need of an engine (an {@link Engine} is one). */
export interface MetricsSource {
  readonly storage: StorageBackend;
  /** Listens to the engine's events; returns the remover. */
  on(listener: EngineListener): () => void;
  /** A workflow version, compiled (node types of attempts are looked up there; cached by the engine). */
  workflowById(id: number): Promise<CompiledWorkflow>;
}

/** Buckets of attempt durations and due→committed latency, seconds: 1 ms … 5 min. */
const STEP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];
/** Buckets of loop turns and commits, seconds: 0.25 ms … 5 s. */
const TURN_BUCKETS = [0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5];

/** The `outcome` label of an attempt's end. */
function outcomeLabel(o: Outcome): string {
  switch (o.kind) {
    case 'completed':
      return 'completed';
    case 'failed':
      return o.final ? 'failed' : 'retried';
    case 'wait':
      // A wait's kind: timer, approval, event, children.
      return o.wait.kind;
    case 'compensated':
      return 'compensated';
    case 'compensation_failed':
      return o.final ? 'compensation_failed' : 'compensation_retried';
  }
}

/** One value of prom-client's `getMetricsAsJSON()`. */
interface MetricValue {
  value: number;
  labels: Record<string, string | number>;
  metricName?: string;
}

/** A histogram in brief: observations, mean, and the bucket bounds holding P50 and P99, ms (null: none observed). */
export interface HistogramSummary {
  count: number;
  meanMs: number | null;
  p50Ms: number | null;
  p99Ms: number | null;
}

/** What {@link EngineMetrics.summary} answers: this process's counters and histograms since it started. */
export interface RuntimeMetrics {
  /** Worker loop turns and their write transactions. */
  turns: HistogramSummary;
  commits: HistogramSummary;
  /** Steps claimed or started at once. */
  claimed: number;
  /** Instances started, by workflow; attempt ends by node type and outcome; failures by node type and error code (most first). */
  started: { workflow: string; count: number }[];
  attempts: { type: string; outcome: string; count: number }[];
  failures: { type: string; code: string; count: number }[];
  /** Attempt duration and due→committed latency, by node type. */
  nodeDuration: ({ type: string } & HistogramSummary)[];
  dueToCommitted: ({ type: string } & HistogramSummary)[];
}

/** Count, mean and bucket-bound percentiles (ms) of one histogram series (cumulative buckets, seconds). */
function summarize(s: { buckets: { le: number; cumulative: number }[]; sum: number; count: number }): HistogramSummary {
  if (s.count === 0) return { count: 0, meanMs: null, p50Ms: null, p99Ms: null };
  const finite = s.buckets.filter((b) => Number.isFinite(b.le));
  const at = (q: number): number => {
    const b = s.buckets.find((x) => x.cumulative >= q * s.count);
    const le = b === undefined || !Number.isFinite(b.le) ? (finite[finite.length - 1]?.le ?? 0) : b.le;
    return Math.round(le * 1e6) / 1e3;
  };
  return { count: s.count, meanMs: Math.round((s.sum / s.count) * 1e6) / 1e3, p50Ms: at(0.5), p99Ms: at(0.99) };
}

/** What one node type's attempts update: its series, looked up once per type. */
interface PerType {
  duration: HistogramSeries;
  latency: HistogramSeries;
}

/** The metrics of one engine (see the module doc). */
export class EngineMetrics {
  /** This engine's registry (never prom-client's global one). */
  readonly registry = new Registry();
  private readonly off: () => void;
  private readonly workflows = new Map<number, CompiledWorkflow | null>();

  constructor(private readonly source: MetricsSource) {
    const registers = [this.registry];
    const storage = source.storage;
    new Gauge({
      name: 'runnel_instances',
      help: 'Instances in the database by workflow and status (read at scrape time).',
      labelNames: ['workflow', 'status'],
      registers,
      async collect() {
        this.reset();
        for (const wf of await storage.read.workflowSummaries()) {
          const counts = await storage.read.countByStatus({ workflow: wf.name });
          for (const s of INSTANCE_STATUSES) this.set({ workflow: wf.name, status: s }, counts[s] ?? 0);
        }
      },
    });
    new Gauge({
      name: 'runnel_wal_bytes',
      help: 'Size of the write-ahead log, bytes (SQLite).',
      registers,
      collect() {
        const wal = storage.health().wal;
        if (wal) this.set(wal.bytes);
      },
    });
    new Gauge({
      name: 'runnel_wal_limit_bytes',
      help: 'The size the write-ahead log is kept to, bytes: above it a reader holds old frames.',
      registers,
      collect() {
        const wal = storage.health().wal;
        if (wal) this.set(wal.limitBytes);
      },
    });
    new Counter({
      name: 'runnel_checkpoints_total',
      help: 'WAL checkpoints that copied frames, run by this process off the loop thread since it started (SQLite).',
      registers,
      collect() {
        this.reset();
        this.inc(storage.health().checkpoints?.count ?? 0);
      },
    });
    new Counter({
      name: 'runnel_checkpoint_seconds_total',
      help: 'Time those checkpoints took in all, seconds.',
      registers,
      collect() {
        this.reset();
        this.inc((storage.health().checkpoints?.totalMs ?? 0) / 1000);
      },
    });
    new Gauge({
      name: 'runnel_checkpoint_last_seconds',
      help: 'Time the last of those checkpoints took, seconds.',
      registers,
      collect() {
        this.set((storage.health().checkpoints?.lastMs ?? 0) / 1000);
      },
    });

    const r = this.registry;
    const started = new CounterTally(r, 'runnel_instances_started_total', 'Instances this process started, by workflow.', ['workflow']);
    const instanceTo = new CounterTally(r, 'runnel_instance_transitions_total', 'Instance status changes this process committed, by the status reached.', ['status']);
    const nodeTo = new CounterTally(r, 'runnel_node_transitions_total', 'Node status changes this process committed, by the status reached.', ['status']);
    const attempts = new CounterTally(
      r,
      'runnel_node_attempts_total',
      "Attempt ends this process's worker committed, by node type and outcome (completed, failed, retried, timer, approval, event, children, compensated, compensation_failed, compensation_retried).",
      ['type', 'outcome'],
    );
    const failures = new CounterTally(r, 'runnel_node_failures_total', 'Failed attempts by node type and error code.', ['type', 'code']);
    const duration = new HistogramTally(r, 'runnel_node_duration_seconds', 'From the claim of an attempt to the transaction recording its end, seconds, by node type.', STEP_BUCKETS, 'type');
    const latency = new HistogramTally(
      r,
      'runnel_due_to_committed_seconds',
      "From the moment a step was due to the commit of its attempt's end, seconds, by node type (queueing included).",
      STEP_BUCKETS,
      'type',
    );
    const turns = new HistogramTally(r, 'runnel_worker_turn_seconds', 'Worker loop turns: commit, launches and events, seconds.', TURN_BUCKETS).of('');
    const commits = new HistogramTally(r, 'runnel_worker_commit_seconds', "A worker turn's write transaction (lock wait, transitions, COMMIT), seconds.", TURN_BUCKETS).of('');
    const claimed = new CounterTally(r, 'runnel_worker_claimed_total', 'Steps the worker claimed or started at once.');

    const types = new Map<string, PerType>();
    const record = (e: WorkerTurnEvent, o: Outcome, type: string) => {
      let t = types.get(type);
      if (t === undefined) types.set(type, (t = { duration: duration.of(type), latency: latency.of(type) }));
      attempts.add(type, outcomeLabel(o));
      if (o.kind === 'failed' || o.kind === 'compensation_failed') failures.add(type, o.error.code);
      t.duration.observe(Math.max(0, e.committedAt - o.step.startedAt) / 1000);
      t.latency.observe(Math.max(0, e.committedAt - o.step.dueAt) / 1000);
    };
    const onTurn = (e: WorkerTurnEvent) => {
      turns.observe(e.turnMs / 1000);
      commits.observe(e.commitMs / 1000);
      if (e.claimed > 0) claimed.add('', '', e.claimed);
      for (const o of e.outcomes) {
        if (o.step.test) continue;
        const wf = this.workflows.get(o.step.workflowId);
        if (wf !== undefined) record(e, o, wf?.nodes.get(o.step.nodeId)?.type.type ?? 'unknown');
        else this.lookUp(o.step.workflowId, (w) => record(e, o, w?.nodes.get(o.step.nodeId)?.type.type ?? 'unknown'));
      }
    };
    this.off = source.on((e) => {
      if ('test' in e && e.test === true) return;
      switch (e.type) {
        case 'worker.turn':
          onTurn(e);
          return;
        case 'node.changed':
          nodeTo.add(e.status);
          return;
        case 'instance.created':
          started.add(e.workflow);
          return;
        case 'instance.changed':
        case 'instance.finished':
          instanceTo.add(e.status);
          return;
        default:
          return;
      }
    });
  }

  private readonly waiting = new Map<number, ((wf: CompiledWorkflow | null) => void)[]>();

  /** Compiles workflow version `id` once (the engine caches it), then hands it to `then` (null when it cannot be). */
  private lookUp(id: number, then: (wf: CompiledWorkflow | null) => void): void {
    const queue = this.waiting.get(id);
    if (queue) {
      queue.push(then);
      return;
    }
    this.waiting.set(id, [then]);
    const settle = (wf: CompiledWorkflow | null) => {
      this.workflows.set(id, wf);
      const q = this.waiting.get(id) ?? [];
      this.waiting.delete(id);
      for (const f of q) f(wf);
    };
    this.source.workflowById(id).then(settle, () => settle(null));
  }

  /** The Prometheus content type of {@link text} (text format 0.0.4). */
  get contentType(): string {
    return this.registry.contentType;
  }

  /**
   * Every metric in the Prometheus text format, the gauges read now.
   *
   * @throws EngineError what the read model throws (DATABASE_CORRUPT, DATABASE_BUSY, …).
   */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  /**
   * The same numbers as {@link text}, for the Dashboard: read from this registry
   * (`getMetricsAsJSON`), counters summed per label, histograms as their count, mean and the
   * upper bounds of the buckets holding the 50th and 99th percentile (ms; null without an
   * observation, the highest bound when beyond it). The instance counts and the WAL are left out:
   * `metrics:get` has them.
   *
   * @throws EngineError what the read model throws.
   */
  async summary(): Promise<RuntimeMetrics> {
    const all = await this.registry.getMetricsAsJSON();
    const byName = new Map(all.map((m) => [m.name, m.values as unknown as MetricValue[]]));
    const counter = (name: string, labels: readonly string[]) =>
      (byName.get(name) ?? [])
        .filter((v) => v.value > 0)
        .map((v) => ({ ...Object.fromEntries(labels.map((l) => [l, String(v.labels[l] ?? '')])), count: v.value }))
        .sort((a, b) => b.count - a.count);
    const histograms = (name: string, label?: string): (HistogramSummary & { label: string })[] => {
      const series = new Map<string, { buckets: { le: number; cumulative: number }[]; sum: number; count: number }>();
      for (const v of byName.get(name) ?? []) {
        const key = label === undefined ? '' : String(v.labels[label] ?? '');
        let s = series.get(key);
        if (!s) series.set(key, (s = { buckets: [], sum: 0, count: 0 }));
        if (v.metricName === `${name}_bucket`) s.buckets.push({ le: v.labels.le === '+Inf' ? Infinity : Number(v.labels.le), cumulative: v.value });
        else if (v.metricName === `${name}_sum`) s.sum = v.value;
        else if (v.metricName === `${name}_count`) s.count = v.value;
      }
      return [...series].map(([key, s]) => ({ label: key, ...summarize(s) }));
    };
    const one = (name: string): HistogramSummary => histograms(name)[0] ?? { count: 0, meanMs: null, p50Ms: null, p99Ms: null };
    const typed = (name: string) => histograms(name, 'type').filter((h) => h.count > 0).map(({ label, ...h }) => ({ type: label, ...h }));
    return {
      turns: one('runnel_worker_turn_seconds'),
      commits: one('runnel_worker_commit_seconds'),
      claimed: (byName.get('runnel_worker_claimed_total') ?? []).reduce((a, v) => a + v.value, 0),
      started: counter('runnel_instances_started_total', ['workflow']) as RuntimeMetrics['started'],
      attempts: counter('runnel_node_attempts_total', ['type', 'outcome']) as RuntimeMetrics['attempts'],
      failures: counter('runnel_node_failures_total', ['type', 'code']) as RuntimeMetrics['failures'],
      nodeDuration: typed('runnel_node_duration_seconds'),
      dueToCommitted: typed('runnel_due_to_committed_seconds'),
    };
  }

  /** Stops listening to the engine (the registry keeps what it counted). */
  close(): void {
    this.off();
  }
}
