/**
 * One benchmark task in a fresh process (so each peak RSS is its own):
 * `node --import tsx bench/child.ts '<task json>'`. Prints `BENCH_RESULT <json>` on success.
 */
import fs from 'node:fs';
import { rawClosedLoop, rawFootprint, rawOpenLoop, openRaw, rawPattern, seedMany, type Sync } from './raw';
import {
  engineFootprint,
  engineOpenLoop,
  engineThroughput,
  openEngine,
  populate,
  startBatch,
} from './engine-run';
import { fsyncProbe, plainjobThroughput } from './peers';
import { retentionShrink } from './retention-shrink';
import { sampleResources } from './stats';
import { schedulesIdle } from './schedules-idle';
import { countStatements, resetStatementCounts, statementCounts } from './statements';
import { FANOUT, LINEAR, LINEAR4, LINEAR4_ECHO, LINEAR_CAPPED, RETRY } from './workflows';

/** An open loop whose last arrival committed this long after it was due did not keep up, ms. */
export const OVERLOAD_DRAIN_MS = 1000;

/** Workflows by the short name tasks use. */
export const WORKFLOWS = {
  linear: LINEAR,
  linearCapped: LINEAR_CAPPED,
  fanout: FANOUT,
  retry: RETRY,
  linear4: LINEAR4,
  linear4echo: LINEAR4_ECHO,
} as const;

/** What a child can be asked to do. */
export type Task =
  /** Several tasks one after the other (saves a process start each; their RSS is not read). */
  | { kind: 'batch'; tasks: Task[] }
  | { kind: 'raw-closed'; file: string; sync: Sync; k: number; population: number; durationMs: number }
  | { kind: 'raw-footprint'; file: string; sync: Sync; n: number }
  /**
   * Capacity (K = 32) with `population` live, then an open loop with the engine's arrivals
   * (`rate` instances/s).
   */
  | {
      kind: 'raw-scale';
      file: string;
      sync: Sync;
      population: number;
      closedMs: number;
      openMs: number;
      rate: number;
    }
  | {
      kind: 'engine-throughput';
      file: string;
      sync: Sync;
      workflow: keyof typeof WORKFLOWS;
      n: number;
      population: number;
    }
  | { kind: 'engine-footprint'; file: string; sync: Sync; workflow: 'linear4' | 'linear4echo'; n: number }
  | { kind: 'engine-populate'; file: string; n: number }
  /** Capacity (drain of `n` linear instances) on a populated file, then an open loop at `load` × it. */
  | {
      kind: 'engine-scale';
      file: string;
      sync: Sync;
      population: number;
      n: number;
      openMs: number;
      load: number;
      /** Experiments: the WAL auto-checkpoint threshold in pages (default: the engine's, 1000; 0 = off). */
      walAutocheckpoint?: number;
    }
  | { kind: 'engine-prepare'; file: string; workflow: keyof typeof WORKFLOWS; n: number }
  /** SQL statements per transition (bench/statements.ts) while `n` instances of `workflow` drain (NORMAL; not timed). */
  | { kind: 'engine-statements'; file: string; workflow: keyof typeof WORKFLOWS; n: number }
  /** The peer queue plainjob running `jobs` no-op jobs on the same pragmas (bench/peers.ts). */
  | { kind: 'plainjob'; file: string; sync: Sync; jobs: number }
  /** Retention shrinking the file: `n` instances, 90% pruned (bench/retention-shrink.ts). */
  | { kind: 'retention-shrink'; file: string; n: number }
  /** The disk's durable-write latency: 4 KiB write + fdatasync in a loop on `dir` (bench/peers.ts). */
  | { kind: 'fsync'; dir: string; durationMs: number }
  /** The Designer in Chromium opening a 500-node workflow `opens` times (bench/designer.ts). */
  | { kind: 'designer-open'; opens: number }
  /** An idle worker with `schedules` live schedules, its CPU time over `durationMs` (bench/schedules-idle.ts). */
  | { kind: 'schedules-idle'; file: string; schedules: number; durationMs: number };

