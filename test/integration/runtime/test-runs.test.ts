/**
 * Test runs (`start` with `test` and `pins`), on real databases (both backends) with a real HTTP
 * server on 127.0.0.1 that counts the requests it gets: a pinned http node and a pinned custom
 * node complete with their pinned results and call nothing (zero requests, zero executions) while
 * the unpinned script runs for real on them; a test run's child instances are test runs; test
 * runs are left out of the metrics, the status counts and the default list (`test: true` lists
 * them); one action deletes every ended one; pins are refused naming the field. The process's
 * own counters (EngineMetrics, what `GET /metrics` serves) count nothing of a test run, pinned or
 * not, nor of its child, and every engine event about one carries `test: true`, through the
 * contract's batches too.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { batchEngineEvents } from '../../../engine/api/event-batcher';
import { EventBatchSchema, type EventBatch } from '../../../engine/api/contract';
import { EngineError } from '../../../engine/errors';
import type { EngineEvent } from '../../../engine/runtime/events';
import { EngineMetrics } from '../../../engine/runtime/metrics';
import { createDefaultRegistry } from '../../../engine/nodes/registry';
import type { NodeType } from '../../../engine/nodes/types';
import { runToSettled, tempDir, tempEngine, type TempEngine } from '../../helpers/temp-engine';
import { createTestRegistry } from '../../helpers/test-nodes';

let server: Server;
let baseUrl = '';
let requests = 0;

beforeAll(async () => {
  server = createServer((_req, res) => {
    requests++;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ version: 'from-the-server' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** `charge`: a custom node with a side effect, counted in `calls`. */
function chargeType(calls: string[]): NodeType<Record<string, never>> {
  return {
    type: 'charge',
    title: 'Charge',
    description: 'A side effect (tests): counts its executions',
    icon: 'credit-card',
    group: 'Test',
    configSchema: z.strictObject({}),
    execute: async (ctx) => {
      calls.push(`${ctx.instanceId}:${ctx.nodeId}`);
      return { output: { id: `real-${ctx.instanceId}` } };
    },
  };
}

const FLOW = {
  name: 'device-flow',
  inputSchema: { type: 'object', required: ['baseUrl'], properties: { baseUrl: { type: 'string' } } },
  nodes: [
    { id: 'fetch', type: 'http', config: { method: 'GET', url: '{{ baseUrl }}/device' }, output: 'device' },
    { id: 'charge', type: 'charge', output: 'receipt' },
    { id: 'calc', type: 'script', config: { code: 'return variables.device.body.version + "/" + variables.receipt.id' }, output: 'summary' },
  ],
  edges: [
    { from: 'fetch', to: 'charge' },
    { from: 'charge', to: 'calc' },
  ],
};

const PINS = { fetch: { status: 200, headers: {}, body: { version: 'pinned-2.0' } }, charge: { id: 'pinned-receipt' } };

