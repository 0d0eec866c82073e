/**
 * Across machines, for real (issue 11): worker processes on two hosts of their own (network
 * namespaces joined by veth links, test/helpers/netns.ts) share one PostgreSQL, reached over
 * those links. Mid-run every worker of one host is SIGKILLed; the other host's workers take its
 * steps over when their leases expire. Then: no instance is lost (all COMPLETED), no step was
 * executed twice except a step the killed host had started and never committed (its re-run on
 * the surviving host is the crash recovery), and history records each node's completion once.
 */
import path from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { openPostgresStorage } from '../../../engine/db/postgres/storage';
import { Engine } from '../../../engine/runtime/engine';
import { createHosts, type TestHosts } from '../../helpers/netns';
import { startPgCluster, type PgCluster } from '../../helpers/pg-cluster';
import { callsByPair, killChildren, readCallLog, spawnWorker, waitFor, type WorkerChild } from '../../helpers/processes';
import { tempDir } from '../../helpers/temp-engine';
import { createTestRegistry } from '../../helpers/test-nodes';

const INSTANCES = 300;
const LEASE_MS = 1500;

describe('two hosts on one PostgreSQL', () => {
  let hosts: TestHosts | undefined;
  let cluster: PgCluster | undefined;
  let engine: Engine | undefined;
  const temp = tempDir('runnel-hosts-');
  afterEach(async () => {
    await killChildren();
    await engine?.close();
    await cluster?.stop();
    hosts?.remove();
    temp.cleanup();
  });

  it('lose nothing and execute no step twice when one host is SIGKILLed mid-run', { timeout: 180_000 }, async () => {
    hosts = createHosts(2);
    const [h1, h2] = hosts.hosts as [TestHosts['hosts'][0], TestHosts['hosts'][0]];
    cluster = await startPgCluster({ listenAddresses: ['127.0.0.1', h1.gateway, h2.gateway], trustNetworks: ['10.231.0.0/16'] });
    const admin = new pg.Client({ connectionString: cluster.url });
    await admin.connect();
    await admin.query('CREATE DATABASE two_hosts');
    await admin.end();
    const local = new URL(cluster.url);
    local.pathname = '/two_hosts';
    const port = local.port;
    const callLog = path.join(temp.dir, 'calls.log');
    engine = new Engine(openPostgresStorage(local.toString()), { registry: createTestRegistry(callLog) });
    await engine.deploy({
      name: 'hosts-three',
      nodes: [
        { id: 'a', type: 'pass', output: 'a' },
        { id: 'tally', type: 'count', config: { delayMs: 40 } },
        { id: 'b', type: 'pass' },
      ],
      edges: [
        { from: 'a', to: 'tally' },
        { from: 'tally', to: 'b' },
      ],
    });

    // Two workers a host, each reaching the database over its host's link (not loopback).
    const on = (h: { ns: string; gateway: string }): WorkerChild =>
      spawnWorker({
        db: `postgres://runnel@${h.gateway}:${port}/two_hosts`,
        callLog,
        leaseMs: LEASE_MS,
        concurrency: 8,
        exitWhenIdle: false,
        netns: h.ns,
      });
    const first = [on(h1), on(h1)];
    const second = [on(h2), on(h2)];
    await Promise.all([...first, ...second].map((w) => w.ready));

    const ids = await engine.startMany('hosts-three', Array.from({ length: INSTANCES }, (_, n) => ({ n })));
    // Mid-run: once a third has completed and the first host has steps of its own in flight.
    const killedPids = new Set(first.map((w) => w.pid));
    await waitFor(async () => ((await engine!.countByStatus({})).COMPLETED ?? 0) >= INSTANCES / 3, 60_000, 'a third completed', 20);
    expect(readCallLog(callLog).some((c) => killedPids.has(c.pid))).toBe(true);
    const killedAt = Date.now();
    for (const w of first) w.kill('SIGKILL');
    await Promise.all(first.map((w) => w.exited));

    await waitFor(async () => ((await engine!.countByStatus({})).COMPLETED ?? 0) === INSTANCES, 120_000, 'all completed', 50);
    expect(await engine.countByStatus({})).toEqual({ COMPLETED: INSTANCES });

    // No step executed twice: a second call of a (instance, node) only after a call of the killed host.
    const calls = readCallLog(callLog);
    const pairs = callsByPair(calls);
    expect(pairs.size).toBe(INSTANCES);
    // A re-run is allowed only for a call the killed host logged just before it died (its handler
    // done, its commit not yet made): one call by it, then one by a survivor.
    const twice = [...pairs.entries()].filter(([, list]) => {
      const byKilled = list.filter((c) => killedPids.has(c.pid));
      const bySurvivors = list.length - byKilled.length;
      if (bySurvivors > 1 || byKilled.length > 1) return true;
      return bySurvivors === 1 && byKilled.length === 1 && (byKilled[0]?.at ?? 0) < killedAt - 1000;
    });
    expect(twice).toEqual([]);
    // Both hosts worked, and the survivors took over steps the killed host had started.
    expect(calls.filter((c) => killedPids.has(c.pid)).length).toBeGreaterThan(0);
    const survivors = new Set(second.map((w) => w.pid));
    expect(calls.filter((c) => survivors.has(c.pid)).length).toBeGreaterThan(INSTANCES / 3);
    // History: each node of each instance completed exactly once.
    const completions = new Map<string, number>();
    for (const id of ids) {
      for (const e of await engine.history(id)) {
        if (e.type === 'node.completed') completions.set(`${id}:${e.nodeId}`, (completions.get(`${id}:${e.nodeId}`) ?? 0) + 1);
      }
    }
    expect(completions.size).toBe(3 * INSTANCES);
    expect([...completions].filter(([, n]) => n !== 1)).toEqual([]);
    const rerun = [...pairs.values()].filter((list) => list.length > 1).length;
    console.log(`two hosts: ${INSTANCES} instances; calls by the killed host ${calls.filter((c) => killedPids.has(c.pid)).length}, by the other ${calls.filter((c) => survivors.has(c.pid)).length}; steps re-run after the kill ${rerun}`);
    for (const w of second) w.kill('SIGTERM');
    const exits = await Promise.all(second.map((w) => w.exited));
    for (const [i, e] of exits.entries()) expect(e, second[i]!.stderr()).toEqual({ code: 0, signal: null });
  });
});
