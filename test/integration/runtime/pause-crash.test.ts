/**
 * Pause survives kill -9 (issue 13): an instance paused during a retry's backoff, its worker
 * process SIGKILLed and a new one started, then unpaused — the retry fires once, after the time
 * it had left. Real worker processes on the same database (both backends: the integration-pg
 * project runs this file on PostgreSQL).
 */
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Engine } from '../../../engine/runtime/engine';
import { callsByPair, killChildren, readCallLog, spawnWorker, waitFor } from '../../helpers/processes';
import { rowsIn } from '../../helpers/db-rows';
import { tempLocation } from '../../helpers/temp-engine';
import { createTestRegistry } from '../../helpers/test-nodes';

describe('pause under SIGKILL', () => {
  let db: ReturnType<typeof tempLocation>;
  afterEach(async () => {
    await killChildren();
    await db.cleanup();
  });

  it('paused during a retry wait, worker killed, restarted, unpaused: the retry fires once', async () => {
    db = tempLocation();
    const callLog = path.join(db.dir, 'calls.log');
    const engine = Engine.open(db.location, { registry: createTestRegistry(callLog) });
    try {
      await engine.deploy({
        name: 'flaky-once',
        nodes: [
          { id: 'f', type: 'flaky', config: { failures: 1 }, retry: { maxAttempts: 3, initialIntervalMs: 2000, jitter: 0 } },
          { id: 'after', type: 'count', config: {} },
        ],
        edges: [{ from: 'f', to: 'after' }],
      });
      const id = await engine.start('flaky-once');
      const first = spawnWorker({ db: db.location, callLog, leaseMs: 1500, exitWhenIdle: false });
      await first.ready;
      await waitFor(async () => (await engine.getInstance(id)).nodes.find((n) => n.id === 'f')?.status === 'RETRYING', 15_000);
      await engine.pause(id, { actor: 'ops' });
      first.kill('SIGKILL');
      expect((await first.exited).signal).toBe('SIGKILL');
      // A new worker finds nothing to do while the instance is paused (its retry is parked) and exits.
      await new Promise((r) => setTimeout(r, 2500));
      const idle = spawnWorker({ db: db.location, callLog, leaseMs: 1500 });
      expect((await idle.exited).code).toBe(0);
      expect(callsByPair(readCallLog(callLog)).get(`${id}:f`)?.length).toBe(1);
      const [parked] = await rowsIn<{ paused_ms: number | null }>(db.location, `SELECT paused_ms FROM schedule WHERE instance_id = ? AND node_id = 'f'`, [id]);
      expect(Number(parked?.paused_ms)).toBeGreaterThan(0);
      expect(Number(parked?.paused_ms)).toBeLessThanOrEqual(2000);
      await engine.unpause(id, { actor: 'ops' });
      const last = spawnWorker({ db: db.location, callLog, leaseMs: 1500 });
      expect((await last.exited).code).toBe(0);
      const done = await engine.getInstance(id);
      expect(done.status).toBe('COMPLETED');
      const calls = callsByPair(readCallLog(callLog));
      expect(calls.get(`${id}:f`)?.length).toBe(2);
      expect(calls.get(`${id}:after`)?.length).toBe(1);
      expect(done.nodes.find((n) => n.id === 'f')?.attempt).toBe(2);
    } finally {
      await engine.close();
    }
  });
});
