/**
 * Review of the hot path: a node dispatched at once in the turn whose claims find the instance's
 * deadline passed. Before eager dispatch the deadline row (due earlier) was claimed before the
 * node's READY row and cancelled it; now the node is started (and later launched, unaborted) in
 * the same transaction that fails the instance.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ManualClock } from '../../engine/runtime/clock';
import { createDefaultRegistry } from '../../engine/nodes/registry';
import type { NodeType } from '../../engine/nodes/types';
import { tempEngine } from '../helpers/temp-engine';

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

describe('review: deadline in the turn that dispatches a node at once', () => {
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
