/**
 * Control flow survives kill -9 (issue 12): real worker processes SIGKILLed at the runtime's
 * fault points (engine/runtime/faults.ts) — while a map of 1,000 items starts and runs its
 * children, inside a chain of sub-workflows, and around an event's delivery — then restarted on
 * the same database until idle. Nothing is lost and no child instance is started twice: one
 * child per item, results in item order, one completion per node. Runs on both backends (the
 * integration-pg project runs this file on PostgreSQL).
 */
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Engine } from '../../../engine/runtime/engine';
import { killChildren, spawnWorker, type Exit } from '../../helpers/processes';
import { rowsIn } from '../../helpers/db-rows';
import { tempLocation } from '../../helpers/temp-engine';
import { createTestRegistry } from '../../helpers/test-nodes';

const WORKER = { leaseMs: 1500, pollIntervalMs: 20, concurrency: 8 } as const;

/**
 * Runs worker processes with `faults` armed until one is killed by them. A worker exits when the
 * database has no due work; a claim left leased by the worker killed before is due only when its
 * lease expires, so a worker may find nothing to do yet and exit: then another is started.
 */
async function killAt(db: string, callLog: string, faults: string): Promise<Exit> {
  for (let i = 0; i < 20; i++) {
    const w = spawnWorker({ db, callLog, ...WORKER, faults });
    const exit = await w.exited;
    if (exit.signal === 'SIGKILL') return exit;
    if (exit.code !== 0) throw new Error(`worker exited ${exit.code ?? exit.signal}:\n${w.stderr()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`no worker was killed at ${faults}`);
}

/** Runs worker processes without faults until instance `id` has ended. */
async function runToEnd(db: string, callLog: string, id: number): Promise<void> {
  for (let i = 0; i < 20; i++) {
    const w = spawnWorker({ db, callLog, ...WORKER });
    const exit = await w.exited;
    if (exit.code !== 0) throw new Error(`worker exited ${exit.code ?? exit.signal}:\n${w.stderr()}`);
    const [row] = await rowsIn<{ status: string }>(db, 'SELECT status FROM instance WHERE id = ?', [id]);
    if (row && ['COMPLETED', 'FAILED', 'CANCELLED'].includes(row.status)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`instance ${id} did not end`);
}

describe('control flow under SIGKILL', () => {
  let db: ReturnType<typeof tempLocation>;
  afterEach(async () => {
    await killChildren();
    await db.cleanup();
  });

  it('a map of 1,000 items killed while it starts and runs its children: one child per item, results in order', async () => {
    db = tempLocation();
    const callLog = path.join(db.dir, 'calls.log');
    const engine = Engine.open(db.location, { registry: createTestRegistry(callLog) });
    await engine.deploy({ name: 'device', nodes: [{ id: 'upgrade', type: 'count', config: {}, output: 'upgraded' }], edges: [] });
    await engine.deploy({
      name: 'fleet',
      nodes: [
        { id: 'each', type: 'map', config: { items: 'devices', workflow: 'device', maxConcurrency: 25 }, output: 'results' },
        { id: 'report', type: 'count', config: {} },
      ],
      edges: [{ from: 'each', to: 'report' }],
    });
    const devices = Array.from({ length: 1000 }, (_, i) => `d${i}`);
    const id = await engine.start('fleet', { variables: { devices } });
    await engine.close();

    // Killed after the map's handler computed its 1,000 inputs, before the commit that starts the first children.
    await killAt(db.location, callLog, 'handler-done@each=kill');
    // Killed right after commits of children's steps, and right after claims.
    await killAt(db.location, callLog, 'committed@upgrade#40=kill');
    await killAt(db.location, callLog, 'claimed@upgrade#150=kill');
    await killAt(db.location, callLog, 'committed@upgrade#300=kill');
    await runToEnd(db.location, callLog, id);

    const check = Engine.open(db.location, { registry: createTestRegistry(callLog) });
    try {
      const done = await check.getInstance(id);
      expect(done.status, JSON.stringify(done.error)).toBe('COMPLETED');
      const results = done.variables.results as { item: string; index: number }[];
      expect(results).toHaveLength(1000);
      expect(results.map((r) => r.item)).toEqual(devices);
      expect(results.map((r) => r.index)).toEqual(devices.map((_, i) => i));
      expect(done.children).toEqual([{ nodeId: 'each', attempt: 1, workflow: 'device', workflowVersion: 1, total: 1000, completed: 1000, failed: 0, running: 0, waiting: 0, queued: 0 }]);
      // One child instance per item, each started once: as many children as items, no item twice.
      const children = await rowsIn<{ n: number; items: number; ids: number }>(
        db.location,
        'SELECT count(*) AS n, count(DISTINCT item_index) AS items, count(DISTINCT child_id) AS ids FROM child WHERE instance_id = ?',
        [id],
      );
      expect(children.map((r) => [Number(r.n), Number(r.items), Number(r.ids)])).toEqual([[1000, 1000, 1000]]);
      const instances = await rowsIn<{ n: number }>(db.location, 'SELECT count(*) AS n FROM instance WHERE parent_id = ?', [id]);
      expect(Number(instances[0]?.n)).toBe(1000);
      // Each node completed once in history, the parent's map node included.
      const completions = await rowsIn<{ instance_id: number; node_id: string; n: number }>(
        db.location,
        `SELECT instance_id, node_id, count(*) AS n FROM history WHERE type = 'node.completed' GROUP BY instance_id, node_id HAVING count(*) > 1`,
      );
      expect(completions).toEqual([]);
      const left = await rowsIn<{ n: number }>(db.location, 'SELECT count(*) AS n FROM schedule');
      expect(Number(left[0]?.n)).toBe(0);
    } finally {
      await check.close();
    }
  });

  it('a chain of sub-workflows killed at each level: one instance per level, the leaf\'s result reaches the top', async () => {
    db = tempLocation();
    const callLog = path.join(db.dir, 'calls.log');
    const engine = Engine.open(db.location, { registry: createTestRegistry(callLog) });
    await engine.deploy({ name: 'leaf', nodes: [{ id: 'work', type: 'count', config: {}, output: 'leafResult' }], edges: [] });
    await engine.deploy({ name: 'middle', nodes: [{ id: 'callLeaf', type: 'subworkflow', config: { workflow: 'leaf' }, output: 'fromLeaf' }], edges: [] });
    await engine.deploy({
      name: 'top',
      nodes: [
        { id: 'callMiddle', type: 'subworkflow', config: { workflow: 'middle' }, output: 'fromMiddle' },
        { id: 'after', type: 'count', config: {} },
      ],
      edges: [{ from: 'callMiddle', to: 'after' }],
    });
    const id = await engine.start('top', { variables: { order: 7 } });
    await engine.close();

    for (const fault of ['handler-done@callMiddle=kill', 'handler-done@callLeaf=kill', 'committed@work=kill', 'claimed@callLeaf=kill', 'committed@callLeaf=kill', 'committed@callMiddle=kill']) {
      await killAt(db.location, callLog, fault);
    }
    await runToEnd(db.location, callLog, id);

    const check = Engine.open(db.location, { registry: createTestRegistry(callLog) });
    try {
      const done = await check.getInstance(id);
      expect(done.status).toBe('COMPLETED');
      expect((done.variables.fromMiddle as { fromLeaf: { order: number; leafResult: { attempt: number } } }).fromLeaf).toMatchObject({ order: 7, leafResult: { attempt: 1 } });
      const levels = await rowsIn<{ name: string; n: number }>(
        db.location,
        'SELECT w.name AS name, count(*) AS n FROM instance i JOIN workflow w ON w.id = i.workflow_id GROUP BY w.name ORDER BY w.name',
      );
      expect(levels.map((l) => [l.name, Number(l.n)])).toEqual([
        ['leaf', 1],
        ['middle', 1],
        ['top', 1],
      ]);
      const twice = await rowsIn(db.location, `SELECT instance_id, node_id FROM history WHERE type = 'node.completed' GROUP BY instance_id, node_id HAVING count(*) > 1`);
      expect(twice).toEqual([]);
    } finally {
      await check.close();
    }
  });

  it('an event sent while the worker is down, around kills at the node and its wake: taken once, completed once', async () => {
    db = tempLocation();
    const callLog = path.join(db.dir, 'calls.log');
    const engine = Engine.open(db.location, { registry: createTestRegistry(callLog) });
    await engine.deploy({
      name: 'wait-pay',
      nodes: [
        { id: 'first', type: 'count', config: {} },
        { id: 'paid', type: 'event', config: { name: 'payment', key: '{{ order }}' }, output: 'payment' },
        { id: 'ship', type: 'count', config: {} },
      ],
      edges: [
        { from: 'first', to: 'paid' },
        { from: 'paid', to: 'ship' },
      ],
    });
    const early = await engine.start('wait-pay', { variables: { order: 'a' } });
    const late = await engine.start('wait-pay', { variables: { order: 'b' } });
    // Sent before the node is reached: kept until it is.
    expect(await engine.signal({ id: early }, { event: 'payment', key: 'a', data: { n: 1 } })).toMatchObject({ consumedBy: null });
    await engine.close();

    // Killed after the event node's handler, before its wait (and the early event's taking) commit.
    await killAt(db.location, callLog, 'handler-done@paid=kill');
    // Killed right after the claim of the wake row that settles the early event.
    await killAt(db.location, callLog, 'claimed@paid=kill');
    await runToEnd(db.location, callLog, early);

    const mid = Engine.open(db.location, { registry: createTestRegistry(callLog) });
    expect((await mid.getInstance(late)).status).toBe('WAITING');
    expect(await mid.signal({ id: late }, { event: 'payment', key: 'b', data: { n: 2 } })).toMatchObject({ consumedBy: 'paid' });
    await mid.close();
    await killAt(db.location, callLog, 'committed@paid=kill');
    await runToEnd(db.location, callLog, late);

    const check = Engine.open(db.location, { registry: createTestRegistry(callLog) });
    try {
      for (const [id, n] of [[early, 1], [late, 2]] as const) {
        const done = await check.getInstance(id);
        expect(done.status).toBe('COMPLETED');
        expect(done.variables.payment).toEqual({ n });
      }
      const events = await rowsIn<{ instance_id: number; consumed_node_id: string | null }>(db.location, 'SELECT instance_id, consumed_node_id FROM event ORDER BY id');
      expect(events.map((e) => [Number(e.instance_id), e.consumed_node_id])).toEqual([
        [early, 'paid'],
        [late, 'paid'],
      ]);
      const twice = await rowsIn(db.location, `SELECT instance_id, node_id FROM history WHERE type = 'node.completed' GROUP BY instance_id, node_id HAVING count(*) > 1`);
      expect(twice).toEqual([]);
    } finally {
      await check.close();
    }
  });
});