describe('test runs', () => {
  let t: TempEngine;
  const calls: string[] = [];
  afterEach(async () => t.close());

  it('pinned http and custom nodes return their pinned results and call nothing; the rest runs for real', async () => {
    t = tempEngine({ registry: createDefaultRegistry().register(chargeType(calls)) });
    const { engine } = t;
    await engine.deploy(FLOW);
    engine.startWorker();
    requests = 0;
    calls.length = 0;
    // given a test run with the http and the custom node pinned
    const id = await engine.start('device-flow', { variables: { baseUrl }, test: true, pins: PINS });
    // when it runs to its end
    const done = await runToSettled(engine, id);
    // then the server got no request and the custom node never ran, and the script ran on the pins
    expect(done.status).toBe('COMPLETED');
    expect(requests).toBe(0);
    expect(calls).toEqual([]);
    expect(done.variables).toMatchObject({ device: PINS.fetch, receipt: PINS.charge, summary: 'pinned-2.0/pinned-receipt' });
    expect(done).toMatchObject({ test: true, pins: PINS });
    const history = await engine.history(id, 0, 100);
    expect(history.find((e) => e.type === 'instance.created')?.data).toMatchObject({ test: true, pinned: ['fetch', 'charge'] });

    // a copy of it from its start (fork) is a test run too, with the same pins: still no call
    const created = history.find((e) => e.type === 'instance.created')?.id ?? 0;
    const copy = await runToSettled(engine, await engine.fork(id, created));
    expect(copy).toMatchObject({ status: 'COMPLETED', test: true, pins: PINS });
    expect(requests).toBe(0);
    expect(calls).toEqual([]);

    // given the same start, not a test run: the server and the custom node are called (the counter counts)
    const real = await runToSettled(engine, await engine.start('device-flow', { variables: { baseUrl } }));
    expect(real.status).toBe('COMPLETED');
    expect(requests).toBe(1);
    expect(calls).toEqual([`${real.id}:charge`]);
    expect(real.variables['summary']).toBe(`from-the-server/real-${real.id}`);
    expect(real.test).toBe(false);
  });

  it('a node a test run leaves unpinned runs for real (its call is real)', async () => {
    t = tempEngine({ registry: createDefaultRegistry().register(chargeType(calls)) });
    const { engine } = t;
    await engine.deploy(FLOW);
    engine.startWorker();
    requests = 0;
    calls.length = 0;
    const done = await runToSettled(engine, await engine.start('device-flow', { variables: { baseUrl }, test: true, pins: { fetch: PINS.fetch } }));
    expect(done.status).toBe('COMPLETED');
    expect(requests).toBe(0);
    expect(calls).toEqual([`${done.id}:charge`]);
    expect(done.variables['summary']).toBe(`pinned-2.0/real-${done.id}`);
  });

  it('left out of the metrics, the counts and the default list; listed with test: true; their children are test runs; deleted in one action', async () => {
    t = tempEngine({ registry: createDefaultRegistry().register(chargeType(calls)) });
    const { engine } = t;
    await engine.deploy(FLOW);
    await engine.deploy({ name: 'parent', nodes: [{ id: 'call', type: 'subworkflow', config: { workflow: 'device-flow' } }], edges: [] });
    engine.startWorker();
    // given one real run and two test runs (one of them a parent whose child is started by the engine)
    const real = (await runToSettled(engine, await engine.start('device-flow', { variables: { baseUrl } }))).id;
    const test = (await runToSettled(engine, await engine.start('device-flow', { variables: { baseUrl }, test: true, pins: PINS }))).id;
    const parent = await runToSettled(engine, await engine.start('parent', { variables: { baseUrl }, test: true, pins: {} }));
    expect(parent.status).toBe('COMPLETED');
    const [child] = await engine.listInstances({ parentId: parent.id });
    expect(child).toMatchObject({ test: true, parentId: parent.id, status: 'COMPLETED' });
    // then the default list, the counts and the metrics know only the real run
    expect((await engine.listInstances({})).map((i) => i.id)).toEqual([real]);
    expect(await engine.countByStatus({})).toEqual({ COMPLETED: 1 });
    expect(await engine.countByStatus({ workflow: 'device-flow' })).toEqual({ COMPLETED: 1 });
    const metrics = await engine.metrics();
    expect(metrics.counts).toEqual({ COMPLETED: 1 });
    expect(metrics.durations).toEqual([expect.objectContaining({ workflow: 'device-flow', completed: 1 })]);
    expect(metrics.failures).toEqual([expect.objectContaining({ workflow: 'device-flow', total: 1 })]);
    const series = await engine.metricsSeries(0, Date.now() + 60_000, 3_600_000);
    expect(series.reduce((n, p) => n + p.started, 0)).toBe(1);
    // and test: true lists the test runs (children included), false the real ones
    expect((await engine.listInstances({ test: true })).map((i) => i.id).sort((a, b) => a - b)).toEqual([test, parent.id, child?.id].sort((a, b) => (a ?? 0) - (b ?? 0)));
    expect(await engine.countByStatus({ test: true })).toEqual({ COMPLETED: 3 });
    expect((await engine.listInstances({ test: false })).map((i) => i.id)).toEqual([real]);

    // when every test run is deleted in one action
    const r = await engine.deleteTestRuns();
    // then the two runs and the child are gone, the real run stays
    expect(r).toMatchObject({ runs: 2, live: 0, kept: 0, deleted: { instances: 3 } });
    expect(await engine.listInstances({ test: true })).toEqual([]);
    await expect(engine.getInstance(test)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect((await engine.getInstance(real)).status).toBe('COMPLETED');
  });

  it('a live test run is left by the delete and counted', async () => {
    t = tempEngine();
    const { engine } = t;
    await engine.deploy({ name: 'waits', nodes: [{ id: 'ok', type: 'approval' }, { id: 'after', type: 'pass' }], edges: [{ from: 'ok', to: 'after' }] });
    engine.startWorker();
    // given a waiting test run, and one whose approval is pinned (it does not wait)
    const waiting = await engine.start('waits', { test: true });
    const pinned = await runToSettled(engine, await engine.start('waits', { test: true, pins: { ok: { approved: true } } }));
    expect(pinned.status).toBe('COMPLETED');
    expect(pinned.variables).toEqual({});
    expect(pinned.nodes.find((n) => n.id === 'ok')?.output).toEqual({ approved: true });
    await runToSettled(engine, waiting);
    expect((await engine.getInstance(waiting)).status).toBe('WAITING');
    expect(await engine.deleteTestRuns()).toMatchObject({ runs: 1, live: 1 });
    expect((await engine.getInstance(waiting)).status).toBe('WAITING');
  });

  it('refuses pins without test and pins of unknown nodes, naming the field; nothing is started', async () => {
    t = tempEngine({ registry: createDefaultRegistry().register(chargeType(calls)) });
    const { engine } = t;
    await engine.deploy(FLOW);
    const refusal = async (p: Promise<unknown>): Promise<EngineError> => {
      const err = await p.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(EngineError);
      return err as EngineError;
    };
    const unknown = await refusal(engine.start('device-flow', { variables: { baseUrl }, test: true, pins: { fetch: {}, nope: 1 } }));
    expect(unknown).toMatchObject({ code: 'INVALID_INPUT', details: { field: 'pins.nope', nodeId: 'nope' } });
    expect(unknown.message).toBe('pins.nope: workflow device-flow v1 has no node "nope" (its nodes: "fetch", "charge", "calc")');
    const notTest = await refusal(engine.start('device-flow', { variables: { baseUrl }, pins: { fetch: {} } }));
    expect(notTest).toMatchObject({ code: 'INVALID_INPUT', details: { field: 'pins' } });
    expect(await engine.listInstances({ test: true })).toEqual([]);
    expect(await engine.listInstances({})).toEqual([]);
  });
});

/** The value of one sample line (`name{labels} value`) of the text format, or undefined when the text has none. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** The sample lines of the counters and histograms fed by instances' events (not the gauges, not the loop's own figures). */
function instanceSeries(text: string): string[] {
  return text
    .split('\n')
    .filter((l) => /^runnel_(instances_started_total|instance_transitions_total|node_transitions_total|node_attempts_total|node_failures_total|node_duration_seconds_count|due_to_committed_seconds_count)\{/.test(l))
    .sort();
}

/** Instance-scoped engine events (the ones that name an instance). */
type InstanceEvent = Extract<EngineEvent, { instanceId: number }>;

describe('test runs and the process metrics', () => {
  let t: TempEngine;
  const log = tempDir('runnel-test-run-metrics-');
  afterEach(async () => t.close());
  afterAll(() => log.cleanup());

  // a: instant; b: fails once, then passes on its second attempt; c: a timer.
  const METERED = {
    name: 'metered',
    nodes: [
      { id: 'a', type: 'pass' },
      { id: 'b', type: 'flaky', config: { failures: 1 }, retry: { maxAttempts: 2, initialIntervalMs: 1 } },
      { id: 'c', type: 'delay', config: { durationMs: 1 } },
    ],
    edges: [
      { from: 'a', to: 'b' },
      { from: 'b', to: 'c' },
    ],
  };

  it('count only the normal run: a test run, pinned or not, and the child of one add nothing; their events say test: true', async () => {
    t = tempEngine({ registry: createTestRegistry(`${log.dir}/calls.log`) });
    const { engine } = t;
    await engine.deploy(METERED);
    await engine.deploy({ name: 'metered-parent', nodes: [{ id: 'call', type: 'subworkflow', config: { workflow: 'metered' } }], edges: [] });
    const metrics = new EngineMetrics(engine);
    const seen: InstanceEvent[] = [];
    const off = engine.on((e) => {
      if ('instanceId' in e) seen.push(e);
    });
    const batches: EventBatch[] = [];
    const stopBatching = batchEngineEvents(engine, (b) => batches.push(b), 0);
    try {
      engine.startWorker();
      // given a normal run, worked to its end
      const normal = await runToSettled(engine, await engine.start('metered', {}));
      expect(normal.status).toBe('COMPLETED');
      const afterNormal = await metrics.text();
      const claimedByNormal = sample(afterNormal, 'runnel_worker_claimed_total') ?? 0;

      // then the counters say exactly what it did
      expect(sample(afterNormal, 'runnel_instances_started_total{workflow="metered"}')).toBe(1);
      expect(sample(afterNormal, 'runnel_instance_transitions_total{status="COMPLETED"}')).toBe(1);
      expect(sample(afterNormal, 'runnel_node_attempts_total{type="pass",outcome="completed"}')).toBe(1);
      expect(sample(afterNormal, 'runnel_node_attempts_total{type="flaky",outcome="retried"}')).toBe(1);
      expect(sample(afterNormal, 'runnel_node_attempts_total{type="flaky",outcome="completed"}')).toBe(1);
      expect(sample(afterNormal, 'runnel_node_attempts_total{type="delay",outcome="timer"}')).toBe(1);
      expect(sample(afterNormal, 'runnel_node_attempts_total{type="delay",outcome="completed"}')).toBe(1);
      expect(sample(afterNormal, 'runnel_node_failures_total{type="flaky",code="HANDLER_ERROR"}')).toBe(1);
      expect(sample(afterNormal, 'runnel_node_transitions_total{status="RETRYING"}')).toBe(1);
      expect(sample(afterNormal, 'runnel_node_transitions_total{status="COMPLETED"}')).toBe(3);
      expect(sample(afterNormal, 'runnel_node_duration_seconds_count{type="flaky"}')).toBe(2);
      expect(sample(afterNormal, 'runnel_due_to_committed_seconds_count{type="delay"}')).toBe(2);

      // when a test run without pins, one with `b` pinned, and a test run whose subworkflow starts a child run to their ends
      const plain = await runToSettled(engine, await engine.start('metered', { test: true }));
      const pinned = await runToSettled(engine, await engine.start('metered', { test: true, pins: { b: { calls: 0 } } }));
      const parent = await runToSettled(engine, await engine.start('metered-parent', { test: true }));
      const [child] = await engine.listInstances({ parentId: parent.id });
      for (const i of [plain, pinned, parent, child]) expect(i).toMatchObject({ status: 'COMPLETED', test: true });
      expect(pinned.nodes.find((n) => n.id === 'b')?.output).toEqual({ calls: 0 });

      // then every counter and histogram fed by instances is exactly as the normal run left it
      const after = await metrics.text();
      expect(instanceSeries(after)).toEqual(instanceSeries(afterNormal));
      expect(instanceSeries(after).length).toBeGreaterThan(10);
      expect(sample(after, 'runnel_instances_started_total{workflow="metered"}')).toBe(1);
      expect(sample(after, 'runnel_instances_started_total{workflow="metered-parent"}')).toBeUndefined();
      expect(sample(after, 'runnel_instance_transitions_total{status="COMPLETED"}')).toBe(1);
      expect(sample(after, 'runnel_node_attempts_total{type="subworkflow",outcome="children"}')).toBeUndefined();
      expect(sample(after, 'runnel_node_failures_total{type="flaky",code="HANDLER_ERROR"}')).toBe(1);
      // and the Dashboard's summary, read from the same registry, says the same
      const brief = await metrics.summary();
      expect(brief.started).toEqual([{ workflow: 'metered', count: 1 }]);
      expect(brief.failures).toEqual([{ type: 'flaky', code: 'HANDLER_ERROR', count: 1 }]);
      expect(brief.attempts.reduce((n, a) => n + a.count, 0)).toBe(5);
      // and the gauge read from the database counts the normal run only
      expect(sample(after, 'runnel_instances{workflow="metered",status="COMPLETED"}')).toBe(1);
      expect(sample(after, 'runnel_instances{workflow="metered-parent",status="COMPLETED"}')).toBe(0);
      // while the loop's own figure still counts the steps it claimed for them (the worker did that work)
      expect(sample(after, 'runnel_worker_claimed_total') ?? 0).toBeGreaterThan(claimedByNormal);

      // and every event about a test run (the child's included) carries test: true, none about the normal run a test field
      const testIds = new Set([plain.id, pinned.id, parent.id, child?.id ?? -1]);
      const ofTests = seen.filter((e) => testIds.has(e.instanceId));
      const ofNormal = seen.filter((e) => e.instanceId === normal.id);
      expect(new Set(ofTests.map((e) => e.instanceId))).toEqual(testIds);
      expect(new Set(ofTests.map((e) => e.type))).toEqual(new Set(['instance.created', 'instance.changed', 'instance.finished', 'node.changed']));
      for (const e of ofTests) expect(e, `${e.type} of instance ${e.instanceId}`).toMatchObject({ test: true });
      expect(ofNormal.length).toBeGreaterThan(5);
      for (const e of ofNormal) expect(e, `${e.type} of the normal run`).not.toHaveProperty('test');
      expect(seen.filter((e) => !testIds.has(e.instanceId) && e.instanceId !== normal.id)).toEqual([]);

      // and the contract's batches carry the flag as the engine events do, and validate
      stopBatching();
      const pushed = batches.flatMap((b) => EventBatchSchema.parse(b).events).filter((e): e is Extract<typeof e, { instanceId: number }> => 'instanceId' in e);
      expect(pushed.filter((e) => testIds.has(e.instanceId)).every((e) => e.test === true)).toBe(true);
      expect(pushed.filter((e) => e.instanceId === normal.id).some((e) => 'test' in e)).toBe(false);
      expect(pushed.filter((e) => e.type === 'instance.finished' && testIds.has(e.instanceId))).toHaveLength(4);
    } finally {
      off();
      stopBatching();
      metrics.close();
    }
  });

  it('an approval a test run waits on, its decision and its cancel are marked too, and count nothing', async () => {
    t = tempEngine();
    const { engine } = t;
    await engine.deploy({ name: 'asks', nodes: [{ id: 'ok', type: 'approval', config: { prompt: 'go?' } }, { id: 'after', type: 'pass' }], edges: [{ from: 'ok', to: 'after' }] });
    const metrics = new EngineMetrics(engine);
    const seen: InstanceEvent[] = [];
    const off = engine.on((e) => {
      if ('instanceId' in e) seen.push(e);
    });
    try {
      engine.startWorker();
      // given two test runs waiting on their approval
      const approved = await runToSettled(engine, await engine.start('asks', { test: true }));
      const cancelled = await runToSettled(engine, await engine.start('asks', { test: true }));
      expect([approved.status, cancelled.status]).toEqual(['WAITING', 'WAITING']);
      // when one is approved and the other cancelled by a person
      await engine.approve(approved.id, 'ok', { approved: true });
      await runToSettled(engine, approved.id);
      await engine.cancel(cancelled.id);
      // then their events, approval.requested included, all say test: true
      expect(seen.filter((e) => e.type === 'approval.requested')).toEqual([
        { type: 'approval.requested', instanceId: approved.id, nodeId: 'ok', prompt: 'go?', test: true },
        { type: 'approval.requested', instanceId: cancelled.id, nodeId: 'ok', prompt: 'go?', test: true },
      ]);
      expect(seen.filter((e) => e.type === 'instance.finished')).toEqual([
        { type: 'instance.finished', instanceId: approved.id, status: 'COMPLETED', test: true },
        { type: 'instance.finished', instanceId: cancelled.id, status: 'CANCELLED', test: true },
      ]);
      for (const e of seen) expect(e, `${e.type} of instance ${e.instanceId}`).toMatchObject({ test: true });
      // and the process's counters have counted nothing
      expect(instanceSeries(await metrics.text())).toEqual([]);
    } finally {
      off();
      metrics.close();
    }
  });
});
