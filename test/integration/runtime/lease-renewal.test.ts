/**
 * Leases are renewed whatever a handler does to the process's thread (issue 17, item 1): two
 * worker processes on one file, handlers that hold their worker's thread for several leases (a
 * CPU-bound handler on the loop's thread), and quick instances beside them. In a crash-free run
 * no step may run twice (DESIGN.md section 2): before the renewal moved off the loop's thread,
 * the other worker took every held step over (LEASE_LOST after three runs of each).
 */
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Engine } from '../../../engine/runtime/engine';
import { callsByPair, killChildren, readCallLog, spawnWorker, waitFor } from '../../helpers/processes';
import { tempLocation } from '../../helpers/temp-engine';
import { createTestRegistry } from '../../helpers/test-nodes';

afterEach(async () => {
  await killChildren();
});

describe('two workers, handlers holding their thread for longer than a lease', () => {
  it('complete every instance at attempt 1, each held step run once', { timeout: 60_000 }, async () => {
    const { location: file, dir, cleanup } = tempLocation('runnel-lease-');
    const callLog = path.join(dir, 'calls.log');
    const engine = Engine.open(file, { registry: createTestRegistry(callLog) });
    try {
      // given: 4 instances whose step holds the thread 2 s (leases are 500 ms), and 10 quick ones
      await engine.deploy({ name: 'held', nodes: [{ id: 'hold', type: 'hog', config: { ms: 2000 } }, { id: 'after', type: 'count' }], edges: [{ from: 'hold', to: 'after' }] });
      await engine.deploy({ name: 'quick', nodes: [{ id: 'a', type: 'pass' }, { id: 'b', type: 'count' }], edges: [{ from: 'a', to: 'b' }] });
      const workers = [0, 1].map(() => spawnWorker({ db: file, callLog, leaseMs: 500, concurrency: 4, exitWhenIdle: false }));
      await Promise.all(workers.map((w) => w.ready));

      // when
      const held = await engine.startMany('held', [{}, {}, {}, {}]);
      const quick = await engine.startMany('quick', Array.from({ length: 10 }, () => ({})));
      const all = [...held, ...quick];
      await waitFor(async () => (await engine.metrics()).counts.COMPLETED === all.length, 45_000, 'every instance COMPLETED', 50);
      for (const w of workers) w.kill('SIGTERM');
      await Promise.all(workers.map((w) => w.exited));

      // then: no step was recovered from a lost lease, each held step ran once, on attempt 1
      expect((await engine.metrics()).counts).toEqual({ COMPLETED: all.length });
      const histories = await Promise.all(all.map((id) => engine.history(id)));
      expect(histories.flat().filter((h) => h.type === 'node.recovered')).toEqual([]);
      const pairs = callsByPair(readCallLog(callLog));
      for (const id of held) {
        expect(pairs.get(`${id}:hold`)?.map((c) => c.attempt)).toEqual([1]);
        expect(pairs.get(`${id}:after`)?.map((c) => c.attempt)).toEqual([1]);
      }
      for (const id of quick) expect(pairs.get(`${id}:b`)?.map((c) => c.attempt)).toEqual([1]);
    } finally {
      await engine.close();
      await cleanup();
    }
  });
});
