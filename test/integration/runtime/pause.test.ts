/**
 * Pausing an instance, on real databases (both backends): a paused instance starts no node; a
 * running step finishes and is recorded; its timers, retries, wait timeouts and deadline keep the
 * time they had left and fire after the unpause; cancel works on it; a paused instance is found
 * by the list's `paused` filter. The clock is the test's own (ManualClock), so times are exact.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createDefaultRegistry } from '../../../engine/nodes/registry';
import type { NodeType } from '../../../engine/nodes/types';
import { ManualClock } from '../../../engine/runtime/clock';
import { tempEngine, type TempEngine } from '../../helpers/temp-engine';

let calls: string[] = [];
/** `mark`: records its run; fails while `config.failUntil` is above the call count. */
const mark: NodeType<{ failUntil?: number }> = {
  type: 'mark',
  title: 'Mark',
  description: 'Records its run (tests)',
  icon: 'hash',
  group: 'Test',
  configSchema: z.strictObject({ failUntil: z.number().optional() }),
  execute(ctx) {
    calls.push(ctx.nodeId);
    if ((ctx.config.failUntil ?? 0) >= calls.filter((c) => c === ctx.nodeId).length) return Promise.reject(new Error('not yet'));
    return Promise.resolve({ output: ctx.nodeId });
  },
};

