/**
 * The engine on PostgreSQL: the 3-node linear workflow of the SQLite throughput row
 * (bench/workflows.ts LINEAR, no-op nodes), drained by one or more worker processes on one
 * database (`Engine.open('postgres://…')`, default tunables).
 *
 * A child process: `node --import tsx bench/postgres-engine.ts '<{"url","warmUrl","warm","prepare"}>'`
 * warms up on a scratch database of its own (`warm` instances run to the end, so the code is
 * compiled before the clock starts), opens `url` — and when `prepare` is given deploys the
 * workflow and starts that many instances there (one process does, before the clock) —, prints
 * `BENCH_READY`, starts its worker loop on a line on stdin, prints `BENCH_PROGRESS <transitions>`
 * every 50 ms, and on the line `stop` stops and prints `BENCH_RESULT {json}`
 * ({@link EnginePgWorkerResult}).
 *
 * Every round trip of the write path is counted (the bridge's query/begin/commit calls wrapped:
 * one call is one request to the server and its answer), with the statements that made them.
 */
import fs from 'node:fs';
import { Engine } from '../engine/api/index';
import type { PostgresStorage } from '../engine/db/postgres/storage';
import { benchRegistry, benchVariables, LINEAR } from './workflows';
import { nowMs, sleep } from './stats';

/** What one engine worker process reports. */
export interface EnginePgWorkerResult {
  /** Node attempts committed (COMPLETED events: the linear workflow's nodes never fail). */
  transitions: number;
  /** Epoch ms of the last COMPLETED event (events are emitted after their commit). */
  lastCommitEpochMs: number;
  /** Write-path round trips while the worker ran (BEGIN, each statement, COMMIT, ROLLBACK). */
  roundTrips: number;
  /** Reads sent on the read pool while the worker ran (the loop's `nextDue` when idle, …). */
  reads: number;
  /** Write transactions begun (loop turns that wrote or read under BEGIN). */
  transactions: number;
  /** Time the engine's thread spent blocked on the bridge (the server and the thread hop), ms. */
  bridgeMs: number;
  /** Write transactions rolled back (conflicts retried, failed turns). */
  rollbacks: number;
  /** The statements that took the most bridge time: calls and ms in all (SQL cut to 90 characters). */
  top: { sql: string; calls: number; ms: number }[];
  /** CPU of this process (user + system), µs per transition: the engine's thread and its bridge thread. */
  cpuUsPerTransition: number;
}

/** Opens the engine on a PostgreSQL URL as the bench runs it: default tunables, the bench node types. */
function openPgEngine(url: string): Engine {
  return Engine.open(url, { registry: benchRegistry() });
}

/** Starts `n` instances of `name` in `startMany` calls of at most 5,000. */
async function startInstances(engine: Engine, name: string, n: number, firstIndex = 0): Promise<void> {
  for (let done = 0; done < n; done += 5000) {
    const chunk = Array.from({ length: Math.min(5000, n - done) }, (_, i) => benchVariables(firstIndex + done + i));
    await engine.startMany(name, chunk);
  }
}

/** Counts the write path's round trips (each bridge call is one request and its answer). */
function countRoundTrips(engine: Engine): {
  roundTrips: number;
  reads: number;
  transactions: number;
  bridgeMs: number;
  statements: Map<string, { calls: number; ms: number }>;
  reset(): void;
} {
  const bridge = (engine.storage as PostgresStorage).bridge;
  const counts = {
    roundTrips: 0,
    reads: 0,
    transactions: 0,
    bridgeMs: 0,
    statements: new Map<string, { calls: number; ms: number }>(),
    reset() {
      counts.roundTrips = 0;
      counts.reads = 0;
      counts.transactions = 0;
      counts.bridgeMs = 0;
      counts.statements.clear();
    },
  };
  const timed = <T>(sql: string, fn: () => T): T => {
    counts.roundTrips++;
    const key = sql.replace(/\s+/g, ' ').trim().slice(0, 90);
    let st = counts.statements.get(key);
    if (!st) counts.statements.set(key, (st = { calls: 0, ms: 0 }));
    st.calls++;
    const s = nowMs();
    try {
      return fn();
    } finally {
      const took = nowMs() - s;
      st.ms += took;
      counts.bridgeMs += took;
    }
  };
  const pool = (engine.storage as PostgresStorage).pool as unknown as { query: (...args: unknown[]) => unknown };
  const poolQuery = pool.query.bind(pool);
  pool.query = (...args: unknown[]) => {
    counts.reads++;
    return poolQuery(...args);
  };
  const { query, begin, commitWith, rollback } = bridge;
  Object.assign(bridge, {
    query: (sql: string, params?: readonly unknown[]) => timed(sql, () => query.call(bridge, sql, params)),
    begin: () => {
      counts.transactions++;
      timed('BEGIN', () => begin.call(bridge));
    },
    commitWith: (sql: string) => timed(sql, () => commitWith.call(bridge, sql)),
    rollback: () => (bridge.inTransaction ? timed('ROLLBACK', () => rollback.call(bridge)) : rollback.call(bridge)),
  });
  return counts;
}

