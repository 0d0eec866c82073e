/**
 * Two worker processes on one PostgreSQL database claim the same queue at once (FOR UPDATE SKIP
 * LOCKED, per-instance try-locks, version checks: engine/db/postgres/queries/schedule.ts): in a
 * crash-free run every instance completes and no step runs twice (DESIGN.md section 2).
 */
import path from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { Engine } from '../../../../engine/runtime/engine';
import { callsByPair, killChildren, readCallLog, spawnWorker, waitFor } from '../../../helpers/processes';
import { tempPostgres } from '../../../helpers/postgres';
import { tempDir } from '../../../helpers/temp-engine';
import { createTestRegistry } from '../../../helpers/test-nodes';

const INSTANCES = 400;

afterEach(async () => {
  await killChildren();
});

describe('two worker processes on one PostgreSQL database', () => {
  it('complete every instance with no step run twice', { timeout: 120_000 }, async () => {
    const db = await tempPostgres();
    const { dir, cleanup } = tempDir('runnel-pg-claims-');
    const callLog = path.join(dir, 'calls.log');
    const engine = Engine.open(db.url, { registry: createTestRegistry(callLog) });
    try {
      // given a 3-node workflow with a counted middle node (20 ms a call, so claims stay in flight) and two workers
      await engine.deploy({
        name: 'pg-claims',
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
      const workers = [0, 1].map(() => spawnWorker({ db: db.url, callLog, leaseMs: 2000, concurrency: 16, exitWhenIdle: false }));
      await Promise.all(workers.map((w) => w.ready));

      // when instances start in batches while both workers claim
      const t0 = Date.now();
      const ids: number[] = [];
      for (let i = 0; i < INSTANCES; i += 100) ids.push(...(await engine.startMany('pg-claims', Array.from({ length: 100 }, (_, j) => ({ n: i + j })))));
      await waitFor(async () => (await engine.countByStatus({})).COMPLETED === INSTANCES, 100_000, `${INSTANCES} instances COMPLETED`, 100);
      const ms = Date.now() - t0;
      for (const w of workers) w.kill('SIGTERM');
      const exits = await Promise.all(workers.map((w) => w.exited));

      // then every instance completed, each counted node ran once, on the first attempt
      expect(await engine.countByStatus({})).toEqual({ COMPLETED: INSTANCES });
      const calls = readCallLog(callLog);
      expect(calls).toHaveLength(INSTANCES);
      expect(callsByPair(calls).size).toBe(INSTANCES);
      expect(new Set(calls.map((c) => c.instanceId))).toEqual(new Set(ids));
      expect(calls.filter((c) => c.attempt !== 1)).toEqual([]);
      // and history records one completion per (instance, node), none recovered or failed
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      try {
        const twice = await client.query(
          `SELECT instance_id, node_id, count(*) AS n FROM history WHERE type = 'node.completed' GROUP BY instance_id, node_id HAVING count(*) > 1`,
        );
        expect(twice.rows).toEqual([]);
        const totals = await client.query(
          `SELECT type, count(*)::int AS n FROM history WHERE type IN ('node.completed', 'node.recovered', 'node.failed') GROUP BY type`,
        );
        expect(totals.rows).toEqual([{ type: 'node.completed', n: 3 * INSTANCES }]);
      } finally {
        await client.end();
      }
      // and both workers took part, and stopped cleanly
      const byPid = new Map<number, number>();
      for (const c of calls) byPid.set(c.pid, (byPid.get(c.pid) ?? 0) + 1);
      console.log(`pg claims: ${INSTANCES} instances in ${ms} ms; calls per worker ${workers.map((w) => byPid.get(w.pid) ?? 0).join(' / ')}`);
      expect(byPid.size).toBe(2);
      for (const [i, w] of workers.entries()) expect(exits[i], w.stderr()).toEqual({ code: 0, signal: null });
    } finally {
      await engine.close();
      await db.drop();
      cleanup();
    }
  });

  it('lose nothing and complete no step twice when one worker is SIGKILLed mid-run', { timeout: 120_000 }, async () => {
    const db = await tempPostgres();
    const { dir, cleanup } = tempDir('runnel-pg-crash-');
    const callLog = path.join(dir, 'calls.log');
    const engine = Engine.open(db.url, { registry: createTestRegistry(callLog) });
    try {
      // given the same workflow (the counted node takes 50 ms) and two workers with 800 ms leases
      await engine.deploy({
        name: 'pg-crash',
        nodes: [
          { id: 'a', type: 'pass', output: 'a' },
          { id: 'tally', type: 'count', config: { delayMs: 50 } },
          { id: 'b', type: 'pass' },
        ],
        edges: [
          { from: 'a', to: 'tally' },
          { from: 'tally', to: 'b' },
        ],
      });
      const workers = [0, 1].map(() => spawnWorker({ db: db.url, callLog, leaseMs: 800, concurrency: 16, exitWhenIdle: false }));
      await Promise.all(workers.map((w) => w.ready));
      const n = 200;
      const ids = await engine.startMany('pg-crash', Array.from({ length: n }, (_, i) => ({ i })));
      // when the first worker is killed once both have made progress
      await waitFor(() => new Set(readCallLog(callLog).map((c) => c.pid)).size === 2 && readCallLog(callLog).length >= 40, 60_000, 'both workers calling', 20);
      (workers[0] as (typeof workers)[number]).kill('SIGKILL');
      await waitFor(async () => (await engine.countByStatus({})).COMPLETED === n, 100_000, `${n} instances COMPLETED`, 100);
      (workers[1] as (typeof workers)[number]).kill('SIGTERM');
      await Promise.all(workers.map((w) => w.exited));

      // then every instance completed, and each node's completion was recorded once
      expect(await engine.countByStatus({})).toEqual({ COMPLETED: n });
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      try {
        const twice = await client.query(
          `SELECT instance_id, node_id FROM history WHERE type = 'node.completed' GROUP BY instance_id, node_id HAVING count(*) > 1`,
        );
        expect(twice.rows).toEqual([]);
        const completed = await client.query(`SELECT count(*)::int AS n FROM history WHERE type = 'node.completed'`);
        expect(completed.rows).toEqual([{ n: 3 * n }]);
      } finally {
        await client.end();
      }
      // and every counted node was called (a call cut by the kill may have run again: at least once)
      const pairs = callsByPair(readCallLog(callLog));
      expect(new Set([...pairs.keys()].map((k) => Number(k.split(':')[0])))).toEqual(new Set(ids));
    } finally {
      await engine.close();
      await db.drop();
      cleanup();
    }
  });
});
