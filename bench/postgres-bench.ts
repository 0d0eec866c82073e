/**
 * The PostgreSQL section of `npm run bench`: the engine on PostgreSQL held against a raw
 * PostgreSQL baseline (bench/postgres-raw.ts) and against pg-boss (bench/postgres-boss.ts), each
 * with 1 and 4 worker processes, on one server in one run (issue 11, "Measured in npm run
 * bench"). Runs only when a server is there (bench/postgres-setup.ts); otherwise the section says
 * why it was skipped.
 *
 * Every measurement gets a fresh database; every worker is a process of its own, started and
 * warmed up before the clock starts, all released at once by a line on stdin.
 */
import pg from 'pg';
import { createRawSchema, seedRaw, type RawPgWorkerResult } from './postgres-raw';
import { BOSS_BATCH, BOSS_WORKERS, bossTimes, installBoss } from './postgres-boss';
import type { EnginePgWorkerResult } from './postgres-engine';
import { startLatencyProxy } from './latency-proxy';
import { createDatabase, dropDatabase, openBenchPostgres } from './postgres-setup';
import { lineOf, spawnNode, type ChildRun } from './processes';
import { Latency, nowMs, sleep, type LatencySummary } from './stats';

/** Sizes of the PostgreSQL section. */
export interface PgConfig {
  /** Duration of each raw closed loop, ms. */
  rawMs: number;
  /** Rows cycling through the raw queue. */
  rawPopulation: number;
  /** Jobs pg-boss runs per measurement (sent and worked in it). */
  bossJobs: number;
  /** Linear instances the engine drains per measurement (3 transitions each). */
  engineInstances: number;
  /** Instances each engine worker runs on a scratch database before the clock starts. */
  engineWarm: number;
  /** Measurements of each row; the fastest is kept (the machine is shared). */
  repeats: number;
  /** The server across a network: each way's delay of the forwarding proxy (bench/latency-proxy.ts), ms. */
  remoteDelayMs: number;
  /** Linear instances the engine drains, and jobs pg-boss runs, through that proxy (1 process each). */
  remoteInstances: number;
  remoteBossJobs: number;
}

/** Worker-process counts measured. */
export const PG_PROCESSES = [1, 4] as const;

/** A raw run: `k` steps per transaction, `processes` workers. */
export interface RawPgRun {
  k: number;
  processes: number;
  population: number;
  steps: number;
  stepsPerSec: number;
  txn: LatencySummary;
  /** Client CPU per step, µs (mean over the processes). */
  cpuUsPerStep: number;
}

/** A pg-boss run. */
export interface BossRun {
  processes: number;
  jobs: number;
  /** First send → last completion, database clock, s. */
  seconds: number;
  jobsPerSec: number;
  batchSize: number;
  workersPerProcess: number;
}

/** An engine run on PostgreSQL. */
export interface EnginePgRun {
  processes: number;
  instances: number;
  transitions: number;
  seconds: number;
  transitionsPerSec: number;
  /** Write-path statements per transition (a hop's statements are pipelined: about one round trip to the server a hop). */
  roundTripsPerTransition: number;
  /** Requests the engine's thread blocked on per transition (queued statements ride along). */
  hopsPerTransition: number;
  /** Write transactions per transition. */
  /** Read-pool queries per transition (the idle loop's `nextDue`, …): round trips too. */
  readsPerTransition: number;
  transactionsPerTransition: number;
  /** The engine thread's time blocked on the bridge per transition, µs. */
  bridgeUsPerTransition: number;
  /** CPU per transition in the worker processes (both threads), µs. */
  cpuUsPerTransition: number;
  /** Write transactions rolled back per transition (conflicts retried). */
  rollbacksPerTransition: number;
  /** The statements the first process sent most often: calls and µs blocked in the hops they made, per transition. */
  top: { sql: string; perTransition: number; usPerTransition: number }[];
}

