/**
 * Control flow on real databases (both backends: the integration-pg project runs this file on
 * PostgreSQL): `subworkflow`, `map` and `event` nodes — results, failures, concurrency, cancels,
 * events sent before and after the node is reached, and the deploy-time checks of calls.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { EngineMetrics } from '../../../engine/api';
import { createDefaultRegistry } from '../../../engine/nodes/registry';
import type { NodeType } from '../../../engine/nodes/types';
import { tempEngine, runToSettled, type TempEngine } from '../../helpers/temp-engine';
import { rowsIn } from '../../helpers/db-rows';
import { ManualClock } from '../../../engine/runtime/clock';

/** `probe`: records the most children of `kid` running at once, and fails when `fail` is true. */
let running = 0;
let peak = 0;
const probe: NodeType<{ ms?: number }> = {
  type: 'probe',
  title: 'Probe',
  description: 'Counts overlapping runs (tests)',
  icon: 'beaker',
  group: 'Test',
  configSchema: z.strictObject({ ms: z.number().optional() }),
  async execute(ctx) {
    running++;
    peak = Math.max(peak, running);
    try {
      await new Promise((r) => setTimeout(r, ctx.config.ms ?? 20));
      const v = ctx.variables as { item?: { fail?: boolean; n?: number } };
      if (v.item?.fail === true) throw Object.assign(new Error(`item ${String(v.item.n)} fails`), { retryable: false });
      return { output: { doubled: (v.item?.n ?? 0) * 2 } };
    } finally {
      running--;
    }
  },
};

const registry = () => createDefaultRegistry().register(probe);

/** A child workflow: one probe node whose result lands in `out`. */
const kid = {
  name: 'kid',
  nodes: [{ id: 'work', type: 'probe', config: {}, output: 'out', retry: { maxAttempts: 1 } }],
  edges: [],
};

