/**
 * The engine's side of the benchmark: throughput of whole workflows, the held population of
 * live instances, the open loop, and the footprint — each measured through the public API and
 * its events, as a host would see them.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { type EngineEvent, type EngineOptions, SqliteEngine } from '../engine/api/index';
import type { RunnelDb } from '../engine/db/open-database';
import type { WorkflowInput } from '../engine/dsl/schema';
import { benchRegistry, benchVariables, HOLD, LINEAR, TRANSITIONS_PER_INSTANCE } from './workflows';
import { footprint, tableBytes, Latency, nowMs, sampleResources, sleep, type LatencySummary } from './stats';
import type { Sync } from './raw';

/** Opens the engine as the benchmark runs it: default tunables, the bench node types. */
export function openEngine(
  file: string,
  sync: Sync,
  options: Pick<EngineOptions, 'concurrency' | 'pollIntervalMs' | 'walAutocheckpoint' | 'clock' | 'retention'> = {},
): SqliteEngine {
  return SqliteEngine.open(file, { synchronous: sync, registry: benchRegistry(), ...options });
}

/**
 * Watches an engine: when each write transaction began and committed (by wrapping `db.write`,
 * the one write path), and per engine event which transaction it came from.
 *
 * - service time of a transition: from the start of the transaction that claimed the node
 *   (its `RUNNING` event) to the commit of its outcome (its `COMPLETED` event);
 * - due→committed (linear workflows): step 1 from the instance's intended arrival time, step n
 *   from the commit of step n−1 (when it became due and visible), to its own commit.
 */
export class Probe {
  readonly service = new Latency();
  readonly dueToCommitted = new Latency();
  /** Due→committed of each node id (the first node's includes starting the instance). */
  readonly dueByNode = new Map<string, Latency>();
  /** Per write transaction: waiting for the write lock (BEGIN IMMEDIATE, SQLITE_BUSY retries). */
  readonly lockWait = new Latency();
  /** Per write transaction: begin → commit (lock wait included). */
  readonly txn = new Latency();
  /** Node attempts committed (completed, failed, retrying, waiting). */
  transitions = 0;
  finished = 0;
  waiting = 0;
  lastCommitMs = 0;
  private current = { start: 0, end: 0 };
  private readonly claimedAt = new Map<string, number>();
  private readonly dueAt = new Map<number, number>();
  private readonly off: () => void;

  constructor(engine: SqliteEngine) {
    const db = engine.db as { write: RunnelDb['write'] };
    const write = db.write;
    db.write = <T>(fn: (raw: Parameters<Parameters<RunnelDb['write']>[0]>[0]) => T): Promise<T> => {
      const start = nowMs();
      let done = false;
      const p = write((raw) => {
        this.lockWait.record(nowMs() - start);
        const r = fn(raw);
        done = true;
        return r;
      });
      // The first attempt commits synchronously; after SQLITE_BUSY it commits later.
      const committed = () => {
        this.current = { start, end: nowMs() };
        this.txn.record(this.current.end - start);
      };
      if (done) committed();
      else void p.then(committed, () => undefined);
      return p;
    };
    this.off = engine.on((e) => this.onEvent(e));
  }

  /** Step 1 of instance `id` was meant to arrive at `atMs` (performance clock). */
  arrival(id: number, atMs: number): void {
    this.dueAt.set(id, atMs);
  }

  private onEvent(e: EngineEvent): void {
    if (e.type === 'node.changed') {
      const key = `${e.instanceId}:${e.nodeId}`;
      switch (e.status) {
        case 'RUNNING':
          this.claimedAt.set(key, this.current.start);
          return;
        case 'COMPLETED': {
          const end = this.current.end;
          this.transitions++;
          this.lastCommitMs = end;
          const claimed = this.claimedAt.get(key);
          if (claimed !== undefined) this.service.record(end - claimed);
          this.claimedAt.delete(key);
          const due = this.dueAt.get(e.instanceId);
          if (due !== undefined) {
            this.dueToCommitted.record(end - due);
            let byNode = this.dueByNode.get(e.nodeId);
            if (!byNode) this.dueByNode.set(e.nodeId, (byNode = new Latency()));
            byNode.record(end - due);
            this.dueAt.set(e.instanceId, end);
          }
          return;
        }
        case 'RETRYING':
        case 'FAILED':
          this.transitions++;
          this.lastCommitMs = this.current.end;
          this.claimedAt.delete(key);
          return;
        case 'WAITING':
          this.transitions++;
          this.waiting++;
          this.lastCommitMs = this.current.end;
          this.claimedAt.delete(key);
          return;
        default:
          return;
      }
    }
    if (e.type === 'instance.finished') {
      this.finished++;
      this.dueAt.delete(e.instanceId);
    }
  }