/** What the section measured, or why it did not run. */
export type PgSection =
  | { skipped: string }
  | {
      server: Record<string, string>;
      owned: boolean;
      config: PgConfig;
      raw: RawPgRun[];
      boss: BossRun[];
      engine: EnginePgRun[];
      /** The engine and pg-boss, 1 process each, through a proxy that delays each way by `delayMs`. */
      remote?: { delayMs: number; engine?: EnginePgRun; boss?: BossRun };
      /** Rows that failed with the reason (the others still print). */
      failures: string[];
    };

/** Starts `processes` children of `script` and waits for each to say BENCH_READY. */
async function readyChildren(script: string, args: (i: number) => string, processes: number, what: string): Promise<ChildRun[]> {
  const children = Array.from({ length: processes }, (_, i) => spawnNode(script, [args(i)]));
  try {
    await Promise.all(children.map((c) => lineOf(c, 'BENCH_READY', what)));
  } catch (err) {
    for (const c of children) c.kill();
    throw err;
  }
  return children;
}

/** The last `BENCH_PROGRESS n` a child printed (0 before any). */
function progress(c: ChildRun): number {
  const at = c.stdout.lastIndexOf('BENCH_PROGRESS ');
  if (at < 0) return 0;
  return Number.parseInt(c.stdout.slice(at + 15), 10) || 0;
}

/** Waits until the children's progress adds up to `total`. @throws Error after `timeoutMs` or when one exits. */
async function untilProgress(children: ChildRun[], total: number, timeoutMs: number, what: string): Promise<void> {
  const deadline = nowMs() + timeoutMs;
  let exited = false;
  for (const c of children) void c.exited.then(() => (exited = true));
  while (children.reduce((s, c) => s + progress(c), 0) < total) {
    if (exited) throw new Error(`bench: a ${what} process exited early`);
    if (nowMs() > deadline) throw new Error(`bench: ${what} did not reach ${total} within ${timeoutMs / 1000} s`);
    await sleep(20);
  }
}

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** Raw runs with `processes` workers on one database: 1 step, then 32 steps a transaction. */
async function rawRuns(admin: string, processes: number, cfg: PgConfig): Promise<RawPgRun[]> {
  const name = `bench_raw_${processes}`;
  const url = await createDatabase(admin, name);
  let children: ChildRun[] = [];
  try {
    await withClient(url, async (c) => {
      await createRawSchema(c);
      await seedRaw(c, cfg.rawPopulation);
    });
    children = await readyChildren('bench/postgres-raw.ts', () => JSON.stringify({ url, durationMs: cfg.rawMs }), processes, 'raw PostgreSQL');
    const out: RawPgRun[] = [];
    for (const k of [1, 32]) {
      for (const c of children) c.write(`warm ${k}`);
      await Promise.all(children.map((c) => lineOf(c, `BENCH_WARMED ${k}`, 'raw PostgreSQL')));
      for (const c of children) c.write(`run ${k}`);
      const results = await Promise.all(children.map(async (c) => JSON.parse(await lineOf(c, `BENCH_RESULT ${k} `, 'raw PostgreSQL')) as RawPgWorkerResult));
      const txn = new Latency();
      for (const r of results) txn.addEncoded(r.txn);
      const steps = results.reduce((s, r) => s + r.steps, 0);
      const seconds = results.reduce((s, r) => s + r.seconds, 0) / results.length;
      out.push({
        k,
        processes,
        population: cfg.rawPopulation,
        steps,
        stepsPerSec: steps / seconds,
        txn: txn.summary(),
        cpuUsPerStep: results.reduce((s, r) => s + r.cpuUsPerStep, 0) / results.length,
      });
    }
    for (const c of children) c.write('exit');
    await Promise.all(children.map((c) => c.exited));
    return out;
  } finally {
    for (const c of children) c.kill();
    await dropDatabase(admin, name);
  }
}

/** `url` with its port replaced by `port` (a proxy's on 127.0.0.1), or `url` itself. */
function through(url: string, port: number | undefined): string {
  if (port === undefined) return url;
  const u = new URL(url);
  u.hostname = '127.0.0.1';
  u.port = String(port);
  return u.toString();
}