describe('control flow', () => {
  let t: TempEngine;
  afterEach(async () => t.close());

  it('a subworkflow node completes with its child\'s final variables; the child links to its parent', async () => {
    t = tempEngine({ registry: registry() });
    const { engine } = t;
    await engine.deploy(kid);
    await engine.deploy({
      name: 'parent',
      nodes: [
        { id: 'call', type: 'subworkflow', config: { workflow: 'kid', input: '{ "item": { "n": n } }' }, output: 'child' },
        { id: 'after', type: 'pass', config: { result: '{{ child.out.doubled }}' }, output: 'final' },
      ],
      edges: [{ from: 'call', to: 'after' }],
    });
    const id = await engine.start('parent', { variables: { n: 21 } });
    const done = await runToSettled(engine, id);
    expect(done.status).toBe('COMPLETED');
    expect(done.variables.child).toEqual({ item: { n: 21 }, out: { doubled: 42 } });
    expect(done.variables.final).toBe(42);
    const children = await engine.listInstances({ parentId: id });
    expect(children).toHaveLength(1);
    expect(children[0]).toMatchObject({ workflow: 'kid', status: 'COMPLETED', parentId: id, parentNodeId: 'call' });
    const child = await engine.getInstance((children[0] as { id: number }).id);
    expect(child.parentId).toBe(id);
    expect(done.children).toEqual([
      { nodeId: 'call', attempt: 1, workflow: 'kid', workflowVersion: 1, total: 1, completed: 1, failed: 0, running: 0, waiting: 0, queued: 0 },
    ]);
  });

  it('a failed child fails the subworkflow node with CHILD_FAILED naming the child; a retry starts a new child', async () => {
    t = tempEngine({ registry: registry() });
    const { engine } = t;
    await engine.deploy(kid);
    await engine.deploy({
      name: 'parent-fails',
      nodes: [{ id: 'call', type: 'subworkflow', config: { workflow: 'kid' }, retry: { maxAttempts: 2, initialIntervalMs: 1 } }],
      edges: [],
    });
    const id = await engine.start('parent-fails', { variables: { item: { n: 1, fail: true } } });
    const done = await runToSettled(engine, id);
    expect(done.status).toBe('FAILED');
    const node = done.nodes.find((n) => n.id === 'call');
    expect(node?.attempt).toBe(2);
    expect(node?.error).toMatchObject({ code: 'CHILD_FAILED', details: { workflow: 'kid', status: 'FAILED' } });
    const children = await engine.listInstances({ parentId: id });
    expect(children.map((c) => c.status)).toEqual(['FAILED', 'FAILED']);
    expect((node?.error as { details: { childId: number } }).details.childId).toBe(Math.max(...children.map((c) => c.id)));
  });

  it('a map node runs one child per item, at most maxConcurrency at once, with results in item order', async () => {
    t = tempEngine({ registry: registry() });
    const { engine } = t;
    await engine.deploy(kid);
    await engine.deploy({
      name: 'fleet',
      nodes: [{ id: 'each', type: 'map', config: { items: 'devices', workflow: 'kid', maxConcurrency: 3 }, output: 'results' }],
      edges: [],
    });
    running = 0;
    peak = 0;
    const devices = Array.from({ length: 12 }, (_, n) => ({ n }));
    const id = await engine.start('fleet', { variables: { devices } });
    const done = await runToSettled(engine, id);
    expect(done.status).toBe('COMPLETED');
    const results = done.variables.results as { item: { n: number }; index: number; out: { doubled: number } }[];
    expect(results.map((r) => r.out.doubled)).toEqual(devices.map((d) => d.n * 2));
    expect(results.map((r) => r.index)).toEqual(devices.map((_, i) => i));
    // A child's result is what it made of its item: the parent's list it was started with is not repeated in it.
    expect(Object.keys(results[0] as object).sort()).toEqual(['index', 'item', 'out']);
    expect(peak).toBeLessThanOrEqual(3);
    expect(peak).toBeGreaterThanOrEqual(2);
    expect((await engine.listInstances({ parentId: id, limit: 100 })).length).toBe(12);
  });

  it('a map node\'s input shapes each child\'s start variables from the item', async () => {
    t = tempEngine({ registry: registry() });
    const { engine } = t;
    await engine.deploy({ name: 'greet', inputSchema: { type: 'object', required: ['who'], properties: { who: { type: 'string' } } }, nodes: [{ id: 'hi', type: 'pass', config: { result: 'hello {{ who }}' }, output: 'greeting' }], edges: [] });
    await engine.deploy({
      name: 'greet-all',
      nodes: [{ id: 'each', type: 'map', config: { items: 'people', workflow: 'greet', input: '{ "who": item.name & " (" & $string(index) & ")" }' }, output: 'greetings' }],
      edges: [],
    });
    const done = await runToSettled(engine, await engine.start('greet-all', { variables: { people: [{ name: 'Ada' }, { name: 'Lin' }] } }));
    expect(done.status).toBe('COMPLETED');
    expect(done.variables.greetings).toEqual([{ greeting: 'hello Ada (0)' }, { greeting: 'hello Lin (1)' }]);
    // Start variables that fail the child's inputSchema fail the node before any child starts, naming the item.
    await engine.deploy({ name: 'greet-bad', nodes: [{ id: 'each', type: 'map', config: { items: 'people', workflow: 'greet', input: '{ "who": item.age }' } }], edges: [] });
    const bad = await runToSettled(engine, await engine.start('greet-bad', { variables: { people: [{ name: 'Ada', age: 3 }] } }));
    expect(bad.status).toBe('FAILED');
    expect((bad.nodes[0]?.error as { code: string; message: string }).message).toContain('item 0: the child');
    expect((bad.nodes[0]?.error as { code: string }).code).toBe('INVALID_VARIABLES');
    expect(await engine.listInstances({ parentId: bad.id })).toEqual([]);
  });

  it('an empty list completes at once with []; more than 10,000 items is a clear non-retryable error', async () => {
    t = tempEngine({ registry: registry() });
    const { engine } = t;
    await engine.deploy(kid);
    await engine.deploy({ name: 'maps', nodes: [{ id: 'each', type: 'map', config: { items: 'xs', workflow: 'kid' }, output: 'r', retry: { maxAttempts: 3 } }], edges: [] });
    const empty = await runToSettled(engine, await engine.start('maps', { variables: { xs: [] } }));
    expect(empty.status).toBe('COMPLETED');
    expect(empty.variables.r).toEqual([]);
    const huge = await runToSettled(engine, await engine.start('maps', { variables: { xs: Array.from({ length: 10_001 }, () => 0) } }));
    expect(huge.status).toBe('FAILED');
    const node = huge.nodes.find((n) => n.id === 'each');
    expect(node?.attempt).toBe(1);
    expect(node?.error).toMatchObject({ code: 'INVALID_INPUT' });
    expect((node?.error as { message: string }).message).toContain('10001 items, above the limit of 10000');
    const notArray = await runToSettled(engine, await engine.start('maps', { variables: { xs: 'abc' } }));
    expect((notArray.nodes.find((n) => n.id === 'each')?.error as { message: string }).message).toContain('config.items must yield an array, got a string');
  });

  it('tolerated failures give null; one more fails the node and cancels the children still running', async () => {
    t = tempEngine({ registry: registry() });
    const { engine } = t;
    await engine.deploy(kid);
    await engine.deploy({
      name: 'tolerant',
      nodes: [{ id: 'each', type: 'map', config: { items: 'xs', workflow: 'kid', maxConcurrency: 2, toleratedFailures: 1 }, output: 'r' }],
      edges: [],
    });
    const ok = await runToSettled(engine, await engine.start('tolerant', { variables: { xs: [{ n: 1 }, { n: 2, fail: true }, { n: 3 }] } }));
    expect(ok.status).toBe('COMPLETED');
    expect((ok.variables.r as unknown[]).map((x) => (x === null ? null : (x as { out: { doubled: number } }).out.doubled))).toEqual([2, null, 6]);

    const xs = [{ n: 1, fail: true }, { n: 2, fail: true }, ...Array.from({ length: 8 }, (_, i) => ({ n: i + 3 }))];
    const id = await engine.start('tolerant', { variables: { xs } });
    const bad = await runToSettled(engine, id);
    expect(bad.status).toBe('FAILED');
    expect(bad.nodes.find((n) => n.id === 'each')?.error).toMatchObject({ code: 'CHILD_FAILED', details: { failed: 2, tolerated: 1, total: 10 } });
    const children = await engine.listInstances({ parentId: id, limit: 100 });
    // Items after the second failure were never started; none is left running.
    expect(children.length).toBeLessThan(10);
    expect(children.every((c) => ['COMPLETED', 'FAILED', 'CANCELLED'].includes(c.status))).toBe(true);
  });

  it('cancelling the parent cancels its live children', async () => {
    t = tempEngine({ registry: registry() });
    const { engine } = t;
    await engine.deploy({ name: 'waits', nodes: [{ id: 'ask', type: 'approval', config: {} }], edges: [] });
    await engine.deploy({ name: 'caller', nodes: [{ id: 'each', type: 'map', config: { items: 'xs', workflow: 'waits' } }], edges: [] });
    const id = await engine.start('caller', { variables: { xs: [1, 2, 3] } });
    await engine.runUntil(async () => (await engine.listInstances({ parentId: id, status: ['WAITING'] })).length === 3, 10_000);
    const parent = await engine.getInstance(id);
    expect(parent.status).toBe('WAITING');
    expect(parent.children?.[0]).toMatchObject({ total: 3, waiting: 3, completed: 0 });
    expect((await engine.listInstances({ waitingFor: 'children' })).map((i) => i.id)).toEqual([id]);
    await engine.cancel(id);
    const children = await engine.listInstances({ parentId: id });
    expect(children.map((c) => c.status)).toEqual(['CANCELLED', 'CANCELLED', 'CANCELLED']);
    expect((await engine.getInstance(id)).status).toBe('CANCELLED');
  });

  it('an event node takes an event sent after it was reached, and one sent before; the first wins', async () => {
    t = tempEngine({ registry: registry() });
    const { engine } = t;
    await engine.deploy({
      name: 'pay',
      nodes: [
        { id: 'paid', type: 'event', config: { name: 'payment', key: '{{ order }}' }, output: 'payment' },
        { id: 'done', type: 'pass', config: {} },
      ],
      edges: [{ from: 'paid', to: 'done' }],
    });
    const late = await engine.start('pay', { variables: { order: 'o-1' }, businessKey: 'order-1' });
    expect((await runToSettled(engine, late)).status).toBe('WAITING');
    expect((await engine.listInstances({ waitingFor: 'event' })).map((i) => i.id)).toEqual([late]);
    // Another key is recorded and not taken.
    expect(await engine.signal({ id: late }, { event: 'payment', key: 'o-2', data: { amount: 1 } })).toMatchObject({ consumedBy: null });
    expect(await engine.signal({ businessKey: 'order-1' }, { event: 'payment', key: 'o-1', data: { amount: 5 }, actor: 'shop' })).toMatchObject({ consumedBy: 'paid', instanceId: late });
    const lateDone = await runToSettled(engine, late);
    expect(lateDone.status).toBe('COMPLETED');
    expect(lateDone.variables.payment).toEqual({ amount: 5 });
    const received = (await engine.history(late)).filter((h) => h.type === 'event.received');
    expect(received.map((h) => (h.data as { consumedBy: string | null }).consumedBy)).toEqual([null, 'paid']);
    expect(received[1]?.actor).toBe('shop');

    await engine.deploy({
      name: 'pay-later',
      nodes: [
        { id: 'first', type: 'approval', config: {} },
        { id: 'paid', type: 'event', config: { name: 'payment' }, output: 'payment' },
      ],
      edges: [{ from: 'first', to: 'paid' }],
    });
    const early = await engine.start('pay-later');
    await runToSettled(engine, early);
    await engine.signal({ id: early }, { event: 'payment', data: { n: 1 } });
    await engine.signal({ id: early }, { event: 'payment', data: { n: 2 } });
    await engine.approve(early, 'first', { approved: true });
    const earlyDone = await runToSettled(engine, early);
    expect(earlyDone.status).toBe('COMPLETED');
    expect(earlyDone.variables.payment).toEqual({ n: 1 });
    // An ended instance refuses events.
    await expect(engine.signal({ id: early }, { event: 'payment' })).rejects.toMatchObject({ code: 'INVALID_STATE' });
    await expect(engine.signal({ businessKey: 'nobody' }, { event: 'payment' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    // By business key as by id: a key only ended instances have is INVALID_STATE, naming the newest.
    await expect(engine.signal({ businessKey: 'order-1' }, { event: 'payment' })).rejects.toMatchObject({
      code: 'INVALID_STATE',
      message: `instance ${late} (business key "order-1") has ended (COMPLETED): no live instance has that key`,
    });
    // Two live instances with one key: both named, no ellipsis; a third adds one.
    const twins = [await engine.start('pay', { variables: { order: 'o-3' }, businessKey: 'twin' }), await engine.start('pay', { variables: { order: 'o-3' }, businessKey: 'twin' })];
    await expect(engine.signal({ businessKey: 'twin' }, { event: 'payment' })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      message: `businessKey: several live instances have business key "twin" (${twins[1]}, ${twins[0]}): give the instance id`,
    });
    // An empty business key is refused at the start (no signal could name it), by start and startMany alike
    for (const start of [() => engine.start('pay', { businessKey: '' }), () => engine.startMany('pay', [{}], { businessKey: '' })])
      await expect(start()).rejects.toMatchObject({ code: 'INVALID_INPUT', message: 'businessKey: must not be empty (leave it out for none)' });
    const third = await engine.start('pay', { variables: { order: 'o-3' }, businessKey: 'twin' });
    await expect(engine.signal({ businessKey: 'twin' }, { event: 'payment' })).rejects.toMatchObject({
      message: `businessKey: several live instances have business key "twin" (${third}, ${twins[1]}, …): give the instance id`,
    });
  });

  it('an event sent after its node\'s time limit passed (before the timeout fired) is kept, not reported taken', async () => {
    const clock = new ManualClock(1_000_000);
    t = tempEngine({ registry: registry(), clock });
    const { engine } = t;
    await engine.deploy({ name: 'late-pay', nodes: [{ id: 'paid', type: 'event', config: { name: 'payment' }, timeoutMs: 1000 }], edges: [] });
    const id = await engine.start('late-pay');
    /** Worker turns (the test's clock stands still) until the instance is `status`. */
    const turnsUntil = async (status: string) => {
      for (let i = 0; i < 200 && (await engine.getInstance(id)).status !== status; i++) {
        await engine.tick();
        await new Promise((r) => setTimeout(r, 10));
      }
    };
    await turnsUntil('WAITING');
    expect((await engine.getInstance(id)).status).toBe('WAITING');
    clock.advance(1000);
    expect(await engine.signal({ id }, { event: 'payment', data: 1 })).toMatchObject({ consumedBy: null });
    await turnsUntil('FAILED');
    const done = await engine.getInstance(id);
    expect(done.status).toBe('FAILED');
    expect(done.nodes[0]?.error).toMatchObject({ code: 'TIMEOUT' });
  });

  it('a paused map parent starts no further children; the unpause tops them up; items alone are stored', async () => {
    t = tempEngine({ registry: registry() });
    const { engine } = t;
    await engine.deploy({ name: 'asker', nodes: [{ id: 'ok', type: 'approval', config: {} }], edges: [] });
    await engine.deploy({ name: 'askers', nodes: [{ id: 'each', type: 'map', config: { items: 'xs', workflow: 'asker', maxConcurrency: 2 } }], edges: [] });
    const id = await engine.start('askers', { variables: { xs: [1, 2, 3, 4], big: 'g'.repeat(10_000) } });
    await engine.runUntil(async () => (await engine.listInstances({ parentId: id, status: ['WAITING'] })).length === 2, 10_000);
    const stored = await rowsIn<{ input_json: string | null }>(t.file, 'SELECT input_json FROM child WHERE instance_id = ? ORDER BY item_index', [id]);
    expect(stored.map((r) => r.input_json)).toEqual([null, null, '{"item":3,"index":2}', '{"item":4,"index":3}']);
    await engine.pause(id);
    for (const c of await engine.listInstances({ parentId: id })) await engine.approve(c.id, 'ok', { approved: true });
    await engine.runUntil(async () => (await engine.listInstances({ parentId: id, status: ['COMPLETED'] })).length === 2, 10_000);
    await new Promise((r) => setTimeout(r, 200));
    expect(await engine.listInstances({ parentId: id })).toHaveLength(2);
    await engine.unpause(id);
    const kids = await engine.listInstances({ parentId: id });
    expect(kids).toHaveLength(4);
    const third = await engine.getInstance(Math.max(...kids.map((k) => k.id)));
    expect(third.variables).toMatchObject({ item: 4, index: 3, big: 'g'.repeat(10_000) });
  });

  it('an event node\'s timeout is a failed attempt: its error edge is taken; metrics count the waits by kind', async () => {
    t = tempEngine({ registry: registry() });
    const { engine } = t;
    const metrics = new EngineMetrics(engine);
    await engine.deploy({
      name: 'pay-or-remind',
      nodes: [
        { id: 'paid', type: 'event', config: { name: 'payment' }, timeoutMs: 50 },
        { id: 'remind', type: 'pass', config: { result: 'reminded' }, output: 'r' },
      ],
      edges: [{ from: 'paid', to: 'remind', on: 'error' }],
    });
    const id = await engine.start('pay-or-remind');
    await engine.runUntil(async () => (await engine.getInstance(id)).status === 'COMPLETED', 10_000);
    const done = await engine.getInstance(id);
    expect(done.variables.r).toBe('reminded');
    expect(done.nodes.find((n) => n.id === 'paid')?.error).toMatchObject({ code: 'TIMEOUT' });
    const text = await metrics.text();
    metrics.close();
    expect(text).toContain('runnel_node_attempts_total{type="event",outcome="event"} 1');
    expect(text).toContain('runnel_node_attempts_total{type="event",outcome="failed"} 1');
  });

  it('deploy refuses an unknown called workflow, a missing pinned version and a cycle of calls', async () => {
    t = tempEngine({ registry: registry() });
    const { engine } = t;
    await expect(engine.deploy({ name: 'a', nodes: [{ id: 'x', type: 'subworkflow', config: { workflow: 'nope' } }], edges: [] })).rejects.toMatchObject({
      code: 'INVALID_WORKFLOW',
      details: [{ code: 'UNKNOWN_WORKFLOW', nodeId: 'x', path: ['nodes', 0, 'config', 'workflow'] }],
    });
    await expect(engine.deploy({ name: 'self', nodes: [{ id: 'x', type: 'subworkflow', config: { workflow: 'self' } }], edges: [] })).rejects.toMatchObject({
      details: [{ code: 'WORKFLOW_CYCLE' }],
    });
    await engine.deploy(kid);
    await expect(engine.deploy({ name: 'a', nodes: [{ id: 'x', type: 'map', config: { items: 'xs', workflow: 'kid', version: 7 } }], edges: [] })).rejects.toMatchObject({
      details: [{ code: 'UNKNOWN_WORKFLOW', path: ['nodes', 0, 'config', 'version'] }],
    });
    await engine.deploy({ name: 'b', nodes: [{ id: 'y', type: 'subworkflow', config: { workflow: 'kid' } }], edges: [] });
    await engine.deploy({ name: 'c', nodes: [{ id: 'z', type: 'subworkflow', config: { workflow: 'b' } }], edges: [] });
    // kid v2 would call c, which calls b, which calls kid: a cycle.
    await expect(engine.deploy({ name: 'kid', nodes: [{ id: 'w', type: 'subworkflow', config: { workflow: 'c' } }], edges: [] })).rejects.toMatchObject({
      details: [{ code: 'WORKFLOW_CYCLE', message: 'node "w": workflows call each other in a cycle: kid → c → b → kid' }],
    });
    const v = await engine.validate({ name: 'kid', nodes: [{ id: 'w', type: 'subworkflow', config: { workflow: 'c' } }], edges: [] });
    expect(v.problems.map((p) => p.code)).toEqual(['WORKFLOW_CYCLE']);
    // A rename that would close a cycle is refused too, and undone: y calls c, c calls b, b calls kid;
    // renaming kid away and y onto kid would make kid (y) → c → b → kid.
    await engine.deploy({ name: 'y', nodes: [{ id: 'v', type: 'subworkflow', config: { workflow: 'c' } }], edges: [] });
    await engine.renameWorkflow('kid', 'kid-old');
    await expect(engine.renameWorkflow('y', 'kid')).rejects.toMatchObject({ code: 'INVALID_WORKFLOW', details: [{ code: 'WORKFLOW_CYCLE' }] });
    expect((await engine.listWorkflows()).map((w) => w.name).sort()).toEqual(['b', 'c', 'kid-old', 'y']);
  });
});