  /** Waits until `done()` holds, checking every 5 ms. @throws Error after `timeoutMs`. */
  async until(done: () => boolean, timeoutMs: number, what: string): Promise<void> {
    const deadline = nowMs() + timeoutMs;
    while (!done()) {
      if (nowMs() > deadline) throw new Error(`bench: ${what} did not happen within ${timeoutMs} ms`);
      await sleep(5);
    }
  }

  close(): void {
    this.off();
  }
}

/** Starts `n` instances of `name` in transactions of at most 5,000. */
export async function startBatch(engine: SqliteEngine, name: string, n: number, firstIndex = 0): Promise<number[]> {
  const ids: number[] = [];
  for (let done = 0; done < n; done += 5000) {
    const chunk = Array.from({ length: Math.min(5000, n - done) }, (_, i) =>
      benchVariables(firstIndex + done + i),
    );
    ids.push(...(await engine.startMany(name, chunk)));
  }
  return ids;
}

/** Result of {@link engineThroughput}. */
export interface EngineThroughput {
  workflow: string;
  sync: Sync;
  instances: number;
  /** Live instances held (waiting on a timer) while the batch ran. */
  population: number;
  transitions: number;
  seconds: number;
  transitionsPerSec: number;
  instancesPerSec: number;
  service: LatencySummary;
  cpuUsPerTransition: number;
  /** Write transactions committed while the batch ran (each one a WAL sync under FULL). */
  commits: number;
  commitsPerSec: number;
  transitionsPerCommit: number;
  peakRssBytes: number;
  peakWalBytes: number;
}

/**
 * Closed loop: `n` instances of `workflow` started up front (not timed), then the worker runs
 * until every one finished. Throughput = node attempts committed / seconds.
 */
export async function engineThroughput(
  engine: SqliteEngine,
  sync: Sync,
  workflow: WorkflowInput,
  n: number,
  population = 0,
): Promise<EngineThroughput> {
  await engine.deploy(workflow);
  const probe = new Probe(engine);
  await startBatch(engine, workflow.name, n);
  const sampler = sampleResources(`${engine.db.file}-wal`);
  const cpu0 = process.cpuUsage();
  const commits0 = probe.txn.h.totalCount;
  const t0 = nowMs();
  engine.startWorker();
  await probe.until(() => probe.finished >= n, 600_000, `${n} × ${workflow.name}`);
  const seconds = (probe.lastCommitMs - t0) / 1000;
  const commits = probe.txn.h.totalCount - commits0;
  const cpu = process.cpuUsage(cpu0);
  await engine.stopWorker();
  const peaks = sampler.stop();
  probe.close();
  const perInstance = TRANSITIONS_PER_INSTANCE[workflow.name as keyof typeof TRANSITIONS_PER_INSTANCE];
  if (probe.transitions !== n * perInstance)
    throw new Error(
      `bench: ${workflow.name} made ${probe.transitions} transitions, expected ${n * perInstance}`,
    );
  return {
    workflow: workflow.name,
    sync,
    instances: n,
    population,
    transitions: probe.transitions,
    seconds,
    transitionsPerSec: probe.transitions / seconds,
    instancesPerSec: n / seconds,
    service: probe.service.summary(),
    cpuUsPerTransition: (cpu.user + cpu.system) / probe.transitions,
    commits,
    commitsPerSec: commits / seconds,
    transitionsPerCommit: probe.transitions / Math.max(1, commits),
    ...peaks,
  };
}

/**
 * Parks `n` live instances, each WAITING on a one-day `delay` (its timer row stays in
 * `schedule`), then checkpoints the WAL away. Returns seconds taken.
 */
export async function populate(engine: SqliteEngine, n: number): Promise<number> {
  const t0 = nowMs();
  await engine.deploy(HOLD);
  const probe = new Probe(engine);
  engine.startWorker();
  for (let done = 0; done < n; done += 10_000) {
    await startBatch(engine, HOLD.name, Math.min(10_000, n - done), done);
    // Keep the backlog short so the file grows as it would in use.
    await probe.until(() => probe.waiting >= Math.min(n, done + 10_000), 600_000, 'population parked');
  }
  await engine.stopWorker();
  probe.close();
  engine.db.checkpoint('TRUNCATE');
  return (nowMs() - t0) / 1000;
}

