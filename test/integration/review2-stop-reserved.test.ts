/**
 * Second review of the hot path: Worker.stop() waits (up to its grace) only for handlers already
 * in `inflight`. A start dispatched at once by Engine.start holds a reserved slot between its
 * commit and its launch; a stop that begins in that window does not wait for it: the handler is
 * launched after the stop's last turn, aborted at once without any grace, and its lease released
 * (or, for an instant type, its result is dropped): the step runs again later.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createDefaultRegistry } from '../../engine/nodes/registry';
import type { NodeType } from '../../engine/nodes/types';
import { tempEngine } from '../helpers/temp-engine';

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

describe('review2: stop() and claims committed but not launched yet', () => {
  let ctx: ReturnType<typeof tempEngine>;
  afterEach(async () => ctx.close());

  it('gives a step started at once by start() its grace, and commits its outcome', async () => {
    calls.length = 0;
    ctx = tempEngine({ registry: createDefaultRegistry().register(shortJob) });
    const { engine } = ctx;
    await engine.deploy({ name: 'one', nodes: [{ id: 'a', type: 'short-job', config: {} }], edges: [] });
    engine.startWorker();
    // The stop begins in the window the review found: the start's transaction has committed (its
    // events are out) and the step it dispatched at once is not launched yet.
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
