/**
 * Retention racing live workers loses no live instance (issue 14's "done when"), with real worker
 * processes on one database (both backends: the integration-pg project runs this file on
 * PostgreSQL). Worker processes delete every ended instance as soon as it ended (policy 0 days, a
 * pass every few ms, small batches) while they and a worker of the default policy work chains of
 * steps, parents waiting on child instances and instances waiting for a person. The first deleting
 * worker is SIGKILLed right after its third retention batch committed (fault point `pruned`); until
 * then it is the only one deleting, so that batch is sure to come however the machine is loaded
 * (with others deleting too, it could find nothing left and the test waited forever). Then an heir
 * deletes in its place and this process prunes by age at the same time. Every step of every chain ran, every parent ran its step
 * after its child, and every waiting instance is still there and completes once approved.
 */
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkDatabase } from '../../../engine/db/check';
import { Engine } from '../../../engine/runtime/engine';
import { callsByPair, killChildren, readCallLog, spawnWorker, waitFor } from '../../helpers/processes';
import { TEST_BACKEND, tempLocation } from '../../helpers/temp-engine';
import { createTestRegistry } from '../../helpers/test-nodes';

const CHAINS = 100;
const PARENTS = 30;
const ASKING = 20;
/** Short leases: the steps the SIGKILLed worker held are taken over in about a second, not the default half minute. */
const LEASE_MS = 1000;
const RETAIN_NOTHING = JSON.stringify({ completedDays: 0, failedDays: 0, cancelledDays: 0 });

describe('retention racing live workers', () => {
  let db: ReturnType<typeof tempLocation>;
  afterEach(async () => {
    await killChildren();
    await db.cleanup();
  });

  it('deletes only ended instances: every live one runs to its end, across a SIGKILL after a retention batch', async () => {
    db = tempLocation();
    const callLog = path.join(db.dir, 'calls.log');
    const engine = Engine.open(db.location, { registry: createTestRegistry(callLog), retention: false });
    try {
      await engine.deploy({
        name: 'chain',
        nodes: ['a', 'b', 'c', 'd'].map((id) => ({ id, type: 'count', config: {} })),
        edges: [
          { from: 'a', to: 'b' },
          { from: 'b', to: 'c' },
          { from: 'c', to: 'd' },
        ],
      });
      await engine.deploy({
        name: 'parent',
        nodes: [
          { id: 'call', type: 'subworkflow', config: { workflow: 'chain' } },
          { id: 'after', type: 'count', config: {} },
        ],
        edges: [{ from: 'call', to: 'after' }],
      });
      await engine.deploy({ name: 'ask', nodes: [{ id: 'ask', type: 'approval', config: {} }, { id: 'then', type: 'count', config: {} }], edges: [{ from: 'ask', to: 'then' }] });
      const asking = await engine.startMany('ask', Array.from({ length: ASKING }, () => ({})));

      const env = { RUNNEL_RETENTION: RETAIN_NOTHING, RUNNEL_RETENTION_INTERVAL_MS: '5', RUNNEL_RETENTION_BATCH: '7' };
      const doomed = spawnWorker({ db: db.location, callLog, exitWhenIdle: false, concurrency: 8, leaseMs: LEASE_MS, faults: 'pruned#3=kill', env });
      const steady = spawnWorker({ db: db.location, callLog, exitWhenIdle: false, concurrency: 8, leaseMs: LEASE_MS });
      await Promise.all([doomed.ready, steady.ready]);
      const chains = await engine.startMany('chain', Array.from({ length: CHAINS }, () => ({})));
      const parents = await engine.startMany('parent', Array.from({ length: PARENTS }, () => ({})));

      expect((await doomed.exited).signal).toBe('SIGKILL');
      const heir = spawnWorker({ db: db.location, callLog, exitWhenIdle: false, concurrency: 8, leaseMs: LEASE_MS, env });
      await heir.ready;

      // This process prunes by age alongside the heir's own retention.
      let pruning = true;
      const pruner = (async () => {
        while (pruning) {
          await engine.prune({ olderThanMs: 0, batchSize: 5 });
          await new Promise((r) => setTimeout(r, 3));
        }
      })();

      const gone = async (ids: number[]) => (await engine.listInstances({ ids, limit: 1000 })).length === 0;
      await waitFor(async () => (await gone(chains)) && (await gone(parents)), 120_000, 'every chain and parent ran and was deleted', 50);

      const calls = callsByPair(readCallLog(callLog));
      for (const id of chains) for (const node of ['a', 'b', 'c', 'd']) expect(calls.get(`${id}:${node}`)?.length ?? 0, `${id}:${node}`).toBeGreaterThanOrEqual(1);
      for (const id of parents) expect(calls.get(`${id}:after`)?.length ?? 0, `${id}:after`).toBeGreaterThanOrEqual(1);
      // The children the parents started ran every step too (their ids are in the log only).
      const childIds = new Set(readCallLog(callLog).map((l) => l.instanceId).filter((id) => !chains.includes(id) && !parents.includes(id)));
      expect(childIds.size).toBe(PARENTS);
      for (const id of childIds) for (const node of ['a', 'b', 'c', 'd']) expect(calls.get(`${id}:${node}`)?.length ?? 0, `${id}:${node}`).toBeGreaterThanOrEqual(1);

      // The instances waiting for a person were never touched, and still work.
      const waiting = await engine.listInstances({ ids: asking, limit: 1000 });
      expect(waiting.map((i) => i.status)).toEqual(asking.map(() => 'WAITING'));
      for (const id of asking) await engine.approve(id, 'ask', { approved: true });
      await waitFor(() => asking.every((id) => (callsByPair(readCallLog(callLog)).get(`${id}:then`)?.length ?? 0) >= 1), 60_000, 'every approved instance ran its next step', 50);
      await waitFor(() => gone(asking), 60_000, 'the approved instances were deleted once ended', 50);

      pruning = false;
      await pruner;
      steady.kill('SIGTERM');
      heir.kill('SIGTERM');
      expect((await steady.exited).code).toBe(0);
      expect((await heir.exited).code).toBe(0);
      expect(heir.stderr()).not.toContain('retention failed');
      expect(await engine.countByStatus({})).toEqual({});
    } finally {
      await engine.close();
    }
    if (TEST_BACKEND === 'sqlite') {
      const report = checkDatabase(db.location);
      expect(report.violations).toEqual([]);
      expect(report.counts.instances).toBe(0);
    }
  });
});
