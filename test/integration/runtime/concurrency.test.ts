/**
 * The worker's concurrency bound holds with eager dispatch: never more handlers at once than
 * `concurrency`, whether instances arrive one at a time, in batches, or several start at once.
 * (Each start offers eager dispatch only the free slots; claims that another start or a loop turn
 * committed but has not launched yet count as taken.)
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createDefaultRegistry } from '../../../engine/nodes/registry';
import type { NodeType } from '../../../engine/nodes/types';
import { everyOf } from '../../helpers/probe-nodes';
import { tempEngine } from '../../helpers/temp-engine';

let running = 0;
let maxRunning = 0;
let release: () => void = () => undefined;
let gate = new Promise<void>((r) => (release = r));

const hold: NodeType<Record<string, never>> = {
  type: 'hold',
  title: 'Hold',
  description: 'Waits for the test to release it',
  icon: 'clock',
  group: 'Test',
  configSchema: z.strictObject({}),
  execute: async () => {
    running++;
    maxRunning = Math.max(maxRunning, running);
    try {
      await gate;
    } finally {
      running--;
    }
    return { output: null };
  },
};

describe('the concurrency bound with eager dispatch', () => {
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

  it('never runs more handlers than --concurrency when several instances start at once', async () => {
    running = 0;
    maxRunning = 0;
    gate = new Promise<void>((r) => (release = r));
    ctx = tempEngine({ concurrency: 2, registry: createDefaultRegistry().register(hold) });
    const { engine } = ctx;
    await engine.deploy({ name: 'one', nodes: [{ id: 'h', type: 'hold', config: {} }], edges: [] });
    engine.startWorker();
    const ids = await Promise.all(Array.from({ length: 6 }, () => engine.start('one', {})));
    await new Promise((r) => setTimeout(r, 100));
    // While the handlers are held, exactly `concurrency` steps are RUNNING; the others wait READY.
    const statuses = await Promise.all(ids.map(async (id) => (await engine.getInstance(id)).nodes[0]?.status));
    const runningSteps = statuses.filter((s) => s === 'RUNNING').length;
    release();
    await engine.runUntil(() => everyOf(ids, (id) => engine.isSettled(id)), 10_000);
    expect({ runningSteps, maxRunning }).toEqual({ runningSteps: 2, maxRunning: 2 });
  });
});
