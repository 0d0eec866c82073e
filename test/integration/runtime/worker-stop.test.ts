/**
 * Stopping the worker waits (up to its grace) for every step it started, one that `start()`
 * dispatched at once included: between the start's commit and the step's launch that step holds
 * a reserved slot, and a stop that begins in that window still gives it its grace and commits its
 * outcome (it is neither aborted at once nor run again later).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createDefaultRegistry } from '../../../engine/nodes/registry';
import type { NodeType } from '../../../engine/nodes/types';
import { tempEngine } from '../../helpers/temp-engine';

const calls: string[] = [];
/** `short-job`: 50 ms of work that honours its abort signal. */
const shortJob: NodeType<Record<string, never>> = {
  type: 'short-job',
  title: 'Short job',
  description: 'Works 50 ms (tests)',
  icon: 'clock',
  group: 'Test',
  configSchema: z.strictObject({}),
  execute: (ctx) =>
    new Promise((resolve, reject) => {
      const t = setTimeout(() => {
        calls.push('done');
        resolve({ output: 'ok' });
      }, 50);
      ctx.signal.addEventListener('abort', () => {
        clearTimeout(t);
        calls.push('aborted');
        reject(ctx.signal.reason as Error);
      });
    }),
};

describe('stopping the worker while a step started at once is not launched yet', () => {
  let ctx: ReturnType<typeof tempEngine>;
  afterEach(async () => ctx.close());

  it('gives a step started at once by start() its grace, and commits its outcome', async () => {
    calls.length = 0;
    ctx = tempEngine({ registry: createDefaultRegistry().register(shortJob) });
    const { engine } = ctx;
    await engine.deploy({ name: 'one', nodes: [{ id: 'a', type: 'short-job', config: {} }], edges: [] });
    engine.startWorker();
    // The stop begins in the window between the start's commit (its events are out) and the
    // launch of the step it dispatched at once.
    let stopped: Promise<void> | undefined;
    const off = engine.on((e) => {
      if (e.type === 'instance.created') stopped = engine.stopWorker(5000);
    });
    const id = await engine.start('one', {});
    off();
    await stopped;
    expect({ calls, node: (await engine.getInstance(id)).nodes[0]?.status }).toEqual({ calls: ['done'], node: 'COMPLETED' });
  });
});
