/**
 * Eager dispatch, on real database files: a node made ready by an outcome starts in the same
 * transaction, leased to this worker (never READY in between); once every slot is taken the others
 * wait READY for a claim; a start is taken back when a later outcome of the same turn fails the
 * instance; and dispatching at once never starves due rows: a passed deadline and another
 * instance's READY step are still claimed while chains keep every slot busy.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { EngineError } from '../../../engine/errors';
import { createDefaultRegistry } from '../../../engine/nodes/registry';
import type { NodeType } from '../../../engine/nodes/types';
import { ManualClock } from '../../../engine/runtime/clock';
import { rowsIn } from '../../helpers/db-rows';
import { heldNodes } from '../../helpers/held-node';
import { tempEngine } from '../../helpers/temp-engine';

/** Lets handlers started by the last turn settle (they run in microtasks and immediates). */
const settle = () => new Promise<void>((resolve) => setTimeout(resolve, 30));

/** `fail-now`: fails at once, not retryable (after one immediate, so it settles after a pass). */
const failNow: NodeType<Record<string, never>> = {
  type: 'fail-now',
  title: 'Fail now',
  description: 'Fails at once (tests)',
  icon: 'alert',
  group: 'Test',
  configSchema: z.strictObject({}),
  execute: () =>
    new Promise((_, reject) => setImmediate(() => reject(new EngineError('HANDLER_ERROR', 'planned failure', { retryable: false })))),
};

const chain = (name: string, n: number, extra: Record<string, unknown> = {}) => ({
  name,
  ...extra,
  nodes: Array.from({ length: n }, (_, i) => ({ id: `n${i}`, type: 'pass', config: { result: i } })),
  edges: Array.from({ length: n - 1 }, (_, i) => ({ from: `n${i}`, to: `n${i + 1}` })),
});