/** Result of {@link engineOpenLoop}. */
export interface EngineOpenLoop {
  sync: Sync;
  population: number;
  ratePerSec: number;
  arrived: number;
  completed: number;
  transitionsPerSec: number;
  /** From the last arrival's due time to the last commit, ms: seconds mean it did not keep up. */
  drainMs: number;
  /** Longest event-loop stall seen (a long transaction, a checkpoint, GC, or the process descheduled), ms. */
  maxLoopDelayMs: number;
  dueToCommitted: LatencySummary;
  /** Due→committed per node of the linear workflow (a: from the intended arrival). */
  dueByNode: Record<string, LatencySummary>;
  service: LatencySummary;
  /** Write transactions: lock wait and begin → commit. */
  txn: LatencySummary;
  peakRssBytes: number;
  peakWalBytes: number;
}

/**
 * Open loop: instances of the 3-node linear workflow arrive at `ratePerSec` for `durationMs`
 * (a 1 ms timer starts the arrivals due since its last run with one `startMany`), on top of the
 * live population; then waits for the stragglers.
 */
export async function engineOpenLoop(
  engine: SqliteEngine,
  sync: Sync,
  population: number,
  ratePerSec: number,
  durationMs: number,
): Promise<EngineOpenLoop> {
  await engine.deploy(LINEAR);
  engine.startWorker();
  // Warm-up: compile the workflow, fill the statement caches.
  const warm = new Probe(engine);
  await startBatch(engine, LINEAR.name, 100, 1_000_000);
  await warm.until(() => warm.finished >= 100, 60_000, 'warm-up');
  warm.close();
  const probe = new Probe(engine);
  const sampler = sampleResources(`${engine.db.file}-wal`);
  const loopDelay = monitorEventLoopDelay({ resolution: 5 });
  loopDelay.enable();
  const total = Math.floor((durationMs / 1000) * ratePerSec);
  let arrived = 0;
  const t0 = nowMs();
  while (arrived < total) {
    const now = nowMs();
    const target = Math.min(total, Math.floor(((now - t0) / 1000) * ratePerSec));
    const n = target - arrived;
    if (n > 0) {
      const ids = await engine.startMany(
        LINEAR.name,
        Array.from({ length: n }, (_, i) => benchVariables(2_000_000 + arrived + i)),
      );
      ids.forEach((id, i) => probe.arrival(id, t0 + ((arrived + i + 1) / ratePerSec) * 1000));
      arrived = target;
    }
    await sleep(1);
  }
  await probe.until(() => probe.finished >= total, 60_000, 'open-loop arrivals to finish');
  const seconds = (probe.lastCommitMs - t0) / 1000;
  await engine.stopWorker();
  loopDelay.disable();
  const peaks = sampler.stop();
  probe.close();
  return {
    sync,
    population,
    ratePerSec,
    maxLoopDelayMs: loopDelay.max / 1e6,
    arrived,
    completed: probe.finished,
    transitionsPerSec: probe.transitions / seconds,
    drainMs: probe.lastCommitMs - (t0 + (total / ratePerSec) * 1000),
    dueToCommitted: probe.dueToCommitted.summary(),
    dueByNode: Object.fromEntries([...probe.dueByNode].map(([node, l]) => [node, l.summary()])),
    service: probe.service.summary(),
    txn: probe.txn.summary(),
    ...peaks,
  };
}

/** Result of {@link engineFootprint}. */
export interface EngineFootprint {
  workflow: string;
  instances: number;
  fileBytes: number;
  bytesPerInstance: number;
  usedBytesPerInstance: number;
  /** Of those bytes, time travel's record (table `history_state`, dbstat's pages), per instance. */
  recordBytesPerInstance: number;
}

/** `n` instances of `workflow` run to COMPLETED; file bytes (history included) per instance. */
export async function engineFootprint(
  engine: SqliteEngine,
  workflow: WorkflowInput,
  n: number,
): Promise<EngineFootprint> {
  await engine.deploy(workflow);
  const probe = new Probe(engine);
  await startBatch(engine, workflow.name, n);
  engine.startWorker();
  await probe.until(() => probe.finished >= n, 600_000, `${n} × ${workflow.name}`);
  await engine.stopWorker();
  probe.close();
  const fp = footprint(engine.db.raw);
  return {
    workflow: workflow.name,
    instances: n,
    fileBytes: fp.fileBytes,
    bytesPerInstance: fp.fileBytes / n,
    usedBytesPerInstance: fp.usedBytes / n,
    recordBytesPerInstance: tableBytes(engine.db.raw, 'history_state') / n,
  };
}
