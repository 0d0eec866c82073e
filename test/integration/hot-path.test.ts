/**
 * The worker's hot path (issue 6), on real database files: eager dispatch (a node made ready by
 * an outcome starts in the same transaction, leased to the worker), taking such a start back when
 * its instance begins failing in the same turn, and outcomes committed without a savepoint each
 * (one that fails to commit is isolated; the others still land).
 */
import { everyOf } from '../helpers/probe-nodes';
import fs from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { EngineError } from '../../engine/errors';
import { createDefaultRegistry } from '../../engine/nodes/registry';
import { ManualClock } from '../../engine/runtime/clock';
import type { NodeType } from '../../engine/nodes/types';
import { z } from 'zod';
import { tempEngine } from '../helpers/temp-engine';

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
    const node = engine.db.raw.prepare<[number, string], { status: string; attempt: number; started_at: number | null }>(
      `SELECT status, attempt, started_at FROM node_state WHERE instance_id = ? AND node_id = ?`,
    );
    const schedule = engine.db.raw.prepare<[number], { id: number; node_id: string; lease_owner: string | null; version: number }>(
      `SELECT id, node_id, lease_owner, version FROM schedule WHERE instance_id = ? ORDER BY id`,
    );
    // Turn 1 claims the entry node a.
    expect(await engine.tick()).toBe(1);
    expect(node.get(id, 'a')).toMatchObject({ status: 'RUNNING', attempt: 1 });
    const [claimOfA] = schedule.all(id);
    expect(claimOfA).toMatchObject({ node_id: 'a', lease_owner: engine.owner });
    await settle();
    // Turn 2 commits a and, in the same transaction, starts b: never READY, already leased, in
    // a's row taken over in place (one version later; a READY row claimed later would be a new row).
    expect(await engine.tick()).toBe(2);
    expect(node.get(id, 'a')?.status).toBe('COMPLETED');
    expect(node.get(id, 'b')).toMatchObject({ status: 'RUNNING', attempt: 1 });
    expect(node.get(id, 'b')?.started_at).not.toBeNull();
    expect(schedule.all(id)).toEqual([{ id: claimOfA?.id, node_id: 'b', lease_owner: engine.owner, version: (claimOfA?.version ?? 0) + 1 }]);
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
    expect(schedule.all(id)).toEqual([]);
  });

  it('makes nodes READY once every slot is taken (concurrency 1), and they still run', async () => {
    ctx = tempEngine({ concurrency: 1 });
    const { engine } = ctx;
    await engine.deploy({
      name: 'fan',
      nodes: [{ id: 's', type: 'pass' }, { id: 'x', type: 'pass' }, { id: 'y', type: 'pass' }],
      edges: [{ from: 's', to: 'x' }, { from: 's', to: 'y' }],
    });
    const id = await engine.start('fan', {});
    await engine.tick();
    await settle();
    await engine.tick();
    const statuses = (await engine.getInstance(id)).nodes.map((n) => n.status).sort();
    // One slot: one of x, y started at once, the other waits READY for a claim.
    expect(statuses).toEqual(['COMPLETED', 'READY', 'RUNNING']);
    await engine.runUntil(async () => (await engine.isSettled(id)), 10_000);
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
    expect(engine.db.raw.prepare(`SELECT count(*) AS n FROM schedule WHERE instance_id = ?`).get(id)).toEqual({ n: 0 });
    // Nothing is left running: another turn has nothing to commit.
    await settle();
    expect(await engine.tick()).toBe(0);
  });
});

describe('outcomes committed without a savepoint each', () => {
  let ctx: ReturnType<typeof tempEngine>;
  afterEach(async () => {
    vi.restoreAllMocks();
    await ctx.close();
  });

  it('isolates an outcome that fails to commit: the others of its turn land, its claim stays leased', async () => {
    ctx = tempEngine();
    const { engine } = ctx;
    const errors = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    await engine.deploy({ name: 'one', nodes: [{ id: 'a', type: 'pass' }] });
    // A trigger makes completing instance 2's node fail inside the turn's transaction.
    engine.db.raw.exec(`CREATE TRIGGER refuse_two BEFORE UPDATE OF status ON node_state
      WHEN NEW.instance_id = 2 AND NEW.status = 'COMPLETED' BEGIN SELECT RAISE(ABORT, 'refused by test'); END`);
    const ids = await engine.startMany('one', [{}, {}, {}]);
    expect(ids).toEqual([1, 2, 3]);
    expect(await engine.tick()).toBe(3);
    await settle();
    await engine.tick();
    expect((await engine.getInstance(1)).status).toBe('COMPLETED');
    expect((await engine.getInstance(3)).status).toBe('COMPLETED');
    const two = (await engine.getInstance(2));
    expect(two.status).toBe('RUNNING');
    expect(two.nodes[0]?.status).toBe('RUNNING');
    expect(errors.mock.calls.some((c) => String(c[0]).includes('cannot commit completed of instance 2'))).toBe(true);
    // Once the cause is gone, the expired lease lets the step run again and finish.
    engine.db.raw.exec(`DROP TRIGGER refuse_two`);
    engine.db.raw.prepare(`UPDATE schedule SET next_run_at = 0 WHERE instance_id = 2`).run();
    await engine.runUntil(async () => (await engine.isSettled(2)), 10_000);
    expect((await engine.getInstance(2)).status).toBe('COMPLETED');
  });
});

