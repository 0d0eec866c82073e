/**
 * A start dispatches its entry node at once, leased to this worker until `now + leaseMs`. `now`
 * is read inside the transaction, after any wait for the write lock: a start that waited longer
 * than a lease must not commit a lease already expired, or another worker on the file would claim
 * the row as lost while this one launches it too (the step would run twice in a crash-free run).
 *
 * The lease is read at the `claimed` fault point: after the start's transaction committed and
 * before its handler starts, so the check does not depend on which worker wins a race.
 */
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SqliteEngine } from '../../../engine/runtime/engine';
import { Faults } from '../../../engine/runtime/faults';
import { createDefaultRegistry } from '../../../engine/nodes/registry';
import type { NodeType } from '../../../engine/nodes/types';
import { everyOf } from '../../helpers/probe-nodes';
import { tempSqliteEngine } from '../../helpers/temp-engine';

const runs: string[] = [];
const count: NodeType<Record<string, never>> = {
  type: 'count',
  title: 'Count',
  description: 'Counts its runs (tests)',
  icon: 'hash',
  group: 'Test',
  configSchema: z.strictObject({}),
  execute: async (ctx) => {
    runs.push(`${ctx.instanceId}:${ctx.nodeId}:${ctx.attempt}`);
    await new Promise((r) => setTimeout(r, 300));
    return { output: null };
  },
};

describe('a start that waited for the write lock longer than a lease', () => {
  let ctx: ReturnType<typeof tempSqliteEngine>;
  let other: SqliteEngine | undefined;
  let reader: Database.Database | undefined;
  afterEach(async () => {
    reader?.close();
    await other?.close();
    await ctx.close();
  });

  it('commits its eager lease dated from the commit, so no other worker runs the step again', async () => {
    // given: worker A (leaseMs 1500: long enough that a loaded machine's renewals keep up) and
    // worker B on one file; A's fault point reads the lease of
    // each step it launches, straight from the file
    runs.length = 0;
    const seen: { instanceId: number; leftMs: number }[] = [];
    let file = '';
    const faults = new Faults([
      {
        point: 'claimed',
        action: (info) => {
          reader ??= new Database(file, { readonly: true });
          const row = reader.prepare<[number], { lease: number }>(`SELECT next_run_at AS lease FROM schedule WHERE instance_id = ?`).get(info.instanceId);
          seen.push({ instanceId: info.instanceId, leftMs: (row?.lease ?? 0) - Date.now() });
        },
      },
    ]);
    const registry = () => createDefaultRegistry().register(count);
    ctx = tempSqliteEngine({ leaseMs: 1500, owner: 'A', registry: registry(), faults });
    file = ctx.file;
    const { engine } = ctx;
    await engine.deploy({ name: 'one', nodes: [{ id: 'n', type: 'count', config: {} }], edges: [] });
    other = SqliteEngine.open(file, { leaseMs: 1500, owner: 'B', pollIntervalMs: 10, registry: registry() });
    engine.startWorker();
    other.startWorker();

    // when: another connection holds the write lock for 2 s (longer than a lease) while A starts an instance, twice
    const ids: number[] = [];
    for (let i = 0; i < 2; i++) {
      const locker = new Database(file);
      locker.exec('BEGIN IMMEDIATE');
      setTimeout(() => {
        locker.exec('COMMIT');
        locker.close();
      }, 2000);
      ids.push(await engine.start('one', {}));
      // The first step's outcome commits before the lock is taken again: held 2 s while that step
      // ran, the lock would keep its lease from being renewed, and worker B could take it over as
      // lost (a race of this test, not of the start under test).
      const started = ids[ids.length - 1] as number;
      await expect.poll(() => engine.isSettled(started), { timeout: 10_000 }).toBe(true);
    }
    await other.stopWorker();
    await engine.runUntil(() => everyOf(ids, (id) => engine.isSettled(id)), 10_000);

    // then: at launch each lease still had most of its 1500 ms (dated before the wait it would have
    // expired ~500 ms earlier); each step ran once, on attempt 1
    expect(seen.map((s) => s.instanceId)).toEqual(ids);
    for (const s of seen) expect(s.leftMs).toBeGreaterThan(900);
    expect(await Promise.all(ids.map(async (id) => (await engine.getInstance(id)).status))).toEqual(ids.map(() => 'COMPLETED'));
    expect(runs).toEqual(ids.map((id) => `${id}:n:1`));
  });
});