/** Drains `warm` instances on a scratch database: the JIT has compiled the engine before the clock starts. */
async function warmUp(url: string, warm: number): Promise<void> {
  const engine = openPgEngine(url);
  await engine.deploy(LINEAR);
  let finished = 0;
  const off = engine.on((e) => {
    if (e.type === 'instance.finished') finished++;
  });
  await startInstances(engine, LINEAR.name, warm);
  engine.startWorker();
  const deadline = nowMs() + 120_000;
  while (finished < warm) {
    if (nowMs() > deadline) throw new Error('bench: engine warm-up on PostgreSQL did not finish within 120 s');
    await sleep(10);
  }
  off();
  await engine.stopWorker();
  await engine.close();
}

/** Reads stdin as lines; `next()` resolves with the next one. */
function stdinLines(): { next(): Promise<string> } {
  const lines: string[] = [];
  let wake: (() => void) | undefined;
  process.stdin.setEncoding('utf8').on('data', (d: string) => {
    lines.push(...d.split('\n').filter((l) => l !== ''));
    wake?.();
  });
  process.stdin.once('end', () => process.exit(1));
  return {
    async next() {
      while (lines.length === 0) await new Promise<void>((r) => (wake = r));
      return lines.shift() as string;
    },
  };
}

async function work(url: string, warmUrl: string, warm: number, prepare: number | undefined): Promise<EnginePgWorkerResult> {
  await warmUp(warmUrl, warm);
  const engine = openPgEngine(url);
  if (prepare !== undefined) {
    await engine.deploy(LINEAR);
    await startInstances(engine, LINEAR.name, prepare);
  }
  const counts = countRoundTrips(engine);
  let transitions = 0;
  let last = 0;
  const off = engine.on((e) => {
    if (e.type === 'node.changed' && e.status === 'COMPLETED') {
      transitions++;
      last = nowMs();
    }
  });
  const stdin = stdinLines();
  process.stdout.write('BENCH_READY\n');
  await stdin.next();
  counts.reset();
  const cpu0 = process.cpuUsage();
  engine.startWorker();
  let reported = -1;
  const progress = setInterval(() => {
    if (transitions === reported) return;
    reported = transitions;
    process.stdout.write(`BENCH_PROGRESS ${transitions}\n`);
  }, 50);
  while ((await stdin.next()) !== 'stop');
  clearInterval(progress);
  const cpu = process.cpuUsage(cpu0);
  const result: EnginePgWorkerResult = {
    transitions,
    lastCommitEpochMs: performance.timeOrigin + last,
    roundTrips: counts.roundTrips,
    reads: counts.reads,
    transactions: counts.transactions,
    bridgeMs: counts.bridgeMs,
    rollbacks: counts.statements.get('ROLLBACK')?.calls ?? 0,
    top: [...counts.statements]
      .sort((a, b) => b[1].ms - a[1].ms)
      .slice(0, 14)
      .map(([sql, st]) => ({ sql, calls: st.calls, ms: Math.round(st.ms) })),
    cpuUsPerTransition: (cpu.user + cpu.system) / Math.max(1, transitions),
  };
  off();
  await engine.stopWorker();
  await engine.close();
  return result;
}

async function main(arg: string): Promise<void> {
  const task = JSON.parse(arg) as { url: string; warmUrl: string; warm: number; prepare?: number };
  const result = await work(task.url, task.warmUrl, task.warm, task.prepare);
  process.stdout.write(`BENCH_RESULT ${JSON.stringify(result)}\n`);
  process.stdin.destroy();
}

const arg = process.argv[2];
if (arg !== undefined && process.argv[1] !== undefined && fs.realpathSync(process.argv[1]) === fs.realpathSync(new URL(import.meta.url)))
  await main(arg);
