/**
 * `npm run bench [-- --quick] [-- --postgres-only]`: the engine held against raw SQLite on the
 * same file settings, measured side by side in one run (issue 6), then the PostgreSQL section
 * when a server is there (issue 11, bench/postgres-bench.ts; `--postgres-only` runs it alone).
 * Prints a table with a PASS/MISS column per target and writes bench/results/latest.json
 * (latest-postgres.json for `--postgres-only`).
 *
 * Every task runs in its own child process (a fresh heap, its own peak RSS), one at a time: the
 * machine is small and noisy, so each target is a ratio to a raw figure from the same run.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { Task } from './child';
import type { DesignerOpen } from './designer';
import type { SchedulesIdle } from './schedules-idle';
import type { EngineFootprint, EngineOpenLoop, EngineThroughput } from './engine-run';
import type { RawFootprint, RawOpenLoop, RawThroughput, Sync } from './raw';
import { Latency, nowMs, removeDb, sleep, type LatencySummary } from './stats';
import { formatReport, type Report, type StatementsRun } from './report';
import { lineOf, ROOT, spawnNode } from './processes';
import type { FsyncProbe, PlainjobThroughput } from './peers';
import type { RetentionShrink } from './retention-shrink';
import { runPostgresSection, type PgConfig } from './postgres-bench';
import { formatPostgresReport } from './postgres-report';

const RESULTS = path.join(ROOT, 'bench', 'results');
const WORK = path.join(RESULTS, `work-${process.pid}`);

const quick = process.argv.includes('--quick');

/** Sizes of each mode (quick: under 60 s; full: under 10 min). */
const CONFIG = quick
  ? {
      rawMs: 750,
      rawPopulation: 1000,
      footprint: 1000,
      linear: 2000,
      fanout: 200,
      retry: 500,
      population: 10_000,
      small: 1000,
      scaleN: 1500,
      openMs: 2500,
      multiN: 6000,
      apiMs: 2500,
      designerOpens: 3,
      plainjobFull: 2000,
      plainjobNormal: 10_000,
      fsyncMs: 1000,
      shrinkN: 10_000,
      idleMs: 5000,
    }
  : {
      rawMs: 3000,
      rawPopulation: 1000,
      footprint: 10_000,
      linear: 10_000,
      fanout: 1000,
      retry: 2000,
      population: 100_000,
      small: 1000,
      scaleN: 10_000,
      openMs: 15_000,
      multiN: 20_000,
      apiMs: 20_000,
      designerOpens: 5,
      plainjobFull: 10_000,
      plainjobNormal: 40_000,
      fsyncMs: 3000,
      shrinkN: 100_000,
      idleMs: 30_000,
    };

/** Runs of the throughput and several-process figures; the best of them is kept. */
const REPEATS = quick ? 1 : 2;

/** Sizes of the PostgreSQL section (quick: about 30 s; full: a few minutes). */
const PG_CONFIG: PgConfig = quick
  ? { rawMs: 1000, rawPopulation: 1000, bossJobs: 3000, engineInstances: 500, engineWarm: 150, repeats: 1, remoteDelayMs: 1, remoteInstances: 200, remoteBossJobs: 1000 }
  : { rawMs: 3000, rawPopulation: 1000, bossJobs: 20_000, engineInstances: 2000, engineWarm: 500, repeats: REPEATS, remoteDelayMs: 1, remoteInstances: 600, remoteBossJobs: 3000 };

/** Arrival rate of the open loops, as a share of the capacity just measured. */
const LOAD = 0.5;

function log(message: string): void {
  process.stderr.write(`[bench ${((nowMs() - started) / 1000).toFixed(1).padStart(5)} s] ${message}\n`);
}
const started = nowMs();

/** Runs one task in a child process and returns its result. */
async function task<T>(t: Task, what: string): Promise<T> {
  log(what);
  const run = spawnNode('bench/child.ts', [JSON.stringify(t)]);
  const json = await lineOf(run, 'BENCH_RESULT ', what);
  await run.exited;
  return JSON.parse(json) as T;
}