describe('the start variables are stored once while unchanged', () => {
  let ctx: ReturnType<typeof tempEngine>;
  afterEach(async () => ctx.close());

  it('keeps the input apart from the first change of the variables on', async () => {
    ctx = tempEngine();
    const { engine } = ctx;
    await engine.deploy({
      name: 'vars',
      nodes: [
        { id: 'a', type: 'pass', config: { result: 1 } },
        { id: 'b', type: 'pass', config: { result: 2 }, output: 'total' },
      ],
      edges: [{ from: 'a', to: 'b' }],
    });
    const id = await engine.start('vars', { variables: { total: 1, who: 'ann' } });
    const stored = engine.db.raw.prepare<[number], { input_json: string }>(`SELECT input_json FROM instance WHERE id = ?`);
    expect(stored.get(id)?.input_json).toBe('');
    expect((await engine.getInstance(id)).input).toEqual({ total: 1, who: 'ann' });
    await engine.runUntil(async () => (await engine.isSettled(id)), 10_000);
    const inst = (await engine.getInstance(id));
    expect(inst.status).toBe('COMPLETED');
    expect(inst.variables).toEqual({ total: 2, who: 'ann' });
    expect(inst.input).toEqual({ total: 1, who: 'ann' });
    expect(JSON.parse(stored.get(id)?.input_json ?? 'null')).toEqual({ total: 1, who: 'ann' });
  });
});

describe('WAL checkpoints on their own thread while the worker runs', () => {
  let ctx: ReturnType<typeof tempEngine>;
  afterEach(async () => ctx.close());

  it('copies committed pages into the database file between the worker\'s commits, and stops with the worker', async () => {
    // An automatic checkpoint far away: only the thread can have copied pages into the file.
    ctx = tempEngine({ walAutocheckpoint: 100_000 });
    const { engine, file } = ctx;
    await engine.deploy({ name: 'one', nodes: [{ id: 'a', type: 'pass' }] });
    engine.db.checkpoint('TRUNCATE');
    const before = fs.statSync(file).size;
    engine.startWorker();
    const ids = await engine.startMany('one', Array.from({ length: 300 }, (_, i) => ({ i, pad: 'x'.repeat(200) })));
    const last = ids[ids.length - 1] ?? 0;
    await new Promise<void>((resolve, reject) => {
      const deadline = Date.now() + 10_000;
      const poll = async () => {
        if ((await engine.isSettled(last)) && fs.statSync(file).size > before + 64 * 1024) resolve();
        else if (Date.now() > deadline) reject(new Error(`database file stayed at ${fs.statSync(file).size} bytes (was ${before})`));
        else setTimeout(() => void poll(), 20);
      };
      void poll();
    });
    expect(fs.statSync(file).size).toBeGreaterThan(before + 64 * 1024);
    // Stopping the worker stops the thread: nothing is left to keep the process alive.
    await engine.stopWorker();
    const size = fs.statSync(file).size;
    await engine.start('one', {});
    await new Promise((r) => setTimeout(r, 100));
    expect(fs.statSync(file).size).toBe(size);
  });
});

describe('eager dispatch respects the concurrency limit', () => {
  let ctx: ReturnType<typeof tempEngine>;
  afterEach(async () => ctx.close());

  it('never runs more handlers at once than `concurrency`, however instances arrive', async () => {
    let running = 0;
    let most = 0;
    const slow: NodeType<Record<string, never>> = {
      type: 'slow-count',
      title: 'Slow',
      description: 'Counts handlers running at once (tests)',
      icon: 'clock',
      group: 'Test',
      configSchema: z.strictObject({}),
      execute: async () => {
        running++;
        most = Math.max(most, running);
        await new Promise((r) => setTimeout(r, 5));
        running--;
        return { output: null };
      },
    };
    ctx = tempEngine({ concurrency: 3, registry: createDefaultRegistry().register(slow) });
    const { engine } = ctx;
    await engine.deploy({
      name: 'two-slow',
      nodes: [{ id: 'a', type: 'slow-count' }, { id: 'b', type: 'slow-count' }, { id: 'c', type: 'slow-count' }],
      edges: [{ from: 'a', to: 'c' }, { from: 'b', to: 'c' }],
    });
    engine.startWorker();
    const ids: number[] = [];
    for (let i = 0; i < 6; i++) {
      ids.push(await engine.start('two-slow', {}));
      ids.push(...(await engine.startMany('two-slow', [{}, {}])));
    }
    await engine.runUntil(() => everyOf(ids, async (id) => (await engine.isSettled(id))), 20_000);
    expect(await Promise.all(ids.map(async (id) => (await engine.getInstance(id)).status))).toEqual(ids.map(() => 'COMPLETED'));
    expect(most).toBeGreaterThan(1);
    expect(most).toBeLessThanOrEqual(3);
  });
});

