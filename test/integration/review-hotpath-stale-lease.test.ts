/**
 * Review of the hot path: Engine.start leases the entry node it dispatches at once until
 * `now + leaseMs`, with `now` read before the write waited for the lock. A start that waited
 * longer than the lease commits a lease already expired: another worker on the file claims the
 * row as a lost lease while this one launches it too (the step runs twice in a crash-free run).
 */
import { everyOf } from '../helpers/probe-nodes';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { SqliteEngine } from '../../engine/runtime/engine';
import { Engine } from '../../engine/runtime/engine';
import { createDefaultRegistry } from '../../engine/nodes/registry';
import type { NodeType } from '../../engine/nodes/types';
import { tempEngine } from '../helpers/temp-engine';

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

describe('review: a start that waited for the write lock', () => {
  let ctx: ReturnType<typeof tempEngine>;
  let other: SqliteEngine | undefined;
  afterEach(async () => {
    await other?.close();
    await ctx.close();
  });

  it('never commits an eager lease that has already expired (no second run by another worker)', async () => {
    runs.length = 0;
    const registry = () => createDefaultRegistry().register(count);
    ctx = tempEngine({ leaseMs: 400, owner: 'A', registry: registry() });
    const { engine, file } = ctx;
    await engine.deploy({ name: 'one', nodes: [{ id: 'n', type: 'count', config: {} }], edges: [] });
    other = Engine.open(file, { leaseMs: 400, owner: 'B', pollIntervalMs: 10, registry: registry() });
    engine.startWorker();
    // B works the file alongside A.
    other.startWorker();
    const ids: number[] = [];
    // The race (B's claim against A's next heartbeat) is lost about half the time: try a few.
    for (let i = 0; i < 5; i++) {
      // Another connection holds the write lock for 1 s (longer than a lease) while A starts an instance.
      const locker = new Database(file);
      locker.exec('BEGIN IMMEDIATE');
      setTimeout(() => {
        locker.exec('COMMIT');
        locker.close();
      }, 900);
      ids.push(await engine.start('one', {}));
      await new Promise((r) => setTimeout(r, 700));
    }
    await other.stopWorker();
    await engine.runUntil(() => everyOf(ids, async (id) => (await engine.isSettled(id))), 5000);
    expect(await Promise.all(ids.map(async (id) => (await engine.getInstance(id)).status))).toEqual(ids.map(() => 'COMPLETED'));
    expect(runs).toEqual(ids.map((id) => `${id}:n:1`));
  });
});
