/**
 * Test runs (`start` with `test` and `pins`), on real databases (both backends) with a real HTTP
 * server on 127.0.0.1 that counts the requests it gets: a pinned http node and a pinned custom
 * node complete with their pinned results and call nothing (zero requests, zero executions) while
 * the unpinned script runs for real on them; a test run's child instances are test runs; test
 * runs are left out of the metrics, the status counts and the default list (`test: true` lists
 * them); one action deletes every ended one; pins are refused naming the field.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { EngineError } from '../../../engine/errors';
import { createDefaultRegistry } from '../../../engine/nodes/registry';
import type { NodeType } from '../../../engine/nodes/types';
import { runToSettled, tempEngine, type TempEngine } from '../../helpers/temp-engine';

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
