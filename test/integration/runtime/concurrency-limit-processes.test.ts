/**
 * A concurrency limit holds across processes (issue 13), on both backends: three worker processes on one database, a
 * workflow limited to 2, 20 instances each a ~100 ms step. The test samples the instance table
 * every few ms throughout: never more than 2 RUNNING or WAITING at once, and all 20 COMPLETED.
 */
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Engine } from '../../../engine/runtime/engine';
import { killChildren, spawnWorker } from '../../helpers/processes';
import { rowsIn } from '../../helpers/db-rows';
import { tempLocation } from '../../helpers/temp-engine';
import { createTestRegistry } from '../../helpers/test-nodes';

afterEach(async () => {
  await killChildren();
});

describe('concurrency limit across worker processes', () => {
  it('limit 2, three workers, 20 instances: never a third in progress, all COMPLETED', { timeout: 120_000 }, async () => {
    const db = tempLocation('runnel-conc-');
    const file = db.location;
    const callLog = path.join(db.dir, 'calls.log');
    const engine = Engine.open(file, { registry: createTestRegistry(callLog) });
    try {
      // given a workflow limited to 2 instances in progress, one ~100 ms step each, and three workers
      await engine.deploy({ name: 'capped', concurrency: { limit: 2 }, nodes: [{ id: 'nap', type: 'slow', config: { ms: 100 } }] });
      const workers = [0, 1, 2].map(() => spawnWorker({ db: file, callLog, concurrency: 8, exitWhenIdle: false }));
      await Promise.all(workers.map((w) => w.ready));
      // when 20 instances start
      const ids = await engine.startMany('capped', Array.from({ length: 20 }, (_, n) => ({ n })));
      // then, sampled throughout, never more than 2 are RUNNING or WAITING (nor admitted and live)
      let most = 0;
      let mostAdmitted = 0;
      const until = Date.now() + 60_000;
      for (;;) {
        const rows = await rowsIn<{ status: string; held: number }>(file, 'SELECT status, held FROM instance');
        most = Math.max(most, rows.filter((r) => r.status === 'RUNNING' || r.status === 'WAITING').length);
        mostAdmitted = Math.max(mostAdmitted, rows.filter((r) => r.held === 0 && !['COMPLETED', 'FAILED', 'CANCELLED'].includes(r.status)).length);
        if (rows.length === 20 && rows.every((r) => r.status === 'COMPLETED')) break;
        if (Date.now() > until) throw new Error(`not all COMPLETED: ${JSON.stringify(rows)}`);
        await new Promise((r) => setTimeout(r, 3));
      }
      for (const w of workers) w.kill('SIGTERM');
      await Promise.all(workers.map((w) => w.exited));
      expect(most).toBe(2);
      expect(mostAdmitted).toBeLessThanOrEqual(2);
      expect((await engine.metrics()).counts).toEqual({ COMPLETED: 20 });
      expect(ids).toHaveLength(20);
    } finally {
      await engine.close();
      await db.cleanup();
    }
  });
});
