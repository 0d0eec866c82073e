/**
 * Flow control on a workflow (`concurrency: { limit, key? }`), on real databases (both
 * backends): at most `limit` instances of a slot in progress at once, the rest PENDING and held in
 * start order; per-key slots progress independently; a held instance cancelled leaves the queue
 * intact; the list says a held instance waits for `concurrency`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createDefaultRegistry } from '../../../engine/nodes/registry';
import type { NodeType } from '../../../engine/nodes/types';
import { tempEngine, type TempEngine } from '../../helpers/temp-engine';

/** `nap`: resolves after `config.ms` (real time). */
const nap: NodeType<{ ms: number }> = {
  type: 'nap',
  title: 'Nap',
  description: 'Sleeps (tests)',
  icon: 'hash',
  group: 'Test',
  configSchema: z.strictObject({ ms: z.number() }),
  execute: (ctx) => new Promise((resolve) => setTimeout(() => resolve({ output: ctx.config.ms }), ctx.config.ms)),
};

const ENDED = new Set(['COMPLETED', 'FAILED', 'CANCELLED']);

describe('concurrency limit', () => {
  let t: TempEngine;
  afterEach(async () => t.close());

  /** Samples the in-progress instances (admitted, not ended) per key until every instance ended; returns the most seen at once, per key. */
  async function sampleUntilEnded(engine: TempEngine['engine'], keyOf: (i: { businessKey: string | null }) => string, timeoutMs = 30_000): Promise<Map<string, number>> {
    const most = new Map<string, number>();
    const until = Date.now() + timeoutMs;
    for (;;) {
      const items = await engine.listInstances({ limit: 500 });
      const now = new Map<string, number>();
      for (const i of items) if (!ENDED.has(i.status) && i.held !== true) now.set(keyOf(i), (now.get(keyOf(i)) ?? 0) + 1);
      for (const [k, n] of now) most.set(k, Math.max(most.get(k) ?? 0, n));
      if (items.length > 0 && items.every((i) => ENDED.has(i.status))) return most;
      if (Date.now() > until) throw new Error('instances did not end in time');
      await new Promise((r) => setTimeout(r, 3));
    }
  }

  it('limit 2: six instances, at most two in progress at any time, all COMPLETED, started in start order', async () => {
    t = tempEngine({ registry: createDefaultRegistry().register(nap) });
    const { engine } = t;
    await engine.deploy({ name: 'capped', concurrency: { limit: 2 }, nodes: [{ id: 'a', type: 'nap', config: { ms: 60 } }, { id: 'b', type: 'nap', config: { ms: 10 } }], edges: [{ from: 'a', to: 'b' }] });
    const ids = await engine.startMany('capped', [{}, {}, {}, {}]);
    ids.push(await engine.start('capped'), await engine.start('capped'));
    const listed = await engine.listInstances({ limit: 10 });
    expect(listed.filter((i) => i.held === true)).toHaveLength(4);
    expect(listed.filter((i) => i.held !== true).map((i) => i.id).sort((a, b) => a - b)).toEqual(ids.slice(0, 2));
    engine.startWorker();
    const most = await sampleUntilEnded(engine, () => 'all');
    expect(most.get('all')).toBe(2);
    const done = await Promise.all(ids.map((id) => engine.getInstance(id)));
    expect(done.map((i) => i.status)).toEqual(Array(6).fill('COMPLETED'));
    const started = done.map((i) => i.startedAt as number);
    for (let k = 1; k < started.length; k++) expect(started[k]).toBeGreaterThanOrEqual(started[k - 1] as number);
    const types = (await engine.history(ids[5] as number)).map((h) => h.type).filter((x) => x.startsWith('instance.'));
    expect(types).toEqual(['instance.created', 'instance.admitted', 'instance.completed']);
  });

  it('a key gives each value its own slots: two keys progress independently', async () => {
    t = tempEngine({ registry: createDefaultRegistry().register(nap) });
    const { engine } = t;
    await engine.deploy({ name: 'per-tenant', concurrency: { limit: 1, key: 'tenant' }, nodes: [{ id: 'a', type: 'nap', config: { ms: 40 } }] });
    for (let k = 0; k < 3; k++) {
      for (const tenant of ['acme', 'globex']) await engine.start('per-tenant', { variables: { tenant }, businessKey: tenant });
    }
    const listed = await engine.listInstances({ limit: 10 });
    // One of each tenant admitted at once: the other tenant's queue does not wait for it.
    expect(listed.filter((i) => i.held !== true).map((i) => i.businessKey).sort()).toEqual(['acme', 'globex']);
    engine.startWorker();
    const most = await sampleUntilEnded(engine, (i) => i.businessKey ?? '?');
    expect(Object.fromEntries(most)).toEqual({ acme: 1, globex: 1 });
    expect((await engine.listInstances({ status: ['COMPLETED'], limit: 10 })).length).toBe(6);
    await expect(engine.start('per-tenant', { variables: { tenant: { nested: true } } })).rejects.toMatchObject({ code: 'INVALID_VARIABLES', message: expect.stringContaining('concurrency.key') });
    await expect(engine.start('per-tenant', { variables: {} })).rejects.toMatchObject({ code: 'INVALID_VARIABLES' });
  });

  it('a held instance waits for concurrency in the list; cancelling it leaves the queue intact', async () => {
    t = tempEngine({ registry: createDefaultRegistry().register(nap) });
    const { engine } = t;
    await engine.deploy({ name: 'one-at-a-time', concurrency: { limit: 1 }, nodes: [{ id: 'a', type: 'nap', config: { ms: 30 } }] });
    const [first, second, third] = await engine.startMany('one-at-a-time', [{}, {}, {}]) as [number, number, number];
    const waiting = await engine.listInstances({ waitingFor: 'concurrency' });
    expect(waiting.map((i) => i.id).sort((a, b) => a - b)).toEqual([second, third]);
    expect(waiting[0]).toMatchObject({ status: 'PENDING', held: true, waitingFor: 'concurrency', reason: 'concurrency limit (1 of 1)' });
    expect((await engine.getInstance(second)).held).toBe(true);
    await engine.cancel(second);
    engine.startWorker();
    await sampleUntilEnded(engine, () => 'all');
    expect((await engine.getInstance(first)).status).toBe('COMPLETED');
    expect((await engine.getInstance(second)).status).toBe('CANCELLED');
    const last = await engine.getInstance(third);
    expect(last).toMatchObject({ status: 'COMPLETED', held: false });
    expect(await engine.listInstances({ waitingFor: 'concurrency' })).toEqual([]);
  });

  it('a paused held instance admitted while paused runs only after the unpause', async () => {
    t = tempEngine({ registry: createDefaultRegistry().register(nap) });
    const { engine } = t;
    await engine.deploy({ name: 'solo', concurrency: { limit: 1 }, nodes: [{ id: 'a', type: 'nap', config: { ms: 20 } }] });
    const [first, second] = await engine.startMany('solo', [{}, {}]) as [number, number];
    await engine.pause(second);
    engine.startWorker();
    for (let i = 0; i < 500 && (await engine.getInstance(first)).status !== 'COMPLETED'; i++) await new Promise((r) => setTimeout(r, 10));
    await new Promise((r) => setTimeout(r, 150));
    expect(await engine.getInstance(second)).toMatchObject({ status: 'PENDING', held: false });
    await engine.unpause(second);
    for (let i = 0; i < 500 && (await engine.getInstance(second)).status !== 'COMPLETED'; i++) await new Promise((r) => setTimeout(r, 10));
    expect((await engine.getInstance(second)).status).toBe('COMPLETED');
  });

  it('a FAILED instance retried while its slot is taken waits held, its steps parked, and runs when the slot frees', async () => {
    // `gate`: fails while `failing` names the instance's `who`; else naps `ms`.
    const failing = new Set(['A']);
    const gate: NodeType<{ ms: number }> = {
      ...nap,
      type: 'gate',
      execute: async (ctx) => {
        if (failing.has(String(ctx.variables['who']))) throw new Error('gate closed');
        return nap.execute(ctx);
      },
    };
    t = tempEngine({ registry: createDefaultRegistry().register(gate) });
    const { engine } = t;
    await engine.deploy({ name: 'one-slot', concurrency: { limit: 1 }, nodes: [{ id: 'a', type: 'gate', config: { ms: 300 }, retry: { maxAttempts: 1 } }] });
    engine.startWorker();
    const a = await engine.start('one-slot', { variables: { who: 'A' } });
    const until = async (id: number, status: string): Promise<void> => {
      for (let i = 0; i < 1000 && (await engine.getInstance(id)).status !== status; i++) await new Promise((r) => setTimeout(r, 10));
      expect((await engine.getInstance(id)).status).toBe(status);
    };
    await until(a, 'FAILED');
    // given: A failed (its slot freed), B took the slot
    const b = await engine.start('one-slot', { variables: { who: 'B' } });
    await until(b, 'RUNNING');
    failing.clear();
    // when: A is retried while B holds the slot
    await engine.retry(a);
    // then: A waits held for the slot, PENDING, and the list says why
    expect(await engine.getInstance(a)).toMatchObject({ status: 'PENDING', held: true });
    expect((await engine.listInstances({ waitingFor: 'concurrency' })).map((i) => [i.id, i.reason])).toEqual([[a, 'concurrency limit (1 of 1)']]);
    const retried = (await engine.history(a)).find((h) => h.type === 'instance.retried');
    expect(retried?.data).toMatchObject({ nodes: ['a'], held: { limit: 1 } });
    // and it runs only after B ended, to COMPLETED
    await until(b, 'COMPLETED');
    await until(a, 'COMPLETED');
    const ended = await engine.getInstance(b);
    const rerun = await engine.getInstance(a);
    const admitted = (await engine.history(a)).filter((h) => h.type === 'instance.admitted');
    expect(admitted).toHaveLength(1);
    expect(admitted[0]?.at).toBeGreaterThanOrEqual(ended.endedAt as number);
    expect(rerun.nodes.find((n) => n.id === 'a')?.attempt).toBe(2);
  });
});
