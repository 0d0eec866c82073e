/**
 * Runtime failures a newcomer review found, each kept as a test of its whole kind:
 * several incidents at once, a lost attempt of an instant type, the failure visible behind an
 * error edge, fault points armed only on purpose, and the timer firing in history.
 */
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Engine } from '../../engine/runtime/engine';
import { ManualClock } from '../../engine/runtime/clock';
import { tempEngine, runToSettled, tempDir } from '../helpers/temp-engine';
import { nodeStatus, tickUntil, turn, everyOf } from '../helpers/probe-nodes';

const boom = (id: string) => ({ id, type: 'script', config: { code: `throw new Error('${id} broke')` }, retry: { maxAttempts: 1 }, onFailure: 'suspend' as const });

describe('several incidents at once', () => {
  let ctx: ReturnType<typeof tempEngine>;
  afterEach(async () => ctx.close());

  it('stays SUSPENDED until every failed branch is resolved, then completes', async () => {
    // given two parallel branches that both fail with onFailure "suspend"
    ctx = tempEngine();
    const { engine } = ctx;
    await engine.deploy({ name: 'two-incidents', nodes: [boom('x'), boom('y')], edges: [] });
    const id = await engine.start('two-incidents');
    await engine.runUntil(async () => (await engine.getInstance(id)).nodes.every((n) => n.status === 'FAILED'), 10_000);
    let inst = (await engine.getInstance(id));
    expect(inst.status).toBe('SUSPENDED');
    const first = inst.suspension?.nodeId;
    expect(['x', 'y']).toContain(first);
    const second = first === 'x' ? 'y' : 'x';

    // when the first incident is skipped
    await engine.resume(id, { action: 'skip', result: { fixed: first }, actor: 'ops' });

    // then the instance still waits for a person, now at the other branch
    inst = (await engine.getInstance(id));
    expect(inst.status).toBe('SUSPENDED');
    expect(inst.suspension?.nodeId).toBe(second);

    // and skipping that one too completes it
    await engine.resume(id, { action: 'skip', result: { fixed: second }, actor: 'ops' });
    inst = await runToSettled(engine, id);
    expect(inst.status).toBe('COMPLETED');
    expect(inst.nodes.map((n) => n.status)).toEqual(['COMPLETED', 'COMPLETED']);
  });

  it('with a join "all" behind both branches, runs the join once both are resolved (no WAITING forever)', async () => {
    ctx = tempEngine();
    const { engine } = ctx;
    await engine.deploy({
      name: 'two-incidents-join',
      nodes: [boom('x'), boom('y'), { id: 'after', type: 'pass', join: 'all' }],
      edges: [
        { from: 'x', to: 'after' },
        { from: 'y', to: 'after' },
      ],
    });
    const id = await engine.start('two-incidents-join');
    await engine.runUntil(() => everyOf(['x', 'y'], async (n) => (await nodeStatus(engine, id, n)) === 'FAILED'), 10_000);
    await engine.resume(id, { action: 'skip', result: 1, actor: 'ops' });
    expect((await engine.getInstance(id)).status).toBe('SUSPENDED');
    await engine.resume(id, { action: 'retry', actor: 'ops' });
    // the retry fails again (same script): the instance is SUSPENDED at that node once more
    let inst = await runToSettled(engine, id);
    expect(inst.status).toBe('SUSPENDED');
    await engine.resume(id, { action: 'skip', result: 2, actor: 'ops' });
    inst = await runToSettled(engine, id);
    expect(inst.status).toBe('COMPLETED');
    expect(inst.nodes.find((n) => n.id === 'after')?.status).toBe('COMPLETED');
  });
});

describe('an attempt of an instant type lost with its worker', () => {
  it('is run again without using up the single attempt of a delay (one crash does not fail the instance)', async () => {
    // given a delay (1 attempt by default) whose claim is lost with its worker
    const { dir, cleanup } = tempDir();
    const file = path.join(dir, 'runnel.db');
    const clock = new ManualClock(1_000_000);
    const a = Engine.open(file, { clock, leaseMs: 1000, pollIntervalMs: 5 });
    try {
      await a.deploy({
        name: 'nap',
        nodes: [
          { id: 'start', type: 'pass' },
          { id: 'nap', type: 'delay', config: { durationMs: 5000 } },
          { id: 'end', type: 'pass' },
        ],
        edges: [
          { from: 'start', to: 'nap' },
          { from: 'nap', to: 'end' },
        ],
      });
      const id = await a.start('nap');
      await tickUntil(a, async () => (await nodeStatus(a, id, 'nap')) === 'RUNNING', 'nap claimed');
      // the worker dies between the claim and its commit: its outcome is never committed
      a.db.close();

      // when another worker takes over after the lease expired
      clock.advance(1500);
      const b = Engine.open(file, { clock, leaseMs: 1000, pollIntervalMs: 5 });
      try {
        await tickUntil(b, async () => (await nodeStatus(b, id, 'nap')) === 'WAITING', 'nap waiting on the new worker');
        clock.advance(6000);
        await tickUntil(b, async () => (await b.getInstance(id)).status === 'COMPLETED', 'instance completed');

        // then the recovery is recorded, uncounted, and the delay still had its one attempt
        const history = (await b.history(id));
        const recovered = history.filter((h) => h.type === 'node.recovered' && h.nodeId === 'nap');
        expect(recovered).toHaveLength(1);
        expect(recovered[0]?.data).toMatchObject({ reason: 'recovered after a lost lease', counted: false });
        expect((await b.getInstance(id)).nodes.find((n) => n.id === 'nap')).toMatchObject({ status: 'COMPLETED', attempt: 1, maxAttempts: 1 });
        // the timer fired once, at or after its due time, and history says so
        const fired = history.filter((h) => h.type === 'timer.fired' && h.nodeId === 'nap');
        expect(fired).toHaveLength(1);
        const data = fired[0]?.data as { dueAt: number; lateMs: number };
        expect(fired[0]?.at).toBeGreaterThanOrEqual(data.dueAt);
      } finally {
        await b.close();
      }
    } finally {
      cleanup();
    }
  });
});

