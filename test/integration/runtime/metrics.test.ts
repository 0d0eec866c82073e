/**
 * Prometheus metrics (issue 14): one registry per engine, fed by the engine's events and read from
 * the read model at scrape time; served by the browser host at `GET /metrics` under the API's
 * token, and printed by `runnel metrics`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { register } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { Engine, EngineMetrics } from '../../../engine/api';
import { runCli } from '../../helpers/cli';
import { rawRequest, startTestHost, type TestHost } from '../../helpers/browser-host';
import { killChildren, REPO_ROOT, spawnScript, waitFor } from '../../helpers/processes';
import { createTestRegistry } from '../../helpers/test-nodes';
import { tempDir, tempEngine } from '../../helpers/temp-engine';

const WORKFLOW = {
  name: 'm',
  nodes: [
    { id: 'a', type: 'pass' },
    { id: 'b', type: 'flaky', config: { failures: 2 }, retry: { maxAttempts: 3, initialIntervalMs: 1 } },
    { id: 'c', type: 'delay', config: { durationMs: 1 } },
  ],
  edges: [
    { from: 'a', to: 'b' },
    { from: 'b', to: 'c' },
  ],
};

/** The value of one sample line (`name{labels} value`), or undefined when the text has none. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('engine metrics', () => {
  it('count attempts by type and outcome, failures by code, durations and turns; gauges read the file; nothing leaks to another engine or the global registry', { timeout: 60_000 }, async () => {
    // given: two engines in one process, each with its metrics
    const dir = tempDir('runnel-metrics-');
    cleanups.push(async () => dir.cleanup());
    const file = path.join(dir.dir, 'runnel.db');
    const callLog = path.join(dir.dir, 'calls.log');
    fs.writeFileSync(callLog, '');
    const engine = Engine.open(file, { registry: createTestRegistry(callLog), pollIntervalMs: 10 });
    cleanups.push(() => engine.close());
    const other = tempEngine();
    cleanups.push(other.close);
    const metrics = new EngineMetrics(engine);
    const otherMetrics = new EngineMetrics(other.engine);
    cleanups.push(async () => {
      metrics.close();
      otherMetrics.close();
      await Promise.resolve();
    });

    // when: five instances run to their end on the first (the flaky node fails twice each, then passes)
    await engine.deploy(WORKFLOW);
    const ids = await engine.startMany('m', [{}, {}, {}, {}, {}]);
    await engine.runUntil(async () => (await engine.countByStatus()).COMPLETED === 5, 30_000);
    for (const id of ids) expect((await engine.getInstance(id)).status).toBe('COMPLETED');

    // then: the counters say exactly what happened
    const text = await metrics.text();
    expect(sample(text, 'runnel_instances_started_total{workflow="m"}')).toBe(5);
    expect(sample(text, 'runnel_instance_transitions_total{status="COMPLETED"}')).toBe(5);
    expect(sample(text, 'runnel_node_attempts_total{type="pass",outcome="completed"}')).toBe(5);
    expect(sample(text, 'runnel_node_attempts_total{type="flaky",outcome="retried"}')).toBe(10);
    expect(sample(text, 'runnel_node_attempts_total{type="flaky",outcome="completed"}')).toBe(5);
    expect(sample(text, 'runnel_node_attempts_total{type="delay",outcome="timer"}')).toBe(5);
    expect(sample(text, 'runnel_node_attempts_total{type="delay",outcome="completed"}')).toBe(5);
    expect(sample(text, 'runnel_node_failures_total{type="flaky",code="HANDLER_ERROR"}')).toBe(10);
    expect(sample(text, 'runnel_node_transitions_total{status="RETRYING"}')).toBe(10);
    // and: each committed attempt end is one observation of its duration and its latency
    expect(sample(text, 'runnel_node_duration_seconds_count{type="flaky"}')).toBe(15);
    expect(sample(text, 'runnel_due_to_committed_seconds_count{type="delay"}')).toBe(10);
    expect(sample(text, 'runnel_node_duration_seconds_bucket{le="+Inf",type="pass"}')).toBe(5);
    const turns = sample(text, 'runnel_worker_turn_seconds_count') ?? 0;
    expect(turns).toBeGreaterThan(0);
    expect(sample(text, 'runnel_worker_commit_seconds_count')).toBe(turns);
    expect(sample(text, 'runnel_worker_claimed_total')).toBe(30);
    // and: the gauges are read from the file at scrape time
    expect(sample(text, 'runnel_instances{workflow="m",status="COMPLETED"}')).toBe(5);
    expect(sample(text, 'runnel_instances{workflow="m",status="RUNNING"}')).toBe(0);
    expect(sample(text, 'runnel_wal_limit_bytes')).toBe(64 * 1024 * 1024);
    expect(sample(text, 'runnel_wal_bytes')).toBe(fs.statSync(`${file}-wal`).size);

    // and: the summary the Dashboard reads (metrics:runtime) says the same, from the same registry
    const brief = await metrics.summary();
    expect(brief.started).toEqual([{ workflow: 'm', count: 5 }]);
    expect(brief.attempts).toEqual(
      expect.arrayContaining([
        { type: 'flaky', outcome: 'retried', count: 10 },
        { type: 'flaky', outcome: 'completed', count: 5 },
        { type: 'pass', outcome: 'completed', count: 5 },
        { type: 'delay', outcome: 'timer', count: 5 },
        { type: 'delay', outcome: 'completed', count: 5 },
      ]),
    );
    expect(brief.attempts).toHaveLength(5);
    // most first
    expect(brief.attempts[0]).toEqual({ type: 'flaky', outcome: 'retried', count: 10 });
    expect(brief.failures).toEqual([{ type: 'flaky', code: 'HANDLER_ERROR', count: 10 }]);
    expect(brief.claimed).toBe(30);
    expect(brief.turns.count).toBe(turns);
    expect(brief.commits.count).toBe(turns);
    const flaky = brief.nodeDuration.find((h) => h.type === 'flaky');
    expect(flaky?.count).toBe(15);
    // percentiles are bucket bounds (ms), P50 ≤ P99, and the mean is the histogram's sum / count
    const sum = sample(text, 'runnel_node_duration_seconds_sum{type="flaky"}') ?? NaN;
    expect(flaky?.meanMs).toBeCloseTo((sum / 15) * 1000, 2);
    expect([1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000, 30_000, 60_000, 300_000]).toContain(flaky?.p99Ms);
    expect(flaky?.p50Ms ?? Infinity).toBeLessThanOrEqual(flaky?.p99Ms ?? -1);
    expect(brief.dueToCommitted.find((h) => h.type === 'delay')?.count).toBe(10);

    // and: the other engine counted nothing, and prom-client's global registry holds none of it
    const otherText = await otherMetrics.text();
    expect(otherText).not.toMatch(/^runnel_node_attempts_total\{/m);
    expect(sample(otherText, 'runnel_worker_turn_seconds_count')).toBe(0);
    expect(await register.metrics()).not.toContain('runnel_');
    const empty = await otherMetrics.summary();
    expect(empty).toMatchObject({ claimed: 0, attempts: [], failures: [], started: [], turns: { count: 0, meanMs: null, p50Ms: null, p99Ms: null } });
  });
});

describe('checkpoint metrics', () => {
  it('count the checkpoints the upkeep thread ran while the worker worked, in storage:health and the text', { timeout: 60_000 }, async () => {
    const t = tempEngine();
    cleanups.push(t.close);
    const metrics = new EngineMetrics(t.engine);
    cleanups.push(async () => metrics.close());
    await t.engine.deploy({ name: 'fill', nodes: [{ id: 'a', type: 'pass' }, { id: 'b', type: 'pass' }], edges: [{ from: 'a', to: 'b' }] });
    t.engine.startWorker();
    await t.engine.startMany('fill', Array.from({ length: 2000 }, (_, i) => ({ i, pad: 'p'.repeat(300) })));
    await waitFor(async () => (await t.engine.countByStatus()).COMPLETED === 2000 && (t.engine.storage.health().checkpoints?.count ?? 0) > 0, 30_000, 'work done and a checkpoint run');
    const c = t.engine.storage.health().checkpoints;
    expect(c?.totalMs).toBeGreaterThan(0);
    expect(c?.lastMs).toBeGreaterThan(0);
    const text = await metrics.text();
    expect(sample(text, 'runnel_checkpoints_total')).toBeGreaterThanOrEqual(c?.count ?? 1);
    expect(sample(text, 'runnel_checkpoint_seconds_total')).toBeGreaterThan(0);
    await t.engine.stopWorker();
  });
});

describe('GET /metrics and runnel metrics', () => {
  let host: TestHost | undefined;
  afterEach(async () => {
    await host?.close();
    host = undefined;
  });

  it('serves the text under the API token (401 without), and the CLI prints the same gauges', { timeout: 60_000 }, async () => {
    host = await startTestHost();
    const h = host;
    await h.value('workflow:save', { definition: { name: 'solo', nodes: [{ id: 'a', type: 'pass' }] } });
    const { id } = await h.value<{ id: number }>('instance:start', { workflow: 'solo' });
    // and a test run of it, pinned, started through the API as the Run dialog does: counted nowhere
    const { id: testRun } = await h.value<{ id: number }>('instance:start', { workflow: 'solo', test: true, pins: { a: { pinned: true } } });
    for (const i of [id, testRun]) for (let n = 0; n < 500 && (await h.engine.getInstance(i)).status !== 'COMPLETED'; n++) await new Promise((r) => setTimeout(r, 20));
    expect(await h.engine.getInstance(testRun)).toMatchObject({ status: 'COMPLETED', test: true });

    const anonymous = await fetch(`${h.base}/metrics`);
    expect(anonymous.status).toBe(401);
    const wrong = await fetch(`${h.base}/metrics`, { headers: { authorization: 'Bearer nope' } });
    expect(wrong.status).toBe(401);
    const res = await fetch(`${h.base}/metrics`, { headers: { authorization: `Bearer ${h.server.token}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = await res.text();
    expect(sample(text, 'runnel_instances{workflow="solo",status="COMPLETED"}')).toBe(1);
    expect(sample(text, 'runnel_node_attempts_total{type="pass",outcome="completed"}')).toBe(1);
    expect(sample(text, 'runnel_instances_started_total{workflow="solo"}')).toBe(1);
    expect(sample(text, 'runnel_instance_transitions_total{status="COMPLETED"}')).toBe(1);
    expect(sample(text, 'runnel_node_duration_seconds_count{type="pass"}')).toBe(1);

    const cli = await runCli('metrics', '--db', h.file);
    expect(cli.code, cli.stderr).toBe(0);
    const gauges = (t: string) => t.split('\n').filter((l) => l.startsWith('runnel_instances{'));
    expect(gauges(cli.stdout)).toEqual(gauges(text));
    expect(gauges(cli.stdout)).toContain('runnel_instances{workflow="solo",status="COMPLETED"} 1');
    // A process of its own has counted nothing yet.
    expect(cli.stdout).toContain('# TYPE runnel_node_attempts_total counter');
    expect(cli.stdout).not.toMatch(/^runnel_node_attempts_total\{/m);
    // With --json, the same metrics as one JSON document (prom-client's getMetricsAsJSON)
    const asJson = await runCli('metrics', '--db', h.file, '--json');
    expect(asJson.code, asJson.stderr).toBe(0);
    const metrics = JSON.parse(asJson.stdout) as { name: string; type: string; values: { labels: Record<string, string>; value: number }[] }[];
    const instances = metrics.find((m) => m.name === 'runnel_instances');
    expect(instances?.type).toBe('gauge');
    expect(instances?.values).toContainEqual({ labels: { workflow: 'solo', status: 'COMPLETED' }, value: 1 });
    expect(metrics.find((m) => m.name === 'runnel_node_attempts_total')?.values).toEqual([]);
  });
});

describe('runnel worker --metrics-port', () => {
  afterEach(async () => {
    await killChildren();
  });

  it("serves the worker process's own counters on 127.0.0.1 without a token, and nothing else", { timeout: 60_000 }, async () => {
    // given: 20 instances of a 3-node chain, and a real `runnel worker` child with a metrics port
    const dir = tempDir('runnel-worker-metrics-');
    cleanups.push(async () => dir.cleanup());
    const file = path.join(dir.dir, 'runnel.db');
    const engine = Engine.open(file);
    await engine.deploy({ name: 'chain', nodes: [{ id: 'a', type: 'pass' }, { id: 'b', type: 'pass' }, { id: 'c', type: 'pass' }], edges: [{ from: 'a', to: 'b' }, { from: 'b', to: 'c' }] });
    await engine.startMany('chain', Array.from({ length: 20 }, () => ({})));
    await engine.close();
    const worker = spawnScript(path.join(REPO_ROOT, 'bin', 'runnel.js'), ['worker', '--db', file, '--metrics-port', '0']);
    const port = Number(await waitFor(() => /metrics at http:\/\/127\.0\.0\.1:(\d+)\/metrics/.exec(worker.stderr())?.[1], 30_000, 'the metrics URL'));

    // when: it has worked them all
    const scrape = async () => (await rawRequest(port, { path: '/metrics', headers: { host: `127.0.0.1:${port}` } })).body;
    await waitFor(async () => sample(await scrape(), 'runnel_instances{workflow="chain",status="COMPLETED"}') === 20, 30_000, '20 completed');

    // then: its counters say what it did, with no token asked
    const text = await scrape();
    expect(sample(text, 'runnel_node_attempts_total{type="pass",outcome="completed"}')).toBe(60);
    expect(sample(text, 'runnel_instance_transitions_total{status="COMPLETED"}')).toBe(20);
    expect(sample(text, 'runnel_node_duration_seconds_count{type="pass"}')).toBe(60);
    // and: another Host (DNS rebinding) and any other path are refused
    expect((await rawRequest(port, { path: '/metrics', headers: { host: `evil.example:${port}` } })).status).toBe(403);
    expect((await rawRequest(port, { path: '/api/instance:list', headers: { host: `localhost:${port}` } })).status).toBe(404);

    worker.kill('SIGTERM');
    expect((await worker.exited).code).toBe(130);
  });
});