/** Runs worker turns until nothing more happens. */
async function drain(engine: TempEngine['engine']): Promise<void> {
  for (let i = 0; i < 50; i++) {
    await engine.tick();
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('pause', () => {
  let t: TempEngine;
  afterEach(async () => t.close());

  it('starts no node while paused; a timer and a retry keep the time they had left, and the deadline clock stands still', async () => {
    calls = [];
    const clock = new ManualClock(1_000_000);
    t = tempEngine({ clock, registry: createDefaultRegistry().register(mark) });
    const { engine } = t;
    await engine.deploy({
      name: 'paced',
      deadlineMs: 60_000,
      nodes: [
        { id: 'a', type: 'mark', config: {} },
        { id: 'nap', type: 'delay', config: { durationMs: 10_000 } },
        { id: 'b', type: 'mark', config: { failUntil: 1 }, retry: { maxAttempts: 2, initialIntervalMs: 5000, jitter: 0 } },
        { id: 'c', type: 'mark', config: {} },
      ],
      edges: [
        { from: 'a', to: 'nap' },
        { from: 'nap', to: 'b' },
        { from: 'b', to: 'c' },
      ],
    });
    const id = await engine.start('paced');
    await drain(engine);
    expect(calls).toEqual(['a']);
    // 4 s into the 10 s delay, paused for an hour: the delay fires 6 s after the unpause.
    clock.advance(4000);
    await engine.pause(id, { actor: 'ops' });
    expect((await engine.getInstance(id)).pausedAt).toBe(1_004_000);
    expect((await engine.listInstances({ paused: true })).map((i) => i.id)).toEqual([id]);
    await expect(engine.pause(id)).rejects.toMatchObject({ code: 'INVALID_STATE' });
    clock.advance(3_600_000);
    await drain(engine);
    expect(calls).toEqual(['a']);
    // Past its 60 s deadline by the wall clock, but the deadline clock stood still while paused.
    expect((await engine.getInstance(id)).status).toBe('WAITING');
    await engine.unpause(id, { actor: 'ops' });
    expect((await engine.getInstance(id)).deadlineAt).toBe(1_000_000 + 60_000 + 3_600_000);
    // The delay's wait says when it fires now, as its row does (and as time travel shows it)
    const unpaused = await engine.getInstance(id);
    const nap = unpaused.nodes.find((n) => n.id === 'nap');
    expect(nap?.wait).toMatchObject({ kind: 'timer', until: 1_004_000 + 3_600_000 + 6000 });
    expect(nap?.nextRunAt).toBe(1_004_000 + 3_600_000 + 6000);
    const last = (await engine.history(id)).at(-1)!;
    expect((await engine.stateAt(id, last.id)).instance.nodes.find((n) => n.id === 'nap')).toMatchObject({ wait: nap?.wait, nextRunAt: nap?.nextRunAt });
    clock.advance(5999);
    await drain(engine);
    expect(calls).toEqual(['a']);
    clock.advance(1);
    await drain(engine);
    expect(calls).toEqual(['a', 'b']);
    // b failed once; pause during its 5 s backoff, 2 s in; after the unpause it waits 3 s more.
    clock.advance(2000);
    await engine.pause(id);
    clock.advance(100_000);
    await drain(engine);
    expect(calls).toEqual(['a', 'b']);
    await engine.unpause(id);
    expect((await engine.getInstance(id)).nodes.find((n) => n.id === 'b')).toMatchObject({ status: 'RETRYING', wait: { kind: 'retry', until: clock.now() + 3000 }, nextRunAt: clock.now() + 3000 });
    clock.advance(2999);
    await drain(engine);
    expect(calls).toEqual(['a', 'b']);
    clock.advance(1);
    await drain(engine);
    expect(calls).toEqual(['a', 'b', 'b', 'c']);
    const done = await engine.getInstance(id);
    expect(done.status).toBe('COMPLETED');
    const types = (await engine.history(id)).map((h) => h.type).filter((x) => x.startsWith('instance.'));
    expect(types).toEqual(['instance.created', 'instance.paused', 'instance.unpaused', 'instance.paused', 'instance.unpaused', 'instance.completed']);
  });

  it("an event node's time limit moves with the unpause: an event sent after the old limit, before the new one, is taken", async () => {
    calls = [];
    const clock = new ManualClock(2_000_000);
    t = tempEngine({ clock, registry: createDefaultRegistry().register(mark) });
    const { engine } = t;
    await engine.deploy({
      name: 'awaits',
      nodes: [
        { id: 'hear', type: 'event', config: { name: 'go' }, timeoutMs: 10_000 },
        { id: 'after', type: 'mark', config: {} },
      ],
      edges: [{ from: 'hear', to: 'after' }],
    });
    const id = await engine.start('awaits');
    await drain(engine);
    // 4 s into its 10 s limit, paused for a minute: 6 s are left after the unpause
    clock.advance(4000);
    await engine.pause(id);
    clock.advance(60_000);
    await engine.unpause(id);
    expect((await engine.getInstance(id)).nodes.find((n) => n.id === 'hear')?.wait).toMatchObject({ kind: 'event', timeoutAt: clock.now() + 6000 });
    // 5 s later (long past the limit it had before the pause) the event comes
    clock.advance(5000);
    await engine.signal({ id }, { event: 'go', data: { n: 1 } });
    await drain(engine);
    const done = await engine.getInstance(id);
    expect(done.status).toBe('COMPLETED');
    expect(calls).toEqual(['after']);
    expect(done.nodes.find((n) => n.id === 'hear')?.output).toEqual({ n: 1 });
  });

  it('a step running when the pause comes finishes and is recorded; the next one waits for the unpause; cancel ends a paused instance', async () => {
    calls = [];
    const releases = new Map<number, () => void>();
    const gate: NodeType<Record<string, never>> = {
      type: 'gate',
      title: 'Gate',
      description: 'Waits for the test (tests)',
      icon: 'hash',
      group: 'Test',
      configSchema: z.strictObject({}),
      execute: (ctx) => new Promise((resolve) => void releases.set(ctx.instanceId, () => resolve({ output: 'opened' }))),
    };
    t = tempEngine({ registry: createDefaultRegistry().register(mark).register(gate) });
    const { engine } = t;
    /** Runs until the gate's handler is running, then pauses the instance. */
    // The worker runs throughout (runUntil would stop it at its end, waiting for the held handler).
    engine.startWorker();
    const until = async (done: () => boolean | Promise<boolean>) => {
      for (let i = 0; i < 1000 && !(await done()); i++) await new Promise((r) => setTimeout(r, 10));
      expect(await done()).toBe(true);
    };
    const pauseWhileRunning = async (id: number): Promise<() => void> => {
      await until(() => releases.has(id));
      await engine.pause(id);
      return releases.get(id) as () => void;
    };
    await engine.deploy({ name: 'gated', nodes: [{ id: 'g', type: 'gate', config: {} }, { id: 'after', type: 'mark', config: {} }], edges: [{ from: 'g', to: 'after' }] });
    const id = await engine.start('gated');
    (await pauseWhileRunning(id))();
    await until(async () => (await engine.getInstance(id)).nodes.find((n) => n.id === 'g')?.status === 'COMPLETED');
    await new Promise((r) => setTimeout(r, 200));
    const held = await engine.getInstance(id);
    expect(held.nodes.find((n) => n.id === 'after')?.status).toBe('READY');
    expect(calls).toEqual([]);
    await engine.unpause(id);
    await until(async () => (await engine.getInstance(id)).status === 'COMPLETED');
    expect(calls).toEqual(['after']);

    const other = await engine.start('gated');
    const open = await pauseWhileRunning(other);
    await engine.cancel(other);
    const cancelled = await engine.getInstance(other);
    expect(cancelled).toMatchObject({ status: 'CANCELLED', pausedAt: null });
    await expect(engine.unpause(other)).rejects.toMatchObject({ code: 'INVALID_STATE' });
    open();
  });
});