describe('behind an error edge', () => {
  let ctx: ReturnType<typeof tempEngine>;
  afterEach(async () => ctx.close());

  it('the handler sees the failure as $error and as $steps.<failed node>.error', async () => {
    ctx = tempEngine();
    const { engine } = ctx;
    await engine.deploy({
      name: 'handled',
      nodes: [
        { id: 'charge', type: 'script', config: { code: "throw new Error('card declined')" }, retry: { maxAttempts: 1 } },
        { id: 'apologise', type: 'pass', input: '{ "why": $error.message, "again": $steps.charge.error.message }', output: 'apology' },
      ],
      edges: [{ from: 'charge', to: 'apologise', on: 'error' }],
    });
    const id = await engine.start('handled');
    const inst = await runToSettled(engine, id);
    expect(inst.status).toBe('COMPLETED');
    expect(inst.variables.apology).toEqual({ why: 'script threw Error: card declined', again: 'script threw Error: card declined' });
  });
});

describe('fault points', () => {
  let ctx: ReturnType<typeof tempEngine>;
  afterEach(async () => {
    delete process.env.RUNNEL_FAULTS;
    await ctx.close();
  });

  it('are not armed by RUNNEL_FAULTS alone (a stray variable never kills a real worker)', async () => {
    process.env.RUNNEL_FAULTS = 'claimed=throw';
    ctx = tempEngine();
    const { engine } = ctx;
    await engine.deploy({ name: 'plain', nodes: [{ id: 'a', type: 'pass' }] });
    const id = await engine.start('plain');
    await turn();
    const inst = await runToSettled(engine, id);
    expect(inst.status).toBe('COMPLETED');
    expect((await engine.history(id)).some((h) => h.type === 'node.recovered')).toBe(false);
  });
});

describe('a workflow whose node type this process does not have', () => {
  it('is left to a worker that has it, while every other instance keeps running here', async () => {
    // given a file where another process deployed and started a workflow with a custom type
    const { dir, cleanup } = tempDir();
    const file = path.join(dir, 'runnel.db');
    const { createDefaultRegistry } = await import('../../engine/nodes/registry');
    const { z } = await import('zod');
    const withPlugin = createDefaultRegistry({
      types: [{ type: 'csv.read', title: 'CSV', description: 'reads', icon: 'file', group: 'Data', configSchema: z.object({}).loose(), execute: () => Promise.resolve({ output: { rows: 3 } }) }],
    });
    const other = Engine.open(file, { registry: withPlugin, pollIntervalMs: 5 });
    const errors: string[] = [];
    const original = console.error;
    console.error = (...args: unknown[]) => void errors.push(args.map(String).join(' '));
    try {
      await other.deploy({ name: 'plugin-flow', nodes: [{ id: 'extract', type: 'csv.read' }] });
      await other.deploy({ name: 'plain', nodes: [{ id: 'a', type: 'pass' }] });
      const pluginId = await other.start('plugin-flow');
      const plainId = await other.start('plain');
      await other.close();

      // when a worker without the plugin works the file
      const here = Engine.open(file, { pollIntervalMs: 5 });
      try {
        const plain = await runToSettled(here, plainId);
        // then the plain instance completed, the plugin one is untouched and waits, and the
        // worker said once why; it counts as idle (nothing it can run is left)
        expect(plain.status).toBe('COMPLETED');
        expect((await here.getInstance(pluginId))).toMatchObject({ status: 'PENDING' });
        expect((await here.getInstance(pluginId)).nodes[0]).toMatchObject({ status: 'READY', attempt: 0 });
        expect(errors.filter((e) => e.includes('cannot run workflow version'))).toHaveLength(1);
        expect((await here.isIdle())).toBe(true);
      } finally {
        await here.close();
      }

      // and a worker with the plugin runs it
      const later = Engine.open(file, { registry: withPlugin, pollIntervalMs: 5 });
      try {
        await later.runUntil(async () => (await later.getInstance(pluginId)).status === 'COMPLETED', 15_000);
        expect((await later.getInstance(pluginId)).variables).toEqual({});
      } finally {
        await later.close();
      }
    } finally {
      console.error = original;
      cleanup();
    }
  });
});