async function bossRun(admin: string, processes: number, cfg: PgConfig, proxyPort?: number, jobCount = cfg.bossJobs): Promise<BossRun> {
  const name = `bench_boss_${processes}`;
  const url = through(await createDatabase(admin, name), proxyPort);
  const jobs = Math.ceil(jobCount / processes) * processes;
  let children: ChildRun[] = [];
  try {
    await installBoss(url);
    const share = jobs / processes;
    children = await readyChildren('bench/postgres-boss.ts', (i) => JSON.stringify({ url, jobs: share, first: i * share }), processes, 'pg-boss');
    for (const c of children) c.write('go');
    await untilProgress(children, jobs, 300_000, 'pg-boss');
    // The worker counts a job when its handler returns; pg-boss completes it just after.
    const times = await withClient(url, async (c) => {
      for (;;) {
        const t = await bossTimes(c);
        if (t.completed >= jobs) return t;
        await sleep(10);
      }
    });
    for (const c of children) c.write('stop');
    await Promise.all(children.map((c) => c.exited));
    return { processes, jobs, seconds: times.seconds, jobsPerSec: jobs / times.seconds, batchSize: BOSS_BATCH, workersPerProcess: BOSS_WORKERS };
  } finally {
    for (const c of children) c.kill();
    await dropDatabase(admin, name);
  }
}

async function engineRun(admin: string, processes: number, cfg: PgConfig, proxyPort?: number, n = cfg.engineInstances): Promise<EnginePgRun> {
  const name = `bench_engine_${processes}`;
  const warmNames = Array.from({ length: processes }, (_, i) => `bench_engine_warm_${i}`);
  const url = through(await createDatabase(admin, name), proxyPort);
  let children: ChildRun[] = [];
  try {
    // Warm-up goes direct: the code is compiled the same, and sooner.
    const warmUrls = await Promise.all(warmNames.map((w) => createDatabase(admin, w)));
    children = await readyChildren(
      'bench/postgres-engine.ts',
      (i) => JSON.stringify({ url, warmUrl: warmUrls[i], warm: cfg.engineWarm, prepare: i === 0 ? n : undefined }),
      processes,
      'engine on PostgreSQL',
    );
    const t0 = performance.timeOrigin + nowMs();
    for (const c of children) c.write('go');
    await untilProgress(children, 3 * n, 600_000, 'engine on PostgreSQL');
    for (const c of children) c.write('stop');
    const results = await Promise.all(children.map(async (c) => JSON.parse(await lineOf(c, 'BENCH_RESULT ', 'engine on PostgreSQL')) as EnginePgWorkerResult));
    await Promise.all(children.map((c) => c.exited));
    const transitions = results.reduce((s, r) => s + r.transitions, 0);
    if (transitions !== 3 * n) throw new Error(`bench: ${processes} engine process(es) made ${transitions} transitions, expected ${3 * n}`);
    const seconds = (Math.max(...results.map((r) => r.lastCommitEpochMs)) - t0) / 1000;
    const sum = (f: (r: EnginePgWorkerResult) => number) => results.reduce((s, r) => s + f(r), 0);
    const first = results[0] as EnginePgWorkerResult;
    return {
      processes,
      instances: n,
      transitions,
      seconds,
      transitionsPerSec: transitions / seconds,
      roundTripsPerTransition: sum((r) => r.statements) / transitions,
      hopsPerTransition: sum((r) => r.hops) / transitions,
      readsPerTransition: sum((r) => r.reads) / transitions,
      transactionsPerTransition: sum((r) => r.transactions) / transitions,
      bridgeUsPerTransition: (sum((r) => r.bridgeMs) * 1000) / transitions,
      cpuUsPerTransition: sum((r) => r.cpuUsPerTransition * r.transitions) / transitions,
      rollbacksPerTransition: sum((r) => r.rollbacks) / transitions,
      top: first.top.map((t) => ({
        sql: t.sql,
        perTransition: t.calls / Math.max(1, first.transitions),
        usPerTransition: (t.ms * 1000) / Math.max(1, first.transitions),
      })),
    };
  } finally {
    for (const c of children) c.kill();
    await dropDatabase(admin, name);
    for (const w of warmNames) await dropDatabase(admin, w);
  }
}