describe('eager dispatch', () => {
  let ctx: ReturnType<typeof tempEngine>;
  afterEach(async () => ctx.close());

  it('starts the next node of a chain in the turn that commits its predecessor, leased to this worker', async () => {
    ctx = tempEngine();
    const { engine } = ctx;
    await engine.deploy({
      name: 'chain',
      nodes: [{ id: 'a', type: 'pass', config: { result: 1 } }, { id: 'b', type: 'pass', config: { result: 2 } }, { id: 'c', type: 'pass', config: { result: 3 } }],
      edges: [{ from: 'a', to: 'b' }, { from: 'b', to: 'c' }],
    });
    const id = await engine.start('chain', {});
    const node = { get: async (i: number, n: string) => (await rowsIn<{ status: string; attempt: number; started_at: number | null }>(
      ctx.file, `SELECT status, attempt, started_at FROM node_state WHERE instance_id = ? AND node_id = ?`, [i, n]))[0] };
    const schedule = { all: (i: number) => rowsIn<{ id: number; node_id: string; lease_owner: string | null; version: number }>(
      ctx.file, `SELECT id, node_id, lease_owner, version FROM schedule WHERE instance_id = ? ORDER BY id`, [i]) };
    // Turn 1 claims the entry node a.
    expect(await engine.tick()).toBe(1);
    expect(await node.get(id, 'a')).toMatchObject({ status: 'RUNNING', attempt: 1 });
    const [claimOfA] = await schedule.all(id);
    expect(claimOfA).toMatchObject({ node_id: 'a', lease_owner: engine.owner });
    await settle();
    // Turn 2 commits a and, in the same transaction, starts b: never READY, already leased, in
    // a's row taken over in place (one version later; a READY row claimed later would be a new row).
    expect(await engine.tick()).toBe(2);
    expect((await node.get(id, 'a'))?.status).toBe('COMPLETED');
    expect(await node.get(id, 'b')).toMatchObject({ status: 'RUNNING', attempt: 1 });
    expect((await node.get(id, 'b'))?.started_at).not.toBeNull();
    expect(await schedule.all(id)).toEqual([{ id: claimOfA?.id, node_id: 'b', lease_owner: engine.owner, version: (claimOfA?.version ?? 0) + 1 }]);
    await settle();
    expect(await engine.tick()).toBe(2);
    await settle();
    expect(await engine.tick()).toBe(1);
    const inst = (await engine.getInstance(id));
    expect(inst.status).toBe('COMPLETED');
    expect(inst.nodes.map((n) => [n.id, n.status, n.attempt])).toEqual([
      ['a', 'COMPLETED', 1],
      ['b', 'COMPLETED', 1],
      ['c', 'COMPLETED', 1],
    ]);
    // Completion order (compensation runs in reverse of it) still follows the chain.
    const seq = inst.nodes.map((n) => n.completedSeq ?? 0);
    expect(seq[0]).toBeLessThan(seq[1] ?? 0);
    expect(seq[1]).toBeLessThan(seq[2] ?? 0);
    expect(await schedule.all(id)).toEqual([]);
  });

  it('makes nodes READY once every slot is taken (concurrency 1), and they still run', async () => {
    // x and y run handlers that take a slot (a pass would start whatever the slots: instant-rows.test.ts)
    const held = heldNodes();
    ctx = tempEngine({ registry: createDefaultRegistry().register(held.type), concurrency: 1 });
    const { engine } = ctx;
    await engine.deploy({
      name: 'fan',
      nodes: [{ id: 's', type: 'pass' }, { id: 'x', type: 'held' }, { id: 'y', type: 'held' }],
      edges: [{ from: 's', to: 'x' }, { from: 's', to: 'y' }],
    });
    const id = await engine.start('fan', {});
    await engine.tick();
    await settle();
    await engine.tick();
    await settle();
    await engine.tick();
    const statuses = (await engine.getInstance(id)).nodes.map((n) => n.status).sort();
    // One slot: one of x, y started at once, the other waits READY for a claim.
    expect(statuses).toEqual(['COMPLETED', 'READY', 'RUNNING']);
    expect(held.waiting).toBe(1);
    held.letGo();
    await engine.runUntil(async () => (await engine.isSettled(id)), 10_000);
    expect((await engine.getInstance(id)).status).toBe('COMPLETED');
  });

  it('a start with fewer free slots than entry nodes: that many start RUNNING, leased, the rest READY, the others PENDING (70 nodes)', async () => {
    // given: a worker running with 3 slots whose handlers wait until let go
    const held = heldNodes();
    ctx = tempEngine({ registry: createDefaultRegistry().register(held.type), concurrency: 3 });
    const { engine } = ctx;
    // 40 entry nodes, each followed by one of 30 nodes (more than one statement's worth of node rows)
    await engine.deploy({
      name: 'wide',
      nodes: [
        ...Array.from({ length: 40 }, (_, i) => ({ id: `e${i}`, type: 'held', config: {} })),
        ...Array.from({ length: 30 }, (_, i) => ({ id: `j${i}`, type: 'pass', config: {}, join: 'all' })),
      ],
      edges: Array.from({ length: 40 }, (_, i) => ({ from: `e${i}`, to: `j${i % 30}` })),
    });
    engine.startWorker();
    // when: an instance starts
    const id = await engine.start('wide', {});
    // then: every node has its row; 3 entry nodes started in the start's own transaction, leased
    const num = (nodeId: string) => Number(nodeId.slice(1));
    const rows = (await rowsIn<{ node_id: string; status: string; attempt: number; pending_in: number }>(
      ctx.file, `SELECT node_id, status, attempt, pending_in FROM node_state WHERE instance_id = ?`, [id])).sort((a, b) => num(a.node_id) - num(b.node_id));
    expect(rows).toHaveLength(70);
    const byStatus = (st: string) => rows.filter((r) => r.status === st);
    expect(byStatus('RUNNING').map((r) => [r.node_id, r.attempt])).toEqual([['e0', 1], ['e1', 1], ['e2', 1]]);
    expect(byStatus('READY').map((r) => r.node_id)).toEqual(Array.from({ length: 37 }, (_, i) => `e${i + 3}`));
    expect(byStatus('PENDING').map((r) => [r.node_id, r.pending_in])).toEqual(Array.from({ length: 30 }, (_, i) => [`j${i}`, i < 10 ? 2 : 1]));
    const leased = await rowsIn<{ node_id: string; lease_owner: string | null }>(ctx.file, `SELECT node_id, lease_owner FROM schedule WHERE instance_id = ? ORDER BY id`, [id]);
    expect(leased.filter((r) => r.lease_owner === engine.owner).map((r) => r.node_id).sort()).toEqual(['e0', 'e1', 'e2']);
    expect(leased).toHaveLength(40);
    // and: let go, every node runs and the instance completes
    expect(held.waiting).toBe(3);
    held.letGo();
    await engine.stopWorker();
    await engine.runUntil(() => engine.isSettled(id), 20_000);
    expect((await engine.getInstance(id)).status).toBe('COMPLETED');
  });

  it('takes a start back when a later outcome of the same turn fails the instance: the node never ran', async () => {
    ctx = tempEngine({ registry: createDefaultRegistry().register(failNow) });
    const { engine } = ctx;
    const ran: string[] = [];
    const off = engine.on((e) => {
      if (e.type === 'node.changed' && e.nodeId === 'x') ran.push(e.status);
    });
    await engine.deploy({
      name: 'race',
      // Two entry nodes: p's outcome (first) makes x ready; q's (second, same turn) fails the instance.
      nodes: [{ id: 'p', type: 'pass' }, { id: 'q', type: 'fail-now' }, { id: 'x', type: 'pass' }],
      edges: [{ from: 'p', to: 'x' }],
    });
    const id = await engine.start('race', {});
    expect(await engine.tick()).toBe(2);
    await settle();
    expect(await engine.tick()).toBe(2);
    off();
    const inst = (await engine.getInstance(id));
    expect(inst.status).toBe('FAILED');
    expect(inst.nodes.find((n) => n.id === 'x')).toMatchObject({ status: 'CANCELLED', attempt: 0, startedAt: null });
    expect(inst.nodes.find((n) => n.id === 'p')?.status).toBe('COMPLETED');
    expect(ran).toEqual(['RUNNING', 'CANCELLED']);
    expect(await rowsIn(ctx.file, `SELECT count(*) AS n FROM schedule WHERE instance_id = ?`, [id])).toEqual([{ n: 0 }]);
    // Nothing is left running: another turn has nothing to commit.
    await settle();
    expect(await engine.tick()).toBe(0);
  });
});

