/**
 * Handed cases (../shared/cases/README.md) that fit in one process: C05, C07, C08, C13.
 *
 * Time is a ManualClock driven by `engine.tick()` loops, so every due time and every ordering
 * is exact; real SQLite files in temp dirs throughout.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { EngineError } from '../../../engine/errors';
import { ManualClock } from '../../../engine/runtime/clock';
import type { EngineEvent } from '../../../engine/runtime/events';
import type { Engine, EngineOptions } from '../../../engine/runtime/engine';
import { rowsIn, scheduleRowsIn } from '../../helpers/db-rows';
import { tempEngine } from '../../helpers/temp-engine';
import { nodeStatus, Probe, tickTimes, tickUntil, turn, everyOf } from '../../helpers/probe-nodes';

const T0 = Date.UTC(2026, 2, 1, 12, 0, 0);
const HOUR = 3_600_000;

let ctx: ReturnType<typeof tempEngine> | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  if (ctx) {
    await ctx.engine.stopWorker(200);
    await ctx.close();
  }
  ctx = undefined;
});

function setup(clock: ManualClock, options: EngineOptions = {}): { engine: Engine; probe: Probe } {
  const probe = new Probe();
  ctx = tempEngine({ registry: probe.registry(), clock, ...options });
  return { engine: ctx.engine, probe };
}

async function events(engine: Engine, id: number, type: string, nodeId?: string) {
  return (await engine.history(id)).filter((h) => h.type === type && (nodeId === undefined || h.nodeId === nodeId));
}

async function settle<T>(p: Promise<T>): Promise<{ ok: true; value: T } | { ok: false; error: unknown }> {
  try {
    return { ok: true, value: await p };
  } catch (error) {
    return { ok: false, error };
  }
}

describe('handed cases, in one process', () => {
  it('C05 — the wall clock moves: a backwards jump is recorded and hangs nothing; a forward jump fires each overdue timer exactly once', async () => {
    // given: nap (delay 5 min) → after; one instance waiting in its delay
    const clock = new ManualClock(T0);
    const { engine, probe } = setup(clock);
    const seen: EngineEvent[] = [];
    engine.on((e) => seen.push(e));
    const errors = vi.spyOn(console, 'error');
    await engine.deploy({
      name: 'nap',
      nodes: [
        { id: 'nap', type: 'delay', config: { durationMs: 5 * 60_000 } },
        { id: 'after', type: 'counter' },
      ],
      edges: [{ from: 'nap', to: 'after' }],
    });
    await engine.deploy({ name: 'hold', nodes: [{ id: 'hold', type: 'gate' }] });
    const first = await engine.start('nap');
    await tickUntil(engine, async () => (await nodeStatus(engine, first, 'nap')) === 'WAITING', 'first nap waiting');
    expect(await scheduleRowsIn(ctx!.file, first)).toEqual([{ kind: 'timer', node_id: 'nap', next_run_at: T0 + 5 * 60_000, lease_owner: null }]);
    // and: a handler that is running across both jumps (its lease must neither lapse nor repeat it)
    const holder = await engine.start('hold');
    await tickUntil(engine, () => probe.gateOpen(holder, 'hold'), 'hold running');

    // when: the clock is set 12 hours back and the loop keeps turning
    clock.set(T0 - 12 * HOUR);
    const started = Date.now();
    const worked = await tickTimes(engine, 20);
    const elapsed = Date.now() - started;

    // then: no turn threw or hung, nothing fired early, and the jump is in history and on the event stream
    expect(worked).toHaveLength(20);
    expect(elapsed).toBeLessThan(5000);
    expect(errors).not.toHaveBeenCalled();
    expect((await nodeStatus(engine, first, 'nap'))).toBe('WAITING');
    expect(probe.callsOf('after')).toHaveLength(0);
    const jumps = await rowsIn<{ at: number; data_json: string }>(ctx!.file, `SELECT at, data_json FROM history WHERE type = 'clock.jumped'`);
    expect(jumps.map((j) => [j.at, JSON.parse(j.data_json) as unknown])).toEqual([
      [T0 - 12 * HOUR, { fromMs: T0, toMs: T0 - 12 * HOUR, direction: 'backwards' }],
    ]);
    expect(seen.filter((e) => e.type === 'clock.jumped')).toEqual([{ type: 'clock.jumped', fromMs: T0, toMs: T0 - 12 * HOUR }]);
    // and: the set-back clock runs on past the lease time (30 s) while the handler still runs: no second run
    for (let i = 0; i < 6; i++) {
      clock.advance(10_000);
      await tickTimes(engine, 2);
    }
    expect(probe.callsOf('hold', holder)).toHaveLength(1);
    expect((await events(engine, holder, 'node.recovered'))).toEqual([]);
    expect(await scheduleRowsIn(ctx!.file, holder)).toEqual([
      { kind: 'run', node_id: 'hold', next_run_at: expect.any(Number) as number, lease_owner: engine.owner },
    ]);
    expect((await scheduleRowsIn(ctx!.file, holder))[0]?.next_run_at).toBeGreaterThan(clock.now());

    // given: two more instances start on the set-back clock, so three timers are pending
    const second = await engine.start('nap');
    const third = await engine.start('nap');
    await tickUntil(engine, () => everyOf([second, third], async (i) => (await nodeStatus(engine, i, 'nap')) === 'WAITING'), 'three naps waiting');
    const all = [first, second, third];
    expect(await Promise.all(all.map(async (i) => (await scheduleRowsIn(ctx!.file, i)).map((r) => r.kind)))).toEqual([['timer'], ['timer'], ['timer']]);

    // when: the clock jumps forward to 12 hours past the original time, then keeps going
    clock.set(T0 + 12 * HOUR);
    await tickUntil(engine, () => everyOf(all, async (i) => (await engine.getInstance(i)).status === 'COMPLETED'), 'all three timers fired');
    await tickTimes(engine, 10);
    clock.advance(HOUR);
    await tickTimes(engine, 10);
    probe.release(holder, 'hold');
    await tickUntil(engine, async () => (await engine.getInstance(holder)).status === 'COMPLETED', 'the long handler completes');
    await tickTimes(engine, 3);

    // then: each overdue timer fired exactly once, with no burst of repeats
    for (const id of all) {
      expect(probe.callsOf('after', id)).toHaveLength(1);
      expect((await events(engine, id, 'node.completed', 'nap'))).toHaveLength(1);
      expect((await events(engine, id, 'timer.started', 'nap'))).toHaveLength(1);
      expect(await scheduleRowsIn(ctx!.file, id)).toEqual([]);
    }
    expect(probe.calls.filter((c) => c.nodeId === 'after').map((c) => c.at)).toEqual([T0 + 12 * HOUR, T0 + 12 * HOUR, T0 + 12 * HOUR]);
    expect(probe.callsOf('hold', holder)).toHaveLength(1);
    expect((await events(engine, holder, 'node.recovered'))).toEqual([]);
    expect((await events(engine, holder, 'node.completed', 'hold'))).toHaveLength(1);

    // when: the background poll loop runs while the clock is set back again
    const late = await engine.start('nap');
    await tickUntil(engine, async () => (await nodeStatus(engine, late, 'nap')) === 'WAITING', 'late nap waiting');
    clock.set(T0);
    engine.startWorker();
    await turn(150);
    await engine.stopWorker();

    // then: the loop kept turning without an error, recorded the jump, and fired nothing early
    expect(errors).not.toHaveBeenCalled();
    expect(await rowsIn(ctx!.file, `SELECT count(*) AS n FROM history WHERE type = 'clock.jumped'`)).toEqual([{ n: 2 }]);
    expect((await nodeStatus(engine, late, 'nap'))).toBe('WAITING');
    expect(probe.callsOf('after', late)).toHaveLength(0);
    expect(errors).not.toHaveBeenCalled();
  });

  it('C07 — cancel during a retry wait: the retry row goes in the cancel\'s transaction, a runs once, b never, CANCELLED', async () => {
    // given: a fails once (next attempt in 10 s) → b
    const clock = new ManualClock(T0);
    const { engine, probe } = setup(clock);
    await engine.deploy({
      name: 'retry-wait',
      nodes: [
        { id: 'a', type: 'flaky', config: { failTimes: 1 }, retry: { maxAttempts: 3, initialIntervalMs: 10_000 } },
        { id: 'b', type: 'counter' },
      ],
      edges: [{ from: 'a', to: 'b' }],
    });
    const id = await engine.start('retry-wait');
    await tickUntil(engine, async () => (await nodeStatus(engine, id, 'a')) === 'RETRYING', 'a waiting to retry');
    expect(await scheduleRowsIn(ctx!.file, id)).toEqual([{ kind: 'run', node_id: 'a', next_run_at: T0 + 10_000, lease_owner: null }]);

    // when: cancelled 2 s after the failure
    clock.advance(2000);
    let atCommit: Promise<{ rows: number; status: string }> | undefined;
    engine.on((e) => {
      if (e.type !== 'instance.finished' || e.instanceId !== id) return;
      // Read as the event is emitted, right after the cancel's commit.
      atCommit = Promise.all([scheduleRowsIn(ctx!.file, id), engine.getInstance(id)]).then(([r, i]) => ({ rows: r.length, status: i.status }));
    });
    await engine.cancel(id, { actor: 'ops', expectedVersion: (await engine.getInstance(id)).version });

    // then: the moment the cancel committed, the instance was CANCELLED and its retry row gone
    expect(await atCommit).toEqual({ rows: 0, status: 'CANCELLED' });
    expect(await scheduleRowsIn(ctx!.file, id)).toEqual([]);
    const cancelEvents = (await engine.history(id)).filter((h) => h.type.startsWith('instance.cancel'));
    expect(cancelEvents.map((h) => [h.type, h.at, h.actor])).toEqual([
      ['instance.cancel_requested', T0 + 2000, 'ops'],
      ['instance.cancelled', T0 + 2000, 'ops'],
    ]);

    // when: time runs past the retry time
    clock.set(T0 + 30_000);
    await tickTimes(engine, 10);

    // then
    expect(probe.callsOf('a', id)).toHaveLength(1);
    expect(probe.callsOf('b')).toHaveLength(0);
    expect((await engine.getInstance(id)).status).toBe('CANCELLED');
    expect((await nodeStatus(engine, id, 'a'))).toBe('CANCELLED');
    expect(await scheduleRowsIn(ctx!.file, id)).toEqual([]);
  });

  it('C07 — cancel during a retry wait, race: the retry comes due in the same instant as a cancel carrying the version read before; exactly one wins by the version check', async () => {
    // given: two instances in their retry wait, due 1 s apart; each cancel carries the version read now
    const clock = new ManualClock(T0);
    const { engine, probe } = setup(clock);
    await engine.deploy({
      name: 'retry-race',
      nodes: [
        { id: 'a', type: 'flaky', config: { failTimes: 1 }, retry: { maxAttempts: 3, initialIntervalMs: 10_000 } },
        { id: 'b', type: 'counter' },
      ],
      edges: [{ from: 'a', to: 'b' }],
    });
    const claimFirst = await engine.start('retry-race');
    await tickUntil(engine, async () => (await nodeStatus(engine, claimFirst, 'a')) === 'RETRYING', 'first retrying');
    clock.advance(1000);
    const cancelFirst = await engine.start('retry-race');
    await tickUntil(engine, async () => (await nodeStatus(engine, cancelFirst, 'a')) === 'RETRYING', 'second retrying');
    const v1 = (await engine.getInstance(claimFirst)).version;
    const v2 = (await engine.getInstance(cancelFirst)).version;

    // when: at the first one's due instant, the worker's claim and the cancel are issued together (claim first)
    clock.set(T0 + 10_000);
    const [, cancel1] = await Promise.all([settle(engine.tick()), settle(engine.cancel(claimFirst, { expectedVersion: v1, actor: 'ops' }))]);
    // and: at the second one's due instant, together again (cancel first)
    await tickUntil(engine, async () => (await engine.getInstance(claimFirst)).status === 'COMPLETED', 'first completes');
    clock.set(T0 + 11_000);
    const [cancel2] = await Promise.all([settle(engine.cancel(cancelFirst, { expectedVersion: v2, actor: 'ops' })), settle(engine.tick())]);
    clock.set(T0 + HOUR);
    await tickTimes(engine, 10);

    // then: claim won the first race — the cancel is refused with CONFLICT and the retry ran to the end
    expect(cancel1.ok).toBe(false);
    if (!cancel1.ok) {
      expect(cancel1.error).toBeInstanceOf(EngineError);
      expect((cancel1.error as EngineError).code).toBe('CONFLICT');
    }
    expect(probe.callsOf('a', claimFirst).map((c) => c.attempt)).toEqual([1, 2]);
    expect(probe.callsOf('b', claimFirst)).toHaveLength(1);
    expect((await engine.getInstance(claimFirst)).status).toBe('COMPLETED');
    expect((await events(engine, claimFirst, 'instance.cancel_requested'))).toEqual([]);

    // and: cancel won the second — the retry never ran
    expect(cancel2.ok).toBe(true);
    expect(probe.callsOf('a', cancelFirst).map((c) => c.attempt)).toEqual([1]);
    expect(probe.callsOf('b', cancelFirst)).toHaveLength(0);
    expect((await engine.getInstance(cancelFirst)).status).toBe('CANCELLED');
    expect(await scheduleRowsIn(ctx!.file, cancelFirst)).toEqual([]);
  });

  it('C08 — resume with edited variables continues downstream; the repeated resume is refused by the version check and changes nothing', async () => {
    // given: ask (approval, 60 s timeout, onFailure suspend, output decision) → ship | reject
    const clock = new ManualClock(T0);
    const { engine, probe } = setup(clock);
    await engine.deploy({
      name: 'c08',
      nodes: [
        { id: 'ask', type: 'approval', timeoutMs: 60_000, onFailure: 'suspend', output: 'decision' },
        { id: 'ship', type: 'counter' },
        { id: 'reject', type: 'counter' },
      ],
      edges: [
        { from: 'ask', to: 'ship', when: 'decision.approved = true' },
        { from: 'ask', to: 'reject', when: 'decision.approved = false' },
      ],
    });
    const id = await engine.start('c08', { variables: { order: 'A-17' } });
    await tickUntil(engine, async () => (await nodeStatus(engine, id, 'ask')) === 'WAITING', 'approval waiting');
    expect(await scheduleRowsIn(ctx!.file, id)).toEqual([{ kind: 'timeout', node_id: 'ask', next_run_at: T0 + 60_000, lease_owner: null }]);

    // when: the approval times out
    clock.advance(60_001);
    await tickUntil(engine, async () => (await engine.getInstance(id)).status === 'SUSPENDED', 'suspended at ask');

    // then: the incident shows the step, its error and its attempts
    const suspended = (await engine.getInstance(id));
    expect(suspended.suspension).toMatchObject({ kind: 'incident', nodeId: 'ask', attempts: 1, error: { code: 'TIMEOUT' } });

    // when: a person adds `note` and resumes with skip and result { approved: true }
    const request = {
      action: 'skip' as const,
      result: { approved: true },
      variables: { ...suspended.variables, note: 'approved by phone' },
      actor: 'alice',
      expectedVersion: suspended.version,
    };
    await engine.resume(id, request);
    await tickUntil(engine, async () => (await engine.getInstance(id)).status === 'COMPLETED', 'completed after resume');

    // then: ship ran once, reject never, decision holds the given result
    const done = (await engine.getInstance(id));
    expect(probe.callsOf('ship', id)).toHaveLength(1);
    expect(probe.callsOf('reject')).toHaveLength(0);
    expect(done.variables).toEqual({ order: 'A-17', note: 'approved by phone', decision: { approved: true } });
    // and: history holds the resume with its actor and the variables diff, written in one transaction
    const resumed = (await events(engine, id, 'instance.resumed'));
    expect(resumed).toHaveLength(1);
    expect(resumed[0]).toMatchObject({
      nodeId: 'ask',
      actor: 'alice',
      at: T0 + 60_001,
      data: { action: 'skip', reason: 'incident', result: { approved: true }, diff: { added: { note: 'approved by phone' }, removed: [], changed: {} } },
    });
    const skipped = (await events(engine, id, 'node.skipped_by_hand', 'ask'));
    expect(skipped).toHaveLength(1);
    expect(skipped[0]).toMatchObject({ actor: 'alice', at: T0 + 60_001 });
    expect((skipped[0]?.id ?? 0) - (resumed[0]?.id ?? 0)).toBe(1);

    // when: the same resume is sent again, with the version read before
    const rowBefore = await rowsIn(ctx!.file, 'SELECT * FROM instance WHERE id = ?', [id]);
    const historyBefore = (await engine.history(id)).length;
    const again = await settle(engine.resume(id, request));

    // then: refused by the version check, and nothing changed
    expect(again.ok).toBe(false);
    if (!again.ok) expect((again.error as EngineError).code).toBe('CONFLICT');
    expect(await rowsIn(ctx!.file, 'SELECT * FROM instance WHERE id = ?', [id])).toEqual(rowBefore);
    expect((await engine.history(id))).toHaveLength(historyBefore);
    await tickTimes(engine, 3);
    expect(probe.callsOf('ship', id)).toHaveLength(1);
  });

  it('C13 — a running instance keeps its version: it finishes along version 1\'s graph and shows version 1', async () => {
    // given: v1 a → wait (delay) → b; an instance waiting in the delay
    const clock = new ManualClock(T0);
    const { engine, probe } = setup(clock);
    const v1 = await engine.deploy({
      name: 'c13',
      nodes: [
        { id: 'a', type: 'counter' },
        { id: 'wait', type: 'delay', config: { durationMs: 60_000 } },
        { id: 'b', type: 'counter' },
      ],
      edges: [
        { from: 'a', to: 'wait' },
        { from: 'wait', to: 'b' },
      ],
    });
    const id = await engine.start('c13');
    await tickUntil(engine, async () => (await nodeStatus(engine, id, 'wait')) === 'WAITING', 'waiting in the delay');

    // when: v2 with a different next node (c) is saved, then the delay ends
    const v2 = await engine.deploy({
      name: 'c13',
      nodes: [
        { id: 'a', type: 'counter' },
        { id: 'wait', type: 'delay', config: { durationMs: 60_000 } },
        { id: 'c', type: 'counter' },
      ],
      edges: [
        { from: 'a', to: 'wait' },
        { from: 'wait', to: 'c' },
      ],
    });
    clock.advance(60_000);
    await tickUntil(engine, async () => (await engine.getInstance(id)).status === 'COMPLETED', 'instance completed');

    // then: it ran v1's graph and the monitor shows version 1
    expect([v1.version, v2.version, v2.created]).toEqual([1, 2, true]);
    expect(probe.callsOf('b', id)).toHaveLength(1);
    expect(probe.callsOf('c')).toHaveLength(0);
    const inst = (await engine.getInstance(id));
    expect(inst.workflowVersion).toBe(1);
    expect(inst.workflowId).toBe(v1.workflowId);
    expect(inst.nodes.map((n) => n.id).sort()).toEqual(['a', 'b', 'wait']);
    expect((await engine.listInstances({ workflow: 'c13' })).find((i) => i.id === id)?.workflowVersion).toBe(1);
    // and: a new instance runs version 2
    const next = await engine.start('c13');
    await tickUntil(engine, async () => (await nodeStatus(engine, next, 'wait')) === 'WAITING', 'v2 instance waiting');
    clock.advance(60_000);
    await tickUntil(engine, async () => (await engine.getInstance(next)).status === 'COMPLETED', 'v2 instance completed');
    expect((await engine.getInstance(next)).workflowVersion).toBe(2);
    expect(probe.callsOf('c', next)).toHaveLength(1);
    expect(probe.callsOf('b', next)).toHaveLength(0);
  });
});