const dbFile = (name: string) => path.join(WORK, `${name}.db`);

function copyDb(from: string, to: string): void {
  fs.copyFileSync(from, to);
  for (const ext of ['-wal', '-shm']) if (fs.existsSync(from + ext)) fs.copyFileSync(from + ext, to + ext);
}

/** Several worker processes on one file draining `n` linear instances. */
async function multiProcess(
  workers: number,
  n: number,
  sync: Sync,
  name: string,
): Promise<{
  workers: number;
  transitionsPerSec: number;
  service: LatencySummary;
  lockWait: LatencySummary;
}> {
  const file = dbFile(name);
  log(`several processes: ${workers} worker(s) drain ${n} linear instances`);
  const children = Array.from({ length: workers }, () => spawnNode('bench/worker.ts', [file, sync]));
  await Promise.all(children.map((c) => lineOf(c, 'BENCH_READY', 'worker')));
  const t0 = performance.timeOrigin + nowMs();
  for (const c of children) c.write('go');
  const results = await Promise.all(
    children.map(
      async (c) =>
        JSON.parse(await lineOf(c, 'BENCH_RESULT ', 'worker')) as {
          transitions: number;
          service: string;
          lockWait: string;
          lastCommitEpochMs: number;
        },
    ),
  );
  await Promise.all(children.map((c) => c.exited));
  const service = new Latency();
  const lockWait = new Latency();
  for (const r of results) {
    service.addEncoded(r.service);
    lockWait.addEncoded(r.lockWait);
  }
  const transitions = results.reduce((s, r) => s + r.transitions, 0);
  if (transitions !== 3 * n)
    throw new Error(`bench: ${workers} workers made ${transitions} transitions, expected ${3 * n}`);
  const end = Math.max(...results.map((r) => r.lastCommitEpochMs));
  return {
    workers,
    transitionsPerSec: transitions / ((end - t0) / 1000),
    service: service.summary(),
    lockWait: lockWait.summary(),
  };
}