/**
 * Eager dispatch takes free slots in the turn that commits an outcome; due rows (a deadline, the
 * READY rows of other instances: new starts, timers, retries) must still be claimed at the next
 * free slot, in next_run_at order, as when every start went through a claim.
 */
describe('eager dispatch does not starve due rows', () => {
  let ctx: ReturnType<typeof tempEngine>;
  afterEach(async () => ctx.close());

  it('fails an instance whose deadline passed even while its chain keeps every slot busy', async () => {
    const clock = new ManualClock(1_000_000);
    ctx = tempEngine({ clock, concurrency: 1 });
    const { engine } = ctx;
    await engine.deploy(chain('dl', 5, { deadlineMs: 1000 }));
    const id = await engine.start('dl', {});
    await engine.tick(); // claims n0
    await settle();
    clock.advance(5000); // the deadline passes while n0 runs
    for (let i = 0; i < 10 && !(await engine.isSettled(id)); i++) {
      await engine.tick();
      await settle();
    }
    const inst = (await engine.getInstance(id));
    expect({ status: inst.status, error: (inst.error as { code?: string } | undefined)?.code }).toEqual({ status: 'FAILED', error: 'DEADLINE_EXCEEDED' });
  });

  it('runs a READY step of another instance before a long chain has finished', async () => {
    const clock = new ManualClock(1_000_000);
    ctx = tempEngine({ clock, concurrency: 1 });
    const { engine } = ctx;
    await engine.deploy(chain('long', 8));
    await engine.deploy(chain('short', 1));
    const long = await engine.start('long', {});
    await engine.tick(); // claims long's n0
    clock.advance(1);
    const short = await engine.start('short', {}); // READY, due now
    clock.advance(1);
    let shortDoneWhileLongRan = false;
    for (let i = 0; i < 30 && !((await engine.isSettled(long)) && (await engine.isSettled(short))); i++) {
      await settle();
      await engine.tick();
      clock.advance(1);
      if ((await engine.getInstance(short)).status === 'COMPLETED' && (await engine.getInstance(long)).status !== 'COMPLETED') shortDoneWhileLongRan = true;
    }
    expect((await engine.getInstance(long)).status).toBe('COMPLETED');
    expect((await engine.getInstance(short)).status).toBe('COMPLETED');
    expect(shortDoneWhileLongRan).toBe(true);
  });
});
