/**
 * Instance priority (`priority` on start, or the workflow's), on real databases (both backends):
 * claims take the due work of a higher priority before older work of a lower one, oldest first
 * within a priority, every later step of an instance keeps its place, a held instance of a
 * concurrency limit is admitted by priority, a child has its parent's, and out-of-range values
 * are refused naming the field.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createDefaultRegistry } from '../../../engine/nodes/registry';
import type { NodeType } from '../../../engine/nodes/types';
import { tempEngine, type TempEngine } from '../../helpers/temp-engine';

/** `mark`: records `<businessKey>:<node id>` in `log` as its attempt runs. */
function markType(log: string[]): NodeType<Record<string, never>> {
  return {
    type: 'mark',
    title: 'Mark',
    description: 'Records the order steps ran in (tests)',
    icon: 'hash',
    group: 'Test',
    configSchema: z.strictObject({}),
    execute: async (ctx) => {
      log.push(`${String(ctx.variables['who'])}:${ctx.nodeId}`);
      await new Promise((r) => setTimeout(r, 5));
      return { output: null };
    },
  };
}

const ENDED = new Set(['COMPLETED', 'FAILED', 'CANCELLED']);

async function untilEnded(engine: TempEngine['engine'], ids: readonly number[]): Promise<void> {
  const until = Date.now() + 30_000;
  for (;;) {
    const all = await Promise.all(ids.map((id) => engine.getInstance(id)));
    if (all.every((i) => ENDED.has(i.status))) return;
    if (Date.now() > until) throw new Error(`instances did not end: ${all.map((i) => `${i.id} ${i.status}`).join(', ')}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('priority', () => {
  let t: TempEngine;
  afterEach(async () => t.close());

  it('one handler at a time: higher priority first, start order within a priority, negative last; later steps keep the order', async () => {
    const log: string[] = [];
    t = tempEngine({ registry: createDefaultRegistry().register(markType(log)), concurrency: 1 });
    const { engine } = t;
    await engine.deploy({ name: 'two-steps', nodes: [{ id: 'a', type: 'mark' }, { id: 'b', type: 'mark' }], edges: [{ from: 'a', to: 'b' }] });
    // given: six instances started while no worker runs, in this order
    const starts: [string, number | undefined][] = [['p0-first', undefined], ['p0-second', 0], ['p5-first', 5], ['low', -3], ['p5-second', 5], ['top', 10]];
    const ids: number[] = [];
    for (const [who, priority] of starts) ids.push(await engine.start('two-steps', { variables: { who }, ...(priority === undefined ? {} : { priority }) }));
    expect((await engine.getInstance(ids[5] as number)).priority).toBe(10);
    expect((await engine.listInstances({ limit: 10 })).find((i) => i.id === ids[3])?.priority).toBe(-3);
    // when: one worker works them, one handler at a time
    engine.startWorker();
    await untilEnded(engine, ids);
    // then: each instance's first step in priority order; its second step is claimed ahead of any lower priority's first
    const firsts = log.filter((l) => l.endsWith(':a')).map((l) => l.slice(0, -2));
    expect(firsts).toEqual(['top', 'p5-first', 'p5-second', 'p0-first', 'p0-second', 'low']);
    expect(log.indexOf('top:b')).toBeLessThan(log.indexOf('p0-first:a'));
    expect(log.indexOf('p5-second:b')).toBeLessThan(log.indexOf('p0-first:a'));
    expect(log.indexOf('p0-second:b')).toBeLessThan(log.indexOf('low:a'));
    expect(log).toHaveLength(12);
  });

  it("the workflow's priority applies unless a start gives one; a child instance has its parent's", async () => {
    const log: string[] = [];
    t = tempEngine({ registry: createDefaultRegistry().register(markType(log)) });
    const { engine } = t;
    await engine.deploy({ name: 'leaf', nodes: [{ id: 'a', type: 'mark' }] });
    await engine.deploy({ name: 'urgent', priority: 7, nodes: [{ id: 'call', type: 'subworkflow', config: { workflow: 'leaf' } }] });
    await engine.deploy({ name: 'fan', nodes: [{ id: 'each', type: 'map', config: { items: '[1, 2]', workflow: 'leaf' } }] });
    const byDefault = await engine.start('urgent', { variables: { who: 'u' } });
    const overridden = await engine.start('urgent', { variables: { who: 'o' }, priority: -1 });
    const fan = await engine.start('fan', { variables: { who: 'f' }, priority: 4 });
    expect((await engine.getInstance(byDefault)).priority).toBe(7);
    expect((await engine.getInstance(overridden)).priority).toBe(-1);
    engine.startWorker();
    await untilEnded(engine, [byDefault, overridden, fan]);
    const childPriority = async (parentId: number): Promise<number[]> =>
      Promise.all((await engine.listInstances({ parentId, limit: 10 })).map(async (c) => (await engine.getInstance(c.id)).priority as number));
    expect(await childPriority(byDefault)).toEqual([7]);
    expect(await childPriority(overridden)).toEqual([-1]);
    expect(await childPriority(fan)).toEqual([4, 4]);
  });

  it('a concurrency limit admits held instances by priority, then start order', async () => {
    const log: string[] = [];
    t = tempEngine({ registry: createDefaultRegistry().register(markType(log)) });
    const { engine } = t;
    await engine.deploy({ name: 'one-at-a-time', concurrency: { limit: 1 }, nodes: [{ id: 'a', type: 'mark' }] });
    const ids: number[] = [];
    for (const [who, priority] of [['running', 0], ['mid', 1], ['late-high', 5], ['zero', 0], ['high', 5]] as const) {
      ids.push(await engine.start('one-at-a-time', { variables: { who }, priority }));
    }
    engine.startWorker();
    await untilEnded(engine, ids);
    expect(log.map((l) => l.slice(0, -2))).toEqual(['running', 'late-high', 'high', 'mid', 'zero']);
  });

  it('refuses a priority that is not an integer in range, naming the field', async () => {
    t = tempEngine();
    const { engine } = t;
    await expect(engine.deploy({ name: 'bad', priority: 1.5, nodes: [{ id: 'a', type: 'pass' }] })).rejects.toMatchObject({
      message: expect.stringContaining('priority'),
    });
    await expect(engine.deploy({ name: 'bad', priority: 2_000_000, nodes: [{ id: 'a', type: 'pass' }] })).rejects.toMatchObject({
      message: expect.stringContaining('priority'),
    });
  });
});
