/**
 * Review of the hot path: the worker's concurrency bound must hold with eager dispatch at start.
 * Engine.start offers eager dispatch with `concurrency - inflight` slots, but claims committed by
 * another start (or by a loop turn) are only counted in `inflight` once launched, after an await.
 */
import { everyOf } from '../helpers/probe-nodes';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createDefaultRegistry } from '../../engine/nodes/registry';
import type { NodeType } from '../../engine/nodes/types';
import { tempEngine } from '../helpers/temp-engine';

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

describe('review: concurrency bound with eager dispatch', () => {
  let ctx: ReturnType<typeof tempEngine>;
  afterEach(async () => ctx.close());

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
    const inflight = engine['worker'].inflightCount as number;
    release();
    await engine.runUntil(() => everyOf(ids, (id) => engine.isSettled(id)), 10_000);
    expect({ inflight, maxRunning }).toEqual({ inflight: 2, maxRunning: 2 });
  });
});