/** Keeps the faster of `had` and `run`. */
function best<T>(had: T | undefined, run: T, rate: (t: T) => number): T {
  return had === undefined || rate(run) > rate(had) ? run : had;
}

/**
 * Runs the section: the server (or the reason there is none), then per row and process count
 * the fastest of `cfg.repeats` runs. A row that fails is reported in `failures`, not thrown.
 */
export async function runPostgresSection(cfg: PgConfig, log: (message: string) => void): Promise<PgSection> {
  const server = await openBenchPostgres();
  if ('skipped' in server) {
    log(`PostgreSQL section skipped: ${server.skipped}`);
    return server;
  }
  const s = server.settings;
  log(`PostgreSQL ${s.server_version} (${server.owned ? 'a cluster of the bench' : 'RUNNEL_BENCH_PG_URL'}): fsync=${s.fsync}, synchronous_commit=${s.synchronous_commit}`);
  const raw: Record<string, RawPgRun> = {};
  const boss: Record<number, BossRun> = {};
  const engine: Record<number, EnginePgRun> = {};
  const remote: { delayMs: number; engine?: EnginePgRun; boss?: BossRun } = { delayMs: cfg.remoteDelayMs };
  const failures: string[] = [];
  const attempt = async (what: string, fn: () => Promise<void>) => {
    log(what);
    try {
      await fn();
    } catch (err) {
      failures.push(`${what}: ${(err as Error).message}`);
      log(`failed: ${(err as Error).message}`);
    }
  };
  try {
    for (let rep = 0; rep < cfg.repeats; rep++) {
      const round = cfg.repeats > 1 ? ` (round ${rep + 1} of ${cfg.repeats})` : '';
      for (const processes of PG_PROCESSES) {
        await attempt(`raw PostgreSQL: 1 and 32 steps/transaction, ${processes} process(es), ${cfg.rawMs / 1000} s each${round}`, async () => {
          for (const run of await rawRuns(server.adminUrl, processes, cfg)) {
            const key = `${run.k}-${processes}`;
            raw[key] = best(raw[key], run, (r) => r.stepsPerSec);
          }
        });
        await attempt(`pg-boss: ${cfg.bossJobs} jobs, ${processes} process(es)${round}`, async () => {
          boss[processes] = best(boss[processes], await bossRun(server.adminUrl, processes, cfg), (r) => r.jobsPerSec);
        });
        await attempt(`engine on PostgreSQL: ${cfg.engineInstances} × 3-node linear, ${processes} process(es)${round}`, async () => {
          engine[processes] = best(engine[processes], await engineRun(server.adminUrl, processes, cfg), (r) => r.transitionsPerSec);
        });
      }
    }
    // Across a network: what a round trip costs, once (the proxy's delay dwarfs the machine's noise).
    const proxy = await startLatencyProxy(Number(new URL(server.adminUrl).port || 5432), cfg.remoteDelayMs);
    try {
      await attempt(`pg-boss across ${cfg.remoteDelayMs} ms each way: ${cfg.remoteBossJobs} jobs, 1 process`, async () => {
        remote.boss = await bossRun(server.adminUrl, 1, cfg, proxy.port, cfg.remoteBossJobs);
      });
      await attempt(`engine on PostgreSQL across ${cfg.remoteDelayMs} ms each way: ${cfg.remoteInstances} × 3-node linear, 1 process`, async () => {
        remote.engine = await engineRun(server.adminUrl, 1, cfg, proxy.port, cfg.remoteInstances);
      });
    } finally {
      await proxy.close();
    }
  } finally {
    await server.stop();
  }
  return { server: s, owned: server.owned, config: cfg, raw: Object.values(raw), boss: Object.values(boss), engine: Object.values(engine), remote, failures };
}
