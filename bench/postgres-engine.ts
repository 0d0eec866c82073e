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
 * The write path's traffic is counted (see {@link countRoundTrips}): statements (server round
 * trips), the hops between the engine's thread and the bridge's, and the time blocked in them.
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
  /** Write-path statements while the worker ran (BEGIN, COMMIT and ROLLBACK included); a hop's go pipelined, in about one round trip to the server. */
  statements: number;
  /** Requests the engine's thread blocked on (queued statements ride with the next). */
  hops: number;
  /** Reads sent on the read pool while the worker ran (the loop's `nextDue` when idle, …). */
  reads: number;
  /** Write transactions begun (loop turns that wrote or read under BEGIN). */
  transactions: number;
  /** Time the engine's thread spent blocked on the bridge (the server and the thread hop), ms. */
  bridgeMs: number;
  /** Write transactions rolled back (conflicts retried, failed turns). */
  rollbacks: number;
  /** The statements sent most often: calls, and ms blocked in the hops each one made (SQL cut to 90 characters). */
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

/**
 * Counts the write path's traffic by wrapping the bridge (engine/db/postgres/bridge.ts):
 * - statements: each sent to the server (a multi-statement string such as `…; COMMIT` is one). A
 *   transaction's BEGIN counts once it is sent (with its first statement);
 * - hops: requests the engine's thread blocks on (`query`, a COMMIT, a ROLLBACK): queued
 *   statements (`queue`: void writes, locks, the BEGIN) ride along with the next one, pipelined
 *   (engine/db/postgres/bridge-thread.ts): a hop is about one round trip to the server (two when
 *   it ends with a statement without parameters, which waits for the others);
 * - the engine thread's time blocked in hops, per statement that made the hop.
 */
function countRoundTrips(engine: Engine): {
  statements: number;
  hops: number;
  reads: number;
  transactions: number;
  bridgeMs: number;
  bySql: Map<string, { calls: number; ms: number }>;
  reset(): void;
} {
  const bridge = (engine.storage as PostgresStorage).bridge;
  const counts = {
    statements: 0,
    hops: 0,
    reads: 0,
    transactions: 0,
    bridgeMs: 0,
    bySql: new Map<string, { calls: number; ms: number }>(),
    reset() {
      counts.statements = 0;
      counts.hops = 0;
      counts.reads = 0;
      counts.transactions = 0;
      counts.bridgeMs = 0;
      counts.bySql.clear();
    },
  };
  /** A BEGIN queued and not sent yet: it goes with the transaction's first statement, or never. */
  let beginPending = false;
  const entry = (sql: string) => {
    const key = sql.replace(/\s+/g, ' ').trim().slice(0, 90);
    let st = counts.bySql.get(key);
    if (!st) counts.bySql.set(key, (st = { calls: 0, ms: 0 }));
    return st;
  };
  const statement = (sql: string) => {
    if (beginPending) {
      beginPending = false;
      counts.statements++;
      entry('BEGIN').calls++;
    }
    counts.statements++;
    const st = entry(sql);
    st.calls++;
    return st;
  };
  const hop = <T>(sql: string, fn: () => T): T => {
    const st = statement(sql);
    counts.hops++;
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
  const { query, queue, begin, commitWith, rollback } = bridge;
  Object.assign(bridge, {
    query: (sql: string, params?: readonly unknown[]) => hop(sql, () => query.call(bridge, sql, params)),
    queue: (sql: string, params?: readonly unknown[]) => {
      // Outside a transaction the bridge runs it at once through query (counted there).
      if (bridge.inTransaction) statement(sql);
      queue.call(bridge, sql, params);
    },
    begin: () => {
      counts.transactions++;
      begin.call(bridge);
      beginPending = true;
    },
    commitWith: (sql: string) => hop(sql, () => commitWith.call(bridge, sql)),
    rollback: () => {
      const sent = bridge.inTransaction && !beginPending;
      beginPending = false;
      return sent ? hop('ROLLBACK', () => rollback.call(bridge)) : rollback.call(bridge);
    },
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
    statements: counts.statements,
    hops: counts.hops,
    reads: counts.reads,
    transactions: counts.transactions,
    bridgeMs: counts.bridgeMs,
    rollbacks: counts.bySql.get('ROLLBACK')?.calls ?? 0,
    top: [...counts.bySql]
      .sort((a, b) => b[1].calls - a[1].calls)
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