describe('deadlines shared by many instances', () => {
  let ctx: ReturnType<typeof tempEngine>;
  afterEach(async () => ctx.close());

  it('starts no node after the deadline, even when more instances share it than a turn fires', async () => {
    // The entry node finishes in the reverse order of the instances, so this turn's outcomes come
    // in another order than the deadline rows a turn fires (64) and claims.
    const reverse: NodeType<Record<string, never>> = {
      type: 'reverse',
      title: 'Reverse',
      description: 'Finishes later for lower instance ids (tests)',
      icon: 'clock',
      group: 'Test',
      configSchema: z.strictObject({}),
      execute: (ctx) => new Promise((resolve) => setTimeout(() => resolve({ output: null }), 2 * (200 - ctx.instanceId))),
    };
    const clock = new ManualClock(1_000_000);
    ctx = tempEngine({ clock, concurrency: 150, registry: createDefaultRegistry().register(reverse) });
    const { engine } = ctx;
    await engine.deploy({
      name: 'dl-chain',
      deadlineMs: 1000,
      nodes: [{ id: 'n0', type: 'reverse' }, ...Array.from({ length: 3 }, (_, i) => ({ id: `n${i + 1}`, type: 'pass', config: { result: i } }))],
      edges: Array.from({ length: 3 }, (_, i) => ({ from: `n${i}`, to: `n${i + 1}` })),
    });
    const ids = await engine.startMany('dl-chain', Array.from({ length: 150 }, () => ({})));
    expect(await engine.tick()).toBe(150); // claims every entry node
    await new Promise((r) => setTimeout(r, 450)); // every entry node has finished
    clock.advance(5000); // the deadline passed before their outcomes commit
    for (let i = 0; i < 6; i++) {
      await engine.tick();
      await settle();
    }
    const late = engine.db.raw
      .prepare(`SELECT count(*) AS n FROM node_state s JOIN instance i ON i.id = s.instance_id WHERE s.started_at >= i.deadline_at`)
      .get() as { n: number };
    expect(late.n).toBe(0);
    const ended = await Promise.all(ids.map((id) => engine.getInstance(id)));
    expect(new Set(ended.map((i) => i.status))).toEqual(new Set(['FAILED']));
    expect(new Set(ended.map((i) => (i.error as { code?: string } | undefined)?.code))).toEqual(new Set(['DEADLINE_EXCEEDED']));
    // Each entry node's completion is recorded; nothing after it started.
    expect(new Set(ended.map((i) => i.nodes.map((n) => n.status).join(',')))).toEqual(new Set(['COMPLETED,CANCELLED,CANCELLED,CANCELLED']));
    expect(engine.db.raw.prepare(`SELECT count(*) AS n FROM schedule`).get()).toEqual({ n: 0 });
  });
});

describe('idle means nothing due', () => {
  let ctx: ReturnType<typeof tempEngine>;
  afterEach(async () => ctx.close());

  it('is not idle while a passed approval timeout waits to be handled, and is once its error path ran', async () => {
    const clock = new ManualClock(1_000_000);
    ctx = tempEngine({ clock });
    const { engine } = ctx;
    await engine.deploy({
      name: 'ask-or-escalate',
      nodes: [
        { id: 'ask', type: 'approval', config: { prompt: 'ok?' }, timeoutMs: 1000 },
        { id: 'yes', type: 'pass' },
        { id: 'escalate', type: 'pass' },
      ],
      edges: [
        { from: 'ask', to: 'yes' },
        { from: 'ask', to: 'escalate', on: 'error' },
      ],
    });
    const id = await engine.start('ask-or-escalate', {});
    await engine.tick();
    await settle();
    await engine.tick();
    expect((await engine.getInstance(id)).status).toBe('WAITING');
    // Waiting for a person, timeout not yet due: nothing to do.
    expect((await engine.isIdle())).toBe(true);
    clock.advance(1500);
    // The timeout is due: there is work.
    expect((await engine.isIdle())).toBe(false);
    for (let i = 0; i < 4; i++) {
      await engine.tick();
      await settle();
    }
    expect((await engine.getInstance(id)).status).toBe('COMPLETED');
    expect((await engine.getInstance(id)).nodes.find((n) => n.id === 'escalate')?.status).toBe('COMPLETED');
    expect((await engine.isIdle())).toBe(true);
  });
});
