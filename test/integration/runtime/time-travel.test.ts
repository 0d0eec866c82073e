/**
 * Time travel: `instance:stateAt` for every history entry of real runs equals the state the
 * engine had right after that entry's transaction committed — recorded as the runs went by a
 * recorder wrapped around the engine's storage (every write, then a read of each instance through
 * `instance:get`, before the next write may start). Runs on both backends (integration-pg too).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startDeviceServer, type DeviceFleetServer } from '../../../examples/device-server';
import type { Engine } from '../../../engine/runtime/engine';
import type { HistoryEvent, InstanceDetail } from '../../../engine/api/contract';
import { createHandlers, dispatch } from '../../../engine/api/handlers';
import { Engine as EngineClass } from '../../../engine/runtime/engine';
import { runToSettled, tempEngine, tempLocation } from '../../helpers/temp-engine';
import { rowsIn } from '../../helpers/db-rows';

const OTA = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, '../../../examples/ota-upgrade.workflow.json'), 'utf8')) as unknown;

/** What time travel rebuilds of an instance (the rest is the instance as it is now). */
function rebuilt(i: InstanceDetail) {
  return {
    status: i.status,
    variables: i.variables,
    error: i.error,
    suspension: i.suspension,
    startedAt: i.startedAt,
    endedAt: i.endedAt,
    pausedAt: i.pausedAt ?? null,
    held: i.held ?? false,
    nodes: i.nodes.map((n) => ({
      id: n.id,
      status: n.status,
      attempt: n.attempt,
      maxAttempts: n.maxAttempts,
      output: n.output,
      error: n.error,
      wait: n.wait,
      completedSeq: n.completedSeq,
      startedAt: n.startedAt,
      endedAt: n.endedAt,
    })),
  };
}

/**
 * Records, after every write transaction of `engine`, each instance's state for the history
 * entries that transaction appended. Writes are chained so that the next one starts only after
 * the reads: what is read is exactly what that commit left.
 */
function recordStates(engine: Engine): { states: Map<number, { entry: HistoryEvent; state: ReturnType<typeof rebuilt> }>; stop: () => void } {
  const storage = engine.storage as { write: Engine['storage']['write'] };
  const original = storage.write.bind(engine.storage);
  const seen = new Map<number, number>();
  const states = new Map<number, { entry: HistoryEvent; state: ReturnType<typeof rebuilt> }>();
  let chain: Promise<unknown> = Promise.resolve();
  const capture = async (): Promise<void> => {
    const max = await engine.storage.read.maxInstanceId();
    for (let id = 1; id <= max; id++) {
      const events = await engine.history(id, seen.get(id) ?? 0);
      if (events.length === 0) continue;
      const state = rebuilt(await engine.getInstance(id));
      for (const e of events) states.set(e.id, { entry: e, state });
      seen.set(id, (events[events.length - 1] as HistoryEvent).id);
    }
  };
  storage.write = <T,>(fn: Parameters<Engine['storage']['write']>[0]): Promise<T> => {
    const run = chain.then(async () => {
      const r = await original(fn);
      await capture();
      return r as T;
    });
    chain = run.catch(() => undefined);
    return run;
  };
  return { states, stop: () => void (storage.write = original) };
}

/** Asserts stateAt(entry) equals the recorded state, for every entry recorded; returns how many. */
async function expectEveryEntryMatches(engine: Engine, states: Map<number, { entry: HistoryEvent; state: ReturnType<typeof rebuilt> }>, instanceIds: number[]): Promise<number> {
  let n = 0;
  for (const id of instanceIds) {
    const events = await engine.history(id);
    expect(events.length).toBeGreaterThan(0);
    for (const e of events) {
      const recorded = states.get(e.id);
      expect(recorded, `entry ${e.id} (${e.type}) was recorded`).toBeDefined();
      const at = await engine.stateAt(id, e.id);
      expect(at.at).toEqual(e);
      expect(rebuilt(at.instance), `instance ${id} at entry ${e.id} (${e.type}${e.nodeId ? ` ${e.nodeId}` : ''})`).toEqual(recorded?.state);
      n++;
    }
    // The last entry stands where the instance is now (nothing changed after it).
    const last = events[events.length - 1] as HistoryEvent;
    expect(rebuilt((await engine.stateAt(id, last.id)).instance)).toEqual(rebuilt(await engine.getInstance(id)));
  }
  return n;
}

