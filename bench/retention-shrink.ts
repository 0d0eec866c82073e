/**
 * The file shrinks as retention deletes (issue 14: "create 100,000 instances, complete them,
 * prune 90%, and the file shrinks by at least 80% with no VACUUM by hand"): an engine on a fresh
 * file (auto_vacuum=INCREMENTAL, as every new file) runs `n` instances of a one-node workflow to
 * their end, 90% of them two days before the rest (a clock the task sets); `prune` with
 * `olderThan` one day then deletes those 90% in its batches, each of which gives its pages back
 * (incremental vacuum). The size is the file's after a TRUNCATE checkpoint, before and after.
 */
import fs from 'node:fs';
import { ManualClock } from '../engine/runtime/clock';
import { openEngine, startBatch } from './engine-run';

/** What {@link retentionShrink} measured. */
export interface RetentionShrink {
  instances: number;
  pruned: number;
  bytesBefore: number;
  bytesAfter: number;
  /** 1 − after / before. */
  shrink: number;
  pruneSeconds: number;
}

const DAY_MS = 86_400_000;

/** Runs the scenario of the module doc on `file` with `n` instances. @throws Error when the instances do not all complete, or the prune deletes another count. */
export async function retentionShrink(file: string, n: number): Promise<RetentionShrink> {
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const engine = openEngine(file, 'NORMAL', { clock, retention: false });
  try {
    await engine.deploy({ name: 'kept', nodes: [{ id: 'a', type: 'pass' }] });
    const old = Math.round(n * 0.9);
    const runAll = async (count: number, first: number) => {
      await startBatch(engine, 'kept', count, first);
      await engine.runUntil(async () => ((await engine.countByStatus()).COMPLETED ?? 0) >= first + count, 600_000);
    };
    await runAll(old, 0);
    clock.advance(2 * DAY_MS);
    await runAll(n - old, old);
    const size = () => {
      engine.db.checkpoint('TRUNCATE');
      return fs.statSync(file).size;
    };
    const bytesBefore = size();
    const t0 = performance.now();
    const report = await engine.prune({ olderThanMs: DAY_MS });
    const pruneSeconds = (performance.now() - t0) / 1000;
    if (report.byStatus.COMPLETED !== old) throw new Error(`bench: prune deleted ${report.byStatus.COMPLETED} instances, expected ${old}`);
    const bytesAfter = size();
    return { instances: n, pruned: old, bytesBefore, bytesAfter, shrink: 1 - bytesAfter / bytesBefore, pruneSeconds };
  } finally {
    await engine.close();
  }
}
