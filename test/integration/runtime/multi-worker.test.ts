/**
 * Several processes on one file (issue 2, "Tests that must exist"; DESIGN.md section 2): three
 * worker processes share one WAL file and 2,000 instances. In a crash-free run no step may run
 * twice, every instance completes, and lock contention never surfaces as an error.
 */
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteEngine } from '../../../engine/runtime/engine';
import {
  busyErrors,
  callsByPair,
  killChildren,
  readCallLog,
  spawnWorker,
  waitFor,
} from '../../helpers/processes';
import { tempDir } from '../../helpers/temp-engine';
import { createTestRegistry } from '../../helpers/test-nodes';

const INSTANCES = 2000;

afterEach(async () => {
  await killChildren();
});

describe('three worker processes on one file', () => {
  it('complete 2,000 instances with no node run twice and no SQLITE_BUSY', { timeout: 120_000 }, async () => {
    const { dir, cleanup } = tempDir('runnel-multi-');
    const file = path.join(dir, 'runnel.db');
    const callLog = path.join(dir, 'calls.log');
    const engine = SqliteEngine.open(file, { registry: createTestRegistry(callLog) });
    try {
      // given a 3-node workflow with a counted middle node (20 ms a call, so claims stay in flight),
      // and three idle workers on the file
      await engine.deploy({
        name: 'mw-three',
        nodes: [
          { id: 'a', type: 'pass', output: 'a' },
          { id: 'tally', type: 'count', config: { delayMs: 20 } },
          { id: 'b', type: 'pass' },
        ],
        edges: [
          { from: 'a', to: 'tally' },
          { from: 'tally', to: 'b' },
        ],
      });
      // Leases as short as in the crash tests (800 ms): in a crash-free run a worker waiting for
      // the write lock must still commit and heartbeat in time, or a live claim is handed over and
      // its step runs twice (what a 5 s synchronous busy wait did; see WRITE_LOCK_WAIT_MS).
      const workers = [0, 1, 2].map(() =>
        spawnWorker({ db: file, callLog, leaseMs: 800, concurrency: 32, exitWhenIdle: false }),
      );
      await Promise.all(workers.map((w) => w.ready));

      // when 2,000 instances start
      const t0 = Date.now();
      const ids: number[] = [];
      for (let i = 0; i < INSTANCES; i += 500)
        ids.push(
          ...(await engine.startMany(
            'mw-three',
            Array.from({ length: 500 }, (_, j) => ({ n: i + j })),
          )),
        );
      await waitFor(
        async () => (await engine.metrics()).counts.COMPLETED === INSTANCES,
        90_000,
        `${INSTANCES} instances COMPLETED`,
        50,
      );
      const ms = Date.now() - t0;
      for (const w of workers) w.kill('SIGTERM');
      const exits = await Promise.all(workers.map((w) => w.exited));

      // then every instance completed
      expect((await engine.metrics()).counts).toEqual({ COMPLETED: INSTANCES });
      // and no node ran twice: one call per counted node, one completion per (instance, node)
      const calls = readCallLog(callLog);
      expect(calls).toHaveLength(INSTANCES);
      const pairs = callsByPair(calls);
      expect(pairs.size).toBe(INSTANCES);
      expect(new Set(calls.map((c) => c.instanceId))).toEqual(new Set(ids));
      expect(calls.filter((c) => c.attempt !== 1 || c.idempotencyKey !== `${c.instanceId}:tally`)).toEqual(
        [],
      );
      const twice = engine.db.raw
        .prepare(
          `SELECT instance_id, node_id, count(*) AS n FROM history WHERE type = 'node.completed' GROUP BY instance_id, node_id HAVING n > 1`,
        )
        .all();
      expect(twice).toEqual([]);
      const totals = engine.db.raw
        .prepare(
          `SELECT type, count(*) AS n FROM history WHERE type IN ('node.completed', 'node.recovered', 'node.failed') GROUP BY type`,
        )
        .all();
      expect(totals).toEqual([{ type: 'node.completed', n: 3 * INSTANCES }]);
      // and all three took part, none saw a lock error
      const byPid = new Map<number, number>();
      for (const c of calls) byPid.set(c.pid, (byPid.get(c.pid) ?? 0) + 1);
      const stats = workers.map((w) => /RUNNEL_WORKER_STATS (.*)/.exec(w.stdout())?.[1] ?? '?');
      console.log(
        `multi-worker: ${INSTANCES} instances (${3 * INSTANCES} transitions) in ${ms} ms; calls per worker ${workers.map((w) => byPid.get(w.pid) ?? 0).join(' / ')}; event loop ${stats.join(' ')}`,
      );
      expect(byPid.size).toBe(3);
      for (const [i, w] of workers.entries()) {
        expect(exits[i], w.stderr()).toEqual({ code: 0, signal: null });
        expect(busyErrors(w.stderr() + w.stdout())).toEqual([]);
      }
    } finally {
      await killChildren();
      await engine.close();
      cleanup();
    }
  });
});