describe('time travel: stateAt for every history entry equals the state the engine had then', () => {
  let fleet: DeviceFleetServer;
  let ctx: ReturnType<typeof tempEngine>;
  beforeAll(async () => {
    fleet = await startDeviceServer({ size: 20 });
  });
  afterAll(async () => fleet.close());
  afterEach(async () => ctx.close());

  it('the OTA example: an upgraded device, a bricked one rolled back, and a flaky one suspended then retried by hand', async () => {
    // Given the OTA example and a recorder on the engine's writes
    ctx = tempEngine();
    const { engine } = ctx;
    await engine.deploy(OTA);
    const rec = recordStates(engine);
    const device = (fate: string) => [...fleet.devices.values()].find((d) => d.fate === fate)?.id as string;
    const vars = (deviceId: string) => ({ deviceId, baseUrl: fleet.baseUrl, targetVersion: fleet.targetVersion });
    // When three devices run to their ends (the flaky one repaired and retried by hand)
    const upgraded = await engine.start('ota-upgrade', { variables: vars(device('upgrade')) });
    const bricked = await engine.start('ota-upgrade', { variables: vars(device('bricked')) });
    const flaky = await engine.start('ota-upgrade', { variables: vars(device('flaky')) });
    expect((await runToSettled(engine, upgraded)).status).toBe('COMPLETED');
    expect((await runToSettled(engine, bricked)).status).toBe('FAILED');
    expect((await runToSettled(engine, flaky)).status).toBe('SUSPENDED');
    fleet.repair(device('flaky'));
    await engine.resume(flaky, { action: 'retry', variables: { ...(await engine.getInstance(flaky)).variables, repairedBy: 'ops' } });
    expect((await runToSettled(engine, flaky)).status).toBe('COMPLETED');
    rec.stop();
    // Then every entry of every run rebuilds the state recorded for it
    const n = await expectEveryEntryMatches(engine, rec.states, [upgraded, bricked, flaky]);
    expect(n).toBeGreaterThan(40);
  });

  it('instances started in one transaction and run in shared turns (several patches a transaction) each rebuild', async () => {
    ctx = tempEngine();
    const { engine } = ctx;
    await engine.deploy({ name: 'tt-many', nodes: [{ id: 'a', type: 'pass' }, { id: 'b', type: 'pass' }], edges: [{ from: 'a', to: 'b' }] });
    const rec = recordStates(engine);
    // When five instances start in one transaction, each with variables of its own
    const ids = await engine.startMany('tt-many', [1, 2, 3, 4, 5].map((n) => ({ n, name: `run ${n}` })));
    for (const id of ids) expect((await runToSettled(engine, id)).status).toBe('COMPLETED');
    rec.stop();
    // Then every entry of each rebuilds its own state, start variables included
    expect(await expectEveryEntryMatches(engine, rec.states, ids)).toBeGreaterThanOrEqual(5 * 4);
    expect((await engine.stateAt(ids[2] as number, (await engine.history(ids[2] as number))[0]!.id)).instance.variables).toEqual({ n: 3, name: 'run 3' });
  });

  it('retries, an error edge, an approval and a sub-workflow', async () => {
    ctx = tempEngine();
    const { engine } = ctx;
    await engine.deploy({
      name: 'tt-child',
      nodes: [
        { id: 'double', type: 'pass', input: '{ "twice": n * 2 }', output: 'result' },
        { id: 'pause', type: 'delay', config: { durationMs: 20 } },
      ],
      edges: [{ from: 'double', to: 'pause' }],
    });
    await engine.deploy({
      name: 'tt-parent',
      nodes: [
        { id: 'prepare', type: 'pass', input: '{ "n": 21, "note": null, "list": [1, 2] }', output: '{ "n": $result.n, "note": $result.note, "list": $result.list }' },
        { id: 'flaky', type: 'script', config: { code: "throw new Error('down')" }, retry: { maxAttempts: 3, initialIntervalMs: 10, backoffCoefficient: 1 } },
        { id: 'recover', type: 'pass', input: '{ "why": $error.message }', output: 'recovered' },
        { id: 'ok', type: 'approval', config: { prompt: 'Go on?' } },
        { id: 'call', type: 'subworkflow', config: { workflow: 'tt-child', input: '{ "n": n }' }, output: 'child' },
        { id: 'finish', type: 'pass', input: '{ "done": true, "list": null }', output: '{ "done": $result.done, "list": $result.list }' },
      ],
      edges: [
        { from: 'prepare', to: 'flaky' },
        { from: 'flaky', to: 'recover', on: 'error' },
        { from: 'recover', to: 'ok' },
        { from: 'ok', to: 'call' },
        { from: 'call', to: 'finish' },
      ],
    });
    const rec = recordStates(engine);
    // When it runs: three failed attempts, the error edge, a person's approval, a child instance
    const id = await engine.start('tt-parent', { variables: { customer: 'ada', removeMe: 1 } });
    const waiting = await runToSettled(engine, id);
    expect(waiting.nodes.find((n) => n.id === 'ok')?.status).toBe('WAITING');
    await engine.approve(id, 'ok', { approved: true, comment: 'fine', actor: 'alice' });
    const done = await runToSettled(engine, id);
    expect(done.status).toBe('COMPLETED');
    expect(done.nodes.find((n) => n.id === 'flaky')).toMatchObject({ status: 'FAILED', attempt: 3 });
    rec.stop();
    const children = (await engine.listInstances({ parentId: id })).map((c) => c.id);
    expect(children).toHaveLength(1);
    // Then every entry of the parent and of the child rebuilds the state recorded for it
    await expectEveryEntryMatches(engine, rec.states, [id, ...children]);
    // And an ISO time stands at the last entry at or before it
    const events = await engine.history(id);
    const third = events[2] as HistoryEvent;
    const byTime = await engine.stateAt(id, new Date(third.at).toISOString());
    expect(byTime.at.at).toBe(third.at);
    expect(byTime.at.id).toBe(Math.max(...events.filter((e) => e.at <= third.at).map((e) => e.id)));
    expect(byTime.position).toBe(events.filter((e) => e.id <= byTime.at.id).length);
    expect(byTime.entries).toBe(events.length);
  });

  it('node ids that are names of Object.prototype (__proto__, constructor, toString) run and rebuild like any other', async () => {
    // Given a chain whose node ids are __proto__, constructor and toString (the id pattern allows them)
    ctx = tempEngine();
    const { engine } = ctx;
    await engine.deploy({
      name: 'tt-proto-ids',
      nodes: [
        { id: 'constructor', type: 'pass', input: '{ "n": 1 }', output: 'first' },
        { id: '__proto__', type: 'pass', input: '{ "n": first.n + 1 }', output: 'second' },
        { id: 'toString', type: 'pass', input: '{ "n": second.n + 1 }', output: 'third' },
      ],
      edges: [
        { from: 'constructor', to: '__proto__' },
        { from: '__proto__', to: 'toString' },
      ],
    });
    const rec = recordStates(engine);
    // When it runs
    const id = await engine.start('tt-proto-ids');
    const done = await runToSettled(engine, id);
    rec.stop();
    // Then it completes with every node's result, and every entry rebuilds the state recorded for it
    expect(done.status).toBe('COMPLETED');
    expect(done.variables).toEqual({ first: { n: 1 }, second: { n: 2 }, third: { n: 3 } });
    expect(done.nodes.map((n) => `${n.id} ${n.status}`).sort()).toEqual(['__proto__ COMPLETED', 'constructor COMPLETED', 'toString COMPLETED']);
    expect(await expectEveryEntryMatches(engine, rec.states, [id])).toBe((await engine.history(id)).length);
  });

  it('a pending change (no entry showed it yet) survives a transaction that records nothing, and the next entry shows it', async () => {
    // Given an instance whose node `a` is READY, and a recorder of the patches by key (0: its pending patch, stored under minus its id)
    ctx = tempEngine();
    const { engine, file } = ctx;
    await engine.deploy({ name: 'tt-pending', nodes: [{ id: 'a', type: 'pass' }] });
    const id = await engine.start('tt-pending');
    const patches = async () => (await rowsIn<{ h: number; p: string }>(file, `SELECT CASE WHEN s.history_id < 0 THEN 0 ELSE s.history_id END AS h, s.patch_json AS p FROM history_state s WHERE s.history_id = ? OR s.history_id IN (SELECT id FROM history WHERE instance_id = ?) ORDER BY s.history_id`, [-id, id])).map((r) => [Number(r.h), JSON.parse(r.p) as unknown]);
    const at = (await engine.history(id)).length;
    // When one transaction starts its attempt without an entry (a pending change), one changes nothing
    // of it (a node it does not have), and one completes it with an entry
    await engine.storage.write((q) => q.nodes.startAttempt({ instanceId: id, nodeId: 'a', now: 5_000_000_000_000 }));
    const pending = await patches();
    expect(pending.filter(([h]) => h === 0)).toHaveLength(1);
    await engine.storage.write((q) => q.nodes.setStatus({ instanceId: id, nodeId: 'no-such-node', status: 'FAILED' }));
    expect(await patches()).toEqual(pending);
    const entry = await engine.storage.write((q) => {
      q.nodes.complete({ instanceId: id, nodeId: 'a', output: 1, now: 5_000_000_000_001, seq: 1 });
      return q.history.append({ instanceId: id, nodeId: 'a', type: 'node.completed', at: 5_000_000_000_001 });
    });
    // Then no pending patch is left, and the entry's patch holds the started attempt and the completion
    const after = await patches();
    expect(after.filter(([h]) => h === 0)).toEqual([]);
    const last = after.find(([h]) => h === entry)?.[1] as { n: { a: Record<string, unknown> } };
    expect(last.n.a).toMatchObject({ s: 'C', a: 1, o: [1] });
    expect((await engine.history(id)).length).toBe(at + 1);
  });

  it("the last entry stands where the instance is now, due times and update time included: a cancelled delay, a forked source", async () => {
    ctx = tempEngine();
    const { engine } = ctx;
    await engine.deploy({
      name: 'tt-nap',
      nodes: [
        { id: 'a', type: 'pass' },
        { id: 'nap', type: 'delay', config: { durationMs: 600_000 } },
        { id: 'b', type: 'pass' },
      ],
      edges: [
        { from: 'a', to: 'nap' },
        { from: 'nap', to: 'b' },
      ],
    });
    // Given an instance waiting in its delay, cancelled
    const id = await engine.start('tt-nap');
    await expect
      .poll(async () => {
        await engine.tick();
        return (await engine.getInstance(id)).nodes.find((n) => n.id === 'nap')?.status;
      })
      .toBe('WAITING');
    expect((await engine.getInstance(id)).nodes.find((n) => n.id === 'nap')?.nextRunAt).toBeGreaterThan(Date.now());
    await engine.cancel(id, {});
    // When it is read now and at its last entry, and again after a copy was forked from it
    const lastOf = async () => (await engine.history(id)).at(-1)!.id;
    const same = async () => {
      const now = await engine.getInstance(id);
      const at = (await engine.stateAt(id, await lastOf())).instance;
      return { now: { updatedAt: now.updatedAt, due: now.nodes.map((n) => [n.id, n.nextRunAt]) }, at: { updatedAt: at.updatedAt, due: at.nodes.map((n) => [n.id, n.nextRunAt]) } };
    };
    // Then the cancelled delay is due at no time either way, and the update times agree
    const cancelled = await same();
    expect(cancelled.at).toEqual(cancelled.now);
    expect([...cancelled.now.due].sort()).toEqual([['a', null], ['b', null], ['nap', null]]);
    const first = (await engine.history(id))[0]!.id;
    await engine.fork(id, first);
    expect((await engine.history(id)).at(-1)?.type).toBe('instance.forked');
    const forked = await same();
    expect(forked.at).toEqual(forked.now);
  });

  it('instance:stateAt answers typed errors: unknown instance, `at` out of range, malformed `at`', async () => {
    ctx = tempEngine();
    const { engine } = ctx;
    await engine.deploy({ name: 'tt-one', nodes: [{ id: 'a', type: 'pass' }] });
    const id = await engine.start('tt-one');
    await runToSettled(engine, id);
    const other = await engine.start('tt-one');
    await runToSettled(engine, other);
    const h = createHandlers(engine);
    const call = (payload: unknown) => dispatch(h, 'instance:stateAt', payload);
    const events = await engine.history(id);
    const first = events[0] as HistoryEvent;
    // a good call answers the entry, its place and the instance
    expect(await call({ id, at: first.id })).toMatchObject({ ok: true, value: { at: { id: first.id }, position: 1, entries: events.length, instance: { id } } });
    expect(await call({ id: 999, at: 1 })).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
    // an entry of another instance, and a time before the first entry
    const otherEntry = (await engine.history(other))[0] as HistoryEvent;
    expect(await call({ id, at: otherEntry.id })).toMatchObject({
      ok: false,
      error: { code: 'INVALID_INPUT', details: { field: 'at', range: { firstId: first.id, entries: events.length } } },
    });
    expect(await call({ id, at: new Date(first.at - 60_000).toISOString() })).toMatchObject({ ok: false, error: { code: 'INVALID_INPUT', details: { field: 'at' } } });
    // malformed: neither an id nor an ISO time
    const bad = await call({ id, at: 'yesterday' });
    expect(bad).toMatchObject({ ok: false, error: { code: 'INVALID_INPUT', details: { field: 'at' } } });
    expect(bad.ok ? '' : bad.error.message).toMatch(/^at: /);
    expect(await call({ id, at: -3 })).toMatchObject({ ok: false, error: { code: 'BAD_REQUEST' } });
  });

  it('fork: a copy of a suspended OTA run from its suspension re-runs only what was not done, and records where it came from', async () => {
    // Given a flaky device's run SUSPENDED at verify, then the device repaired
    ctx = tempEngine();
    const { engine } = ctx;
    await engine.deploy(OTA);
    const device = [...fleet.devices.values()].find((d) => d.fate === 'flaky' && !d.repaired)?.id as string;
    const source = await engine.start('ota-upgrade', { variables: { deviceId: device, baseUrl: fleet.baseUrl, targetVersion: fleet.targetVersion } });
    const suspended = await runToSettled(engine, source);
    expect(suspended.status).toBe('SUSPENDED');
    const entry = (await engine.history(source)).at(-1) as HistoryEvent;
    fleet.repair(device);
    const calls = (endpoint: string) => fleet.calls.filter((c) => c.deviceId === device && c.endpoint === endpoint).length;
    const before = { check: calls('check'), download: calls('download'), flash: calls('flash'), reboot: calls('reboot'), health: calls('health') };
    // When a copy is started from that entry through the API and run to its end
    const h = createHandlers(engine);
    const forked = await dispatch(h, 'instance:fork', { id: source, at: entry.id, actor: 'ops' });
    expect(forked).toMatchObject({ ok: true, value: { status: 'PENDING' } });
    const forkId = (forked as { value: { id: number } }).value.id;
    const copy = await runToSettled(engine, forkId);
    // Then it completes, calling only the health check again: the nodes done before kept their results
    expect(copy.status).toBe('COMPLETED');
    expect(calls('check') - before.check).toBe(0);
    expect(calls('download') - before.download).toBe(0);
    expect(calls('flash') - before.flash).toBe(0);
    expect(calls('reboot') - before.reboot).toBe(0);
    expect(calls('health') - before.health).toBeGreaterThan(0);
    for (const id of ['check', 'download', 'flash', 'reboot', 'settle']) {
      const was = suspended.nodes.find((n) => n.id === id);
      const now = copy.nodes.find((n) => n.id === id);
      expect(now?.status, id).toBe('COMPLETED');
      expect(now?.output, id).toEqual(was?.output);
    }
    expect(copy.nodes.find((n) => n.id === 'verify')).toMatchObject({ status: 'COMPLETED', attempt: 1 });
    expect(copy.variables.health).toMatchObject({ healthy: true });
    expect(copy.workflowId).toBe(suspended.workflowId);
    // And its history says where it came from; the source's says it was copied
    const first = (await engine.history(forkId))[0];
    expect(first).toMatchObject({ type: 'instance.created', actor: 'ops', data: { forkedFrom: { id: source, at: entry.id } } });
    expect((await engine.history(forkId)).filter((e) => e.type === 'node.completed').map((e) => e.nodeId)).toEqual(['verify']);
    expect((await engine.history(source)).at(-1)).toMatchObject({ type: 'instance.forked', data: { forkId, at: entry.id } });
    expect((await engine.getInstance(source)).status).toBe('SUSPENDED');
  });

  it('fork: a copy from mid-run keeps done results (an error edge handled), waits at the approval again and runs the sub-workflow', async () => {
    ctx = tempEngine();
    const { engine } = ctx;
    await engine.deploy({ name: 'fk-child', nodes: [{ id: 'double', type: 'pass', input: '{ "twice": n * 2 }', output: 'result' }] });
    await engine.deploy({
      name: 'fk-parent',
      nodes: [
        { id: 'prepare', type: 'pass', input: '{ "n": 21 }', output: '{ "n": $result.n }' },
        { id: 'flaky', type: 'script', config: { code: "throw new Error('down')" }, retry: { maxAttempts: 2, initialIntervalMs: 5 } },
        { id: 'recover', type: 'pass', input: '{ "why": $error.message }', output: 'recovered' },
        { id: 'ok', type: 'approval', config: { prompt: 'Go on?' } },
        { id: 'call', type: 'subworkflow', config: { workflow: 'fk-child', input: '{ "n": n }' }, output: 'child' },
      ],
      edges: [
        { from: 'prepare', to: 'flaky' },
        { from: 'flaky', to: 'recover', on: 'error' },
        { from: 'recover', to: 'ok' },
        { from: 'ok', to: 'call' },
      ],
    });
    // Given a run that went through to its end
    const source = await engine.start('fk-parent');
    await runToSettled(engine, source);
    await engine.approve(source, 'ok', { approved: true, actor: 'alice' });
    expect((await runToSettled(engine, source)).status).toBe('COMPLETED');
    // When a copy starts from the entry where the approval was requested (by its time)
    const requested = (await engine.history(source)).find((e) => e.type === 'approval.requested') as HistoryEvent;
    const forkId = await engine.fork(source, requested.id, { actor: 'bob' });
    // Then it waits for a person at the approval, with the earlier nodes as they were and not run again
    const waiting = await runToSettled(engine, forkId);
    expect(waiting.status).toBe('WAITING');
    const node = (id: string) => waiting.nodes.find((n) => n.id === id);
    expect(node('prepare')).toMatchObject({ status: 'COMPLETED', output: { n: 21 } });
    expect(node('flaky')).toMatchObject({ status: 'FAILED', attempt: 0 });
    expect(node('recover')).toMatchObject({ status: 'COMPLETED' });
    expect(node('ok')).toMatchObject({ status: 'WAITING' });
    expect(waiting.variables).toEqual((await engine.stateAt(source, requested.id)).instance.variables);
    // And once approved it runs the sub-workflow to the end
    await engine.approve(forkId, 'ok', { approved: true, actor: 'bob' });
    const done = await runToSettled(engine, forkId);
    expect(done.status).toBe('COMPLETED');
    expect(done.variables.child).toMatchObject({ result: { twice: 42 } });
    const types = (await engine.history(forkId)).map((e) => `${e.type}${e.nodeId ? ` ${e.nodeId}` : ''}`);
    expect(types.filter((t) => t.startsWith('node.'))).not.toContain('node.failed flaky');
    expect(types.some((t) => t.includes('prepare') || t.includes('recover') || t.includes('flaky'))).toBe(false);
  });

  it('an instance deleted while a fork or stateAt of it reads it answers NOT_FOUND, and the fork writes nothing', async () => {
    ctx = tempEngine();
    const { engine } = ctx;
    await engine.deploy({ name: 'fk-tiny', nodes: [{ id: 'a', type: 'pass' }] });
    const read = engine.storage.read as { instance: typeof engine.storage.read.instance; stateTimeline: typeof engine.storage.read.stateTimeline };
    const ended = async () => {
      const id = await engine.start('fk-tiny', { variables: { x: 1 } });
      expect((await runToSettled(engine, id)).status).toBe('COMPLETED');
      return { id, at: (await engine.history(id)).at(-1)!.id };
    };
    /** Deletes `id` right after the storage read `which` answered (the delete another caller made in between). */
    const deleteAfter = (which: 'instance' | 'stateTimeline', id: number) => {
      const original = read[which].bind(engine.storage.read) as (...a: unknown[]) => Promise<unknown>;
      (read as Record<string, unknown>)[which] = async (...a: unknown[]) => {
        const r = await original(...a);
        (read as Record<string, unknown>)[which] = original;
        await engine.deleteInstance(id);
        return r;
      };
    };
    // When the source goes after the fork read its state, before the fork's transaction
    const a = await ended();
    deleteAfter('stateTimeline', a.id);
    await expect(engine.fork(a.id, a.at)).rejects.toMatchObject({ code: 'NOT_FOUND', message: `instance ${a.id} does not exist` });
    // Then no copy was made (the transaction rolled back: the copy would be the next id) and the source is gone
    expect(await engine.storage.read.instance(a.id + 1)).toBeUndefined();
    expect(await engine.storage.read.instance(a.id)).toBeUndefined();
    expect(await engine.listInstances({})).toEqual([]);
    // When it goes between the read of the instance and the read of its history
    for (const call of [(id: number, at: number) => engine.fork(id, at), (id: number, at: number) => engine.stateAt(id, at)]) {
      const b = await ended();
      deleteAfter('instance', b.id);
      // Then the answer is NOT_FOUND too, not "the entry is not one of its"
      await expect(call(b.id, b.at)).rejects.toMatchObject({ code: 'NOT_FOUND', message: `instance ${b.id} does not exist` });
    }
  });
});

