/**
 * Instance deadlines, on real database files: once the deadline has failed an instance, no node
 * of it starts: not one that eager dispatch would start in the very turn whose claims find the
 * deadline passed (its side effect never runs), and not when more instances share the deadline
 * than a turn fires.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createDefaultRegistry } from '../../../engine/nodes/registry';
import type { NodeType } from '../../../engine/nodes/types';
import { ManualClock } from '../../../engine/runtime/clock';
import { rowsIn } from '../../helpers/db-rows';
import { tempEngine } from '../../helpers/temp-engine';

/** Lets handlers started by the last turn settle (they run in microtasks and immediates). */
const settle = () => new Promise<void>((resolve) => setTimeout(resolve, 30));

const calls: string[] = [];
/** `side-effect`: records that it ran (an HTTP call, say), honouring its abort signal. */
const sideEffect: NodeType<Record<string, never>> = {
  type: 'side-effect',
  title: 'Side effect',
  description: 'Records its run (tests)',
  icon: 'send',
  group: 'Test',
  configSchema: z.strictObject({}),
  execute: (ctx) =>
    new Promise((resolve, reject) => {
      const t = setTimeout(() => {
        calls.push(`${ctx.nodeId} done`);
        resolve({ output: 'sent' });
      }, 50);
      ctx.signal.addEventListener('abort', () => {
        clearTimeout(t);
        calls.push(`${ctx.nodeId} aborted`);
        reject(ctx.signal.reason as Error);
      });
    }),
};

/**
 * The deadline row is due before the READY row `b` would get, so a claim would fail the instance
 * first; eager dispatch must not start `b` (and launch it unaborted) in the transaction that
 * fails the instance.
 */
describe('a deadline that passes before the turn that would start the next node at once', () => {
  let ctx: ReturnType<typeof tempEngine>;
  afterEach(async () => ctx.close());

  it('starts nothing (and runs no side effect) once the deadline has failed the instance', async () => {
    calls.length = 0;
    const clock = new ManualClock(1_000_000);
    ctx = tempEngine({ clock, registry: createDefaultRegistry().register(sideEffect) });
    const { engine } = ctx;
    await engine.deploy({
      name: 'deadline-race',
      deadlineMs: 1000,
      nodes: [{ id: 'a', type: 'pass', config: {} }, { id: 'b', type: 'side-effect', config: {} }],
      edges: [{ from: 'a', to: 'b' }],
    });
    const id = await engine.start('deadline-race', {});
    expect(await engine.tick()).toBe(1); // claims a
    await settle(); // a's handler finishes; its outcome waits for the next turn
    clock.advance(5000); // the deadline passes before that turn
    await engine.tick(); // commits a (b made ready) and claims the due deadline row
    await settle();
    await settle();
    await engine.tick();
    await settle();
    await engine.tick();
    const inst = (await engine.getInstance(id));
    expect(inst.status).toBe('FAILED');
    expect({ b: inst.nodes.find((n) => n.id === 'b')?.status, calls }).toEqual({ b: 'CANCELLED', calls: [] });
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
    const [late] = await rowsIn<{ n: number }>(ctx.file, `SELECT count(*) AS n FROM node_state s JOIN instance i ON i.id = s.instance_id WHERE s.started_at >= i.deadline_at`);
    expect(late?.n).toBe(0);
    const ended = await Promise.all(ids.map((id) => engine.getInstance(id)));
    expect(new Set(ended.map((i) => i.status))).toEqual(new Set(['FAILED']));
    expect(new Set(ended.map((i) => (i.error as { code?: string } | undefined)?.code))).toEqual(new Set(['DEADLINE_EXCEEDED']));
    // Each entry node's completion is recorded; nothing after it started.
    expect(new Set(ended.map((i) => i.nodes.map((n) => n.status).join(',')))).toEqual(new Set(['COMPLETED,CANCELLED,CANCELLED,CANCELLED']));
    expect(await rowsIn(ctx.file, `SELECT count(*) AS n FROM schedule`)).toEqual([{ n: 0 }]);
  });
});

/**
 * The deadline fails the instance and starts its compensations in one turn, and aborts the
 * handlers the instance had running: never those compensations (found by a newcomer's trial: a
 * compensation with one attempt failed DEADLINE_EXCEEDED and the instance ended SUSPENDED).
 */
describe('a deadline that fails an instance with compensations', () => {
  let ctx: ReturnType<typeof tempEngine>;
  afterEach(async () => ctx.close());

  it('runs each compensation once to its end (not aborted by the deadline that started it), then ends FAILED', async () => {
    calls.length = 0;
    const clock = new ManualClock(1_000_000);
    ctx = tempEngine({ clock, registry: createDefaultRegistry().register(sideEffect) });
    const { engine } = ctx;
    await engine.deploy({
      name: 'deadline-undo',
      deadlineMs: 1000,
      nodes: [
        { id: 'book', type: 'pass', config: {}, compensate: { type: 'side-effect', config: {}, retry: { maxAttempts: 1 } } },
        { id: 'wait', type: 'delay', config: { durationMs: 60_000 } },
      ],
      edges: [{ from: 'book', to: 'wait' }],
    });
    const id = await engine.start('deadline-undo', {});
    for (let i = 0; i < 4; i++) {
      await engine.tick();
      await settle();
    }
    expect((await engine.getInstance(id)).status).toBe('WAITING');
    clock.advance(5000); // the deadline passes while `wait` waits
    for (let i = 0; i < 8 && (await engine.getInstance(id)).status !== 'FAILED'; i++) {
      await engine.tick();
      await settle();
      await settle();
      await settle();
    }
    const inst = await engine.getInstance(id);
    expect(inst.status).toBe('FAILED');
    expect((inst.error as { code?: string } | undefined)?.code).toBe('DEADLINE_EXCEEDED');
    expect(calls).toEqual(['book done']);
    const history = await engine.history(id);
    expect(history.filter((h) => h.type.startsWith('compensation.')).map((h) => `${h.type} ${h.nodeId} ${h.attempt}`)).toEqual(['compensation.completed book 1']);
  });
});