/** API round trips against the browser host while its engine runs flat out. */
async function apiRoundTrips(file: string, sync: Sync, ms: number) {
  if (!fs.existsSync(path.join(ROOT, 'server', 'index.ts'))) return undefined;
  log(`API round trips for ${ms / 1000} s (browser host, engine flat out)`);
  const host = spawnNode('bench/api-host.ts', [file, sync]);
  const { url, token } = JSON.parse(await lineOf(host, 'BENCH_API ', 'api host')) as {
    url: string;
    token: string;
  };
  const ids = new Database(file, { readonly: true }).prepare(`SELECT max(id) AS max FROM instance`).get() as {
    max: number;
  };
  const call = async (channel: string, body: unknown): Promise<number> => {
    const s = nowMs();
    const res = await fetch(`${url}/api/${channel}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const out = (await res.json()) as { ok: boolean; error?: { message: string } };
    if (!out.ok) throw new Error(`bench: ${channel} failed: ${out.error?.message ?? res.status}`);
    return nowMs() - s;
  };
  const kinds = {
    list: { h: new Latency(), body: () => ({}) },
    filter: { h: new Latency(), body: () => ({ status: ['WAITING'] }) },
    get: { h: new Latency(), body: () => ({ id: 1 + Math.floor(Math.random() * ids.max) }) },
  };
  const channel = { list: 'instance:list', filter: 'instance:list', get: 'instance:get' } as const;
  // Warm-up, untimed: the first call of each kind compiles its code paths and prepares its
  // statements (tens of ms once), which a monitor open for a while has long paid.
  for (const k of ['list', 'filter', 'get'] as const) await call(channel[k], kinds[k].body());
  const t0 = nowMs();
  // One request at a time, 15 ms apart: a busy monitor, not a load test of the host.
  while (nowMs() - t0 < ms) {
    for (const k of ['list', 'filter', 'get'] as const) {
      kinds[k].h.record(await call(channel[k], kinds[k].body()));
      await new Promise((r) => setTimeout(r, 15));
    }
  }
  host.write('stop');
  const r = JSON.parse(await lineOf(host, 'BENCH_RESULT ', 'api host')) as { transitionsPerSec: number };
  await host.exited;
  return {
    list: kinds.list.h.summary(),
    filter: kinds.filter.h.summary(),
    get: kinds.get.h.summary(),
    engineTransitionsPerSec: r.transitionsPerSec,
  };
}

/** The designer task gives up after this long (it takes a few seconds), ms. */
const DESIGNER_TIMEOUT_MS = 90_000;

/** Opening a 500-node workflow in the Designer (Chromium); n/a with the reason, never a throw. */
async function designerOpens(opens: number): Promise<DesignerOpen> {
  const what = `designer: open a 500-node, 600-edge workflow ${opens} times (Chromium, browser host)`;
  log(what);
  const t: Task = { kind: 'designer-open', opens };
  const run = spawnNode('bench/child.ts', [JSON.stringify(t)]);
  // SIGTERM, not SIGKILL: Playwright closes its Chromium on it.
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    run.kill('SIGTERM');
  }, DESIGNER_TIMEOUT_MS);
  try {
    const result = JSON.parse(await lineOf(run, 'BENCH_RESULT ', what)) as DesignerOpen;
    // A failed start can leave the host listening in the child: give it a few seconds to exit.
    for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
      const done = await Promise.race([run.exited.then(() => true), sleep(5000).then(() => false)]);
      if (done) break;
      run.kill(signal);
    }
    return result;
  } catch (err) {
    const reason = timedOut
      ? `no result within ${DESIGNER_TIMEOUT_MS / 1000} s`
      : err instanceof Error
        ? err.message
        : String(err);
    return { unavailable: `failed: ${reason}` };
  } finally {
    clearTimeout(timer);
  }
}

function machine() {
  const cpu =
    fs.readFileSync('/proc/cpuinfo', 'utf8').match(/^model name\s*:\s*(.*)$/m)?.[1] ??
    os.cpus()[0]?.model ??
    'unknown';
  const db = new Database(':memory:');
  const sqlite = (db.prepare('SELECT sqlite_version() AS v').get() as { v: string }).v;
  db.close();
  return {
    nproc: os.availableParallelism(),
    cpu,
    memGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    sqlite,
    platform: `${os.type()} ${os.release()}`,
    loadAvgAtStart: os.loadavg().map((x) => Math.round(x * 100) / 100),
  };
}

async function main(): Promise<void> {
  fs.rmSync(WORK, { recursive: true, force: true });
  fs.mkdirSync(WORK, { recursive: true });
  const info = machine();
  log(
    `${quick ? 'quick' : 'full'} run on ${info.nproc} × ${info.cpu}, Node ${info.node}, SQLite ${info.sqlite}, load ${info.loadAvgAtStart.join(' ')}`,
  );
  if (process.argv.includes('--postgres-only')) {
    const pg = await runPostgresSection(PG_CONFIG, log);
    const head = [`Runnel benchmark, PostgreSQL section alone (${quick ? 'quick' : 'full'}), ${new Date().toISOString()}, ${((nowMs() - started) / 1000).toFixed(0)} s`, `machine: ${info.nproc} × ${info.cpu}, Node ${info.node}, load ${info.loadAvgAtStart.join(' ')} → ${os.loadavg().map((l) => l.toFixed(2)).join(',')}`];
    const { text, targets } = formatPostgresReport(pg, head);
    fs.writeFileSync(path.join(RESULTS, 'latest-postgres.json'), `${JSON.stringify({ machine: info, postgres: pg, targets }, null, 2)}\n`);
    process.stdout.write(text);
    return;
  }

  // 1 + 2. The raw baseline and engine throughput, alternating, best of REPEATS each (the
  // machine is shared: a neighbour's burst should not decide a ratio).
  const rawKeys = (['FULL', 'NORMAL'] as const).flatMap((sync) => [1, 32].map((k) => ({ sync, k })));
  const workflows = ['linear', 'fanout', 'retry'] as const;
  const raw: Record<string, RawThroughput> = {};
  const engine: Record<string, EngineThroughput> = {};
  const keepBest = <T>(into: Record<string, T>, key: string, run: T, rate: (t: T) => number) => {
    const had = into[key];
    if (had === undefined || rate(run) > rate(had)) into[key] = run;
  };
  for (let rep = 0; rep < REPEATS; rep++) {
    const round = REPEATS > 1 ? ` (round ${rep + 1} of ${REPEATS})` : '';
    const rawRuns = await task<RawThroughput[]>(
      {
        kind: 'batch',
        tasks: rawKeys.map(({ sync, k }): Task => ({
          kind: 'raw-closed',
          file: dbFile(`raw-${sync}-${k}-${rep}`),
          sync,
          k,
          population: CONFIG.rawPopulation,
          durationMs: CONFIG.rawMs,
        })),
      },
      `raw baseline: FULL and NORMAL at 1 and 32 steps/transaction${round}`,
    );
    rawKeys.forEach(({ sync, k }, i) =>
      keepBest(raw, `${sync}-${k}`, rawRuns[i] as RawThroughput, (t) => t.stepsPerSec),
    );
    for (const sync of ['FULL', 'NORMAL'] as const) {
      // FULL also runs the linear workflow under a concurrency limit (the flow-control row).
      const measured = sync === 'FULL' ? [...workflows, 'linearCapped' as const] : workflows;
      const runs = await task<EngineThroughput[]>(
        {
          kind: 'batch',
          tasks: measured.map((wf) => ({
            kind: 'engine-throughput',
            file: dbFile(`engine-${sync}-${wf}-${rep}`),
            sync,
            workflow: wf,
            n: CONFIG[wf === 'linearCapped' ? 'linear' : wf],
            population: 0,
          })),
        },
        `engine ${sync}: ${measured.map((wf) => `${CONFIG[wf === 'linearCapped' ? 'linear' : wf]} × ${wf}`).join(', ')}${round}`,
      );
      measured.forEach((wf, i) =>
        keepBest(engine, `${sync}-${wf}`, runs[i] as EngineThroughput, (t) => t.transitionsPerSec),
      );
    }
  }
  // The peer queue on the same pragmas, best of REPEATS, and the disk's own limit.
  const plainjob: Partial<Record<Sync, PlainjobThroughput>> = {};
  for (let rep = 0; rep < REPEATS; rep++) {
    const round = REPEATS > 1 ? ` (round ${rep + 1} of ${REPEATS})` : '';
    const syncs = ['FULL', 'NORMAL'] as const;
    const runs = await task<PlainjobThroughput[]>(
      {
        kind: 'batch',
        tasks: syncs.map((sync): Task => ({
          kind: 'plainjob',
          file: dbFile(`plainjob-${sync}-${rep}`),
          sync,
          jobs: sync === 'FULL' ? CONFIG.plainjobFull : CONFIG.plainjobNormal,
        })),
      },
      `peer: plainjob, ${CONFIG.plainjobFull} no-op jobs under FULL and ${CONFIG.plainjobNormal} under NORMAL${round}`,
    );
    syncs.forEach((sync, i) => keepBest(plainjob, sync, runs[i] as PlainjobThroughput, (t) => t.jobsPerSec));
  }
  const fsyncRun = await task<FsyncProbe>(
    { kind: 'fsync', dir: WORK, durationMs: CONFIG.fsyncMs },
    `the disk: 4 KiB write + fdatasync in a loop for ${CONFIG.fsyncMs / 1000} s`,
  );

  // Retention shrinking the file (issue 14's figure).
  const shrink = await task<RetentionShrink>(
    { kind: 'retention-shrink', file: dbFile('retention-shrink'), n: CONFIG.shrinkN },
    `retention: ${CONFIG.shrinkN} instances completed, 90% pruned, the file's size before and after`,
  );

  // SQL statements per transition (counted, not timed: the counting wraps every statement).
  const statements = (await task<StatementsRun[]>(
    {
      kind: 'batch',
      tasks: workflows.map((wf) => ({ kind: 'engine-statements', file: dbFile(`engine-statements-${wf}`), workflow: wf, n: Math.min(CONFIG[wf], 1000) })),
    },
    'SQL statements per transition: linear, fan-out and retry, counted',
  )) as StatementsRun[];
  const rawFootprint = await task<RawFootprint>(
    { kind: 'raw-footprint', file: dbFile('raw-footprint'), sync: 'FULL', n: CONFIG.footprint },
    `raw footprint: ${CONFIG.footprint} × 4 steps`,
  );
  const [engineFootprint, engineFootprintEcho] = (await task<EngineFootprint[]>(
    {
      kind: 'batch',
      tasks: (['linear4', 'linear4echo'] as const).map((workflow) => ({
        kind: 'engine-footprint',
        file: dbFile(`engine-footprint-${workflow}`),
        sync: 'FULL',
        workflow,
        n: CONFIG.footprint,
      })),
    },
    `engine footprint: ${CONFIG.footprint} × 4 no-op nodes, and × 4 bare pass nodes`,
  )) as [EngineFootprint, EngineFootprint];

  // 3 + 4. Scale: capacity with a large live population, then the open loop at half of it; the
  // raw pattern with the same population and the same arrivals; capacity with a small population.
  const base = dbFile('population');
  await task(
    { kind: 'engine-populate', file: base, n: CONFIG.population },
    `engine: park ${CONFIG.population} live instances`,
  );
  type Scale<C, O> = { closed: C; open: O; peakRssBytes: number; peakWalBytes: number; attempts?: number };
  const rawScale: Record<string, Scale<RawThroughput, RawOpenLoop>> = {};
  const engineScale: Record<string, Scale<EngineThroughput, EngineOpenLoop>> = {};
  let engineLarge: EngineThroughput | undefined;
  let engineSmall: EngineThroughput | undefined;
  const smallFile = (rep: number) => dbFile(`engine-small-${rep}`);
  // Best of REPEATS: the open loops by their P99 (a neighbour's burst lands in one of them, not in
  // both), the capacities by their rate.
  for (let rep = 0; rep < REPEATS; rep++) {
    const round = REPEATS > 1 ? ` (round ${rep + 1} of ${REPEATS})` : '';
    for (const sync of ['FULL', 'NORMAL'] as const) {
      const file = dbFile(`engine-scale-${sync}-${rep}`);
      copyDb(base, file);
      const engineRun = await task<Scale<EngineThroughput, EngineOpenLoop>>(
        {
          kind: 'engine-scale',
          file,
          sync,
          population: CONFIG.population,
          n: CONFIG.scaleN,
          openMs: CONFIG.openMs,
          load: LOAD,
        },
        `engine ${sync}: capacity with ${CONFIG.population} live, then open loop at ${LOAD * 100}% of it${round}`,
      );
      const rawRun = await task<Scale<RawThroughput, RawOpenLoop>>(
        {
          kind: 'raw-scale',
          file: dbFile(`raw-scale-${sync}-${rep}`),
          sync,
          population: CONFIG.population,
          closedMs: CONFIG.rawMs,
          openMs: CONFIG.openMs,
          rate: engineRun.open.ratePerSec,
        },
        `raw ${sync}: capacity with ${CONFIG.population} live, then the engine's arrivals${round}`,
      );
      // Copies of the large file add up: drop each once measured.
      removeDb(file);
      removeDb(dbFile(`raw-scale-${sync}-${rep}`));
      const p99 = (x: Scale<unknown, { dueToCommitted: LatencySummary }> | undefined) =>
        x?.open.dueToCommitted.p99 ?? Infinity;
      if (p99(engineRun) < p99(engineScale[sync])) engineScale[sync] = engineRun;
      if (p99(rawRun) < p99(rawScale[sync])) rawScale[sync] = rawRun;
      if (sync === 'FULL' && engineRun.closed.transitionsPerSec > (engineLarge?.transitionsPerSec ?? 0))
        engineLarge = engineRun.closed;
    }
    const [, small] = (await task<[unknown, EngineThroughput]>(
      {
        kind: 'batch',
        tasks: [
          { kind: 'engine-populate', file: smallFile(rep), n: CONFIG.small },
          {
            kind: 'engine-throughput',
            file: smallFile(rep),
            sync: 'FULL',
            workflow: 'linear',
            n: CONFIG.scaleN,
            population: CONFIG.small,
          },
        ],
      },
      `engine FULL: capacity with ${CONFIG.small} live${round}`,
    )) as [unknown, EngineThroughput];
    if (small.transitionsPerSec > (engineSmall?.transitionsPerSec ?? 0)) engineSmall = small;
  }
  if (!engineLarge || !engineSmall) throw new Error('bench: no scale run');

  // 5. API round trips (the browser host) on the large file.
  const apiFile = dbFile('api');
  copyDb(base, apiFile);
  const api = await apiRoundTrips(apiFile, 'FULL', CONFIG.apiMs);
  const designer = await designerOpens(CONFIG.designerOpens);
  // Schedules while idle: CPU per idle minute with none, then with 1,000 (none due).
  const schedulesIdle = (await task<SchedulesIdle[]>(
    { kind: 'batch', tasks: [0, 1000].map((n): Task => ({ kind: 'schedules-idle', file: dbFile(`idle-${n}`), schedules: n, durationMs: CONFIG.idleMs })) },
    `schedules while idle: an idle worker with 0, then 1,000 schedules, ${CONFIG.idleMs / 1000} s each`,
  )) as SchedulesIdle[];

  // 6. Several processes.
  const counts = [1, 2, 4];
  await task(
    {
      kind: 'batch',
      tasks: counts.map((workers) => ({
        kind: 'engine-prepare',
        file: dbFile(`multi-${workers}`),
        workflow: 'linear',
        n: CONFIG.multiN,
      })),
    },
    `several processes: ${CONFIG.multiN} linear instances in a file for each of 1, 2, 4 workers`,
  );
  const multi: Awaited<ReturnType<typeof multiProcess>>[] = [];
  for (let rep = 0; rep < REPEATS; rep++) {
    for (const [i, workers] of counts.entries()) {
      if (rep > 0) {
        await task(
          {
            kind: 'engine-prepare',
            file: dbFile(`multi-${workers}-${rep}`),
            workflow: 'linear',
            n: CONFIG.multiN,
          },
          `several processes: a fresh file for ${workers} worker(s) (round ${rep + 1} of ${REPEATS})`,
        );
      }
      const run = await multiProcess(
        workers,
        CONFIG.multiN,
        'FULL',
        rep > 0 ? `multi-${workers}-${rep}` : `multi-${workers}`,
      );
      const had = multi[i];
      if (had === undefined || run.transitionsPerSec > had.transitionsPerSec) multi[i] = run;
    }
  }

  // 7. PostgreSQL (only when a server is there).
  const postgres = await runPostgresSection(PG_CONFIG, log);

  const report: Report = {
    mode: quick ? 'quick' : 'full',
    at: new Date().toISOString(),
    seconds: (nowMs() - started) / 1000,
    machine: { ...info, loadAvgAtEnd: os.loadavg().map((x) => Math.round(x * 100) / 100) },
    config: { ...CONFIG, load: LOAD, repeats: REPEATS },
    raw,
    rawFootprint,
    engine,
    statements,
    engineFootprint,
    engineFootprintEcho,
    rawScale,
    engineScale,
    engineLarge,
    engineSmall,
    api,
    designer,
    schedulesIdle,
    multi,
    peers: { plainjob, fsync: fsyncRun },
    shrink,
    postgres,
  };
  const table = formatReport(report);
  fs.writeFileSync(path.join(RESULTS, 'latest.json'), `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(table);
  log(`wrote bench/results/latest.json`);
}

try {
  await main();
} finally {
  if (!process.argv.includes('--keep')) fs.rmSync(WORK, { recursive: true, force: true });
}