/** Runs `task`; returns its result (JSON-serialisable). */
export async function runTask(task: Task): Promise<unknown> {
  switch (task.kind) {
    case 'batch': {
      const out: unknown[] = [];
      for (const t of task.tasks) out.push(await runTask(t));
      return out;
    }
    case 'raw-closed': {
      const db = openRaw(task.file, task.sync);
      const raw = rawPattern(db);
      seedMany(raw, task.population, Number.MAX_SAFE_INTEGER, 'PENDING', 0);
      const r = await rawClosedLoop(raw, task.sync, task.k, task.population, task.durationMs);
      db.close();
      return r;
    }
    case 'raw-footprint': {
      const db = openRaw(task.file, task.sync);
      const r = rawFootprint(db, rawPattern(db), task.n);
      db.close();
      return r;
    }
    case 'raw-scale': {
      const sampler = sampleResources(`${task.file}-wal`);
      const db = openRaw(task.file, task.sync);
      const raw = rawPattern(db);
      const cycling = Math.min(1000, task.population);
      seedMany(raw, task.population - cycling, 3, 'WAITING', Number.MAX_SAFE_INTEGER);
      seedMany(raw, cycling, Number.MAX_SAFE_INTEGER, 'PENDING', 0, task.population);
      db.pragma('wal_checkpoint(TRUNCATE)');
      const closed = await rawClosedLoop(raw, task.sync, 32, task.population, task.closedMs);
      raw.park();
      const open = await rawOpenLoop(raw, task.sync, 32, task.population, task.rate, task.openMs);
      db.close();
      return { closed, open, ...sampler.stop() };
    }
    case 'engine-throughput': {
      const engine = openEngine(task.file, task.sync);
      const r = await engineThroughput(engine, task.sync, WORKFLOWS[task.workflow], task.n, task.population);
      await engine.close();
      return r;
    }
    case 'engine-footprint': {
      const engine = openEngine(task.file, task.sync);
      const r = await engineFootprint(engine, WORKFLOWS[task.workflow], task.n);
      await engine.close();
      return r;
    }
    case 'engine-populate': {
      const engine = openEngine(task.file, 'NORMAL');
      const seconds = await populate(engine, task.n);
      await engine.close();
      return { population: task.n, seconds };
    }
    case 'engine-scale': {
      const sampler = sampleResources(`${task.file}-wal`);
      const engine = openEngine(
        task.file,
        task.sync,
        task.walAutocheckpoint === undefined ? {} : { walAutocheckpoint: task.walAutocheckpoint },
      );
      const closed = await engineThroughput(engine, task.sync, LINEAR, task.n, task.population);
      let rate = closed.instancesPerSec * task.load;
      let open = await engineOpenLoop(engine, task.sync, task.population, rate, task.openMs);
      let attempts = 1;
      // The machine is shared: when it slowed after the capacity was measured, "50%" was not,
      // and the arrivals piled up. Measure the capacity again and repeat, once.
      if (open.drainMs > OVERLOAD_DRAIN_MS) {
        const again = await engineThroughput(
          engine,
          task.sync,
          LINEAR,
          Math.ceil(task.n / 2),
          task.population,
        );
        rate = again.instancesPerSec * task.load;
        open = await engineOpenLoop(engine, task.sync, task.population, rate, task.openMs);
        attempts++;
      }
      await engine.close();
      return { closed, open, attempts, ...sampler.stop() };
    }
    case 'engine-prepare': {
      const engine = openEngine(task.file, 'NORMAL');
      const wf = WORKFLOWS[task.workflow];
      await engine.deploy(wf);
      await startBatch(engine, wf.name, task.n);
      engine.db.checkpoint('TRUNCATE');
      await engine.close();
      return { instances: task.n };
    }
    case 'engine-statements': {
      countStatements();
      const engine = openEngine(task.file, 'NORMAL');
      // A first drain compiles and caches what a steady state has ready; the second is counted.
      await engineThroughput(engine, 'NORMAL', WORKFLOWS[task.workflow], Math.ceil(task.n / 4));
      resetStatementCounts();
      const r = await engineThroughput(engine, 'NORMAL', WORKFLOWS[task.workflow], task.n);
      const c = statementCounts();
      await engine.close();
      return { workflow: task.workflow, transitions: r.transitions, perTransition: (c.reads + c.writes) / r.transitions, readsPerTransition: c.reads / r.transitions, writesPerTransition: c.writes / r.transitions, top: c.top };
    }
    case 'plainjob':
      return plainjobThroughput(task.file, task.sync, task.jobs);
    case 'fsync':
      return fsyncProbe(task.dir, task.durationMs);
    case 'retention-shrink':
      return retentionShrink(task.file, task.n);
    case 'schedules-idle':
      return schedulesIdle(task.file, task.schedules, task.durationMs);
    case 'designer-open': {
      // Imported here: vite, Playwright and React Flow's build stay out of every other child's RSS.
      const { designerOpen } = await import('./designer');
      return designerOpen(task.opens);
    }
  }
}

const arg = process.argv[2];
if (
  arg !== undefined &&
  process.argv[1] !== undefined &&
  fs.realpathSync(process.argv[1]) === fs.realpathSync(new URL(import.meta.url))
) {
  const task = JSON.parse(arg) as Task;
  runTask(task).then(
    (r) => process.stdout.write(`BENCH_RESULT ${JSON.stringify(r)}\n`),
    (err: unknown) => {
      console.error(`bench child ${task.kind} failed:`, err);
      process.exitCode = 1;
    },
  );
}