describe('time travel with two connections writing one instance', () => {
  it('a change another connection made and this one undid is recorded as undone (what one connection knew of the state is dropped when another commits)', async () => {
    const db = tempLocation();
    const a = EngineClass.open(db.location, { pollIntervalMs: 10 });
    const b = EngineClass.open(db.location, { pollIntervalMs: 10 });
    try {
      await a.deploy({ name: 'ask', nodes: [{ id: 'ask', type: 'approval', config: {} }] });
      const id = await a.start('ask');
      const waiting = await runToSettled(a, id);
      expect(waiting.status).toBe('WAITING');
      // b pauses (its own connection), a unpauses: a's last view of the state had no pause either
      await b.pause(id);
      await a.unpause(id);
      const history = await a.history(id);
      const last = history[history.length - 1] as HistoryEvent;
      expect(last.type).toBe('instance.unpaused');
      const paused = history.find((h) => h.type === 'instance.paused') as HistoryEvent;
      expect((await a.stateAt(id, paused.id)).instance.pausedAt).not.toBeNull();
      const now = await a.getInstance(id);
      expect(now.pausedAt ?? null).toBeNull();
      expect(rebuilt((await a.stateAt(id, last.id)).instance)).toEqual(rebuilt(now));
    } finally {
      await a.close();
      await b.close();
      await db.cleanup();
    }
  });
});
