/**
 * DESIGN.md section 3 "Rules pinned", one test per rule, plus the DSL behaviours the runtime
 * owes (error edges, joins, deadlines, incidents and resume, approvals, versions, inputSchema,
 * idempotency keys). Real SQLite files in temp dirs; handlers are the probe types of
 * test/helpers/probe-nodes.ts, whose failures are counted, never random.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { EngineError } from '../../../engine/errors';
import { backoffDelayMs, DEFAULT_RETRY } from '../../../engine/dsl/schema';
import { ManualClock } from '../../../engine/runtime/clock';
import { Engine, type EngineOptions } from '../../../engine/runtime/engine';
import { runToSettled, tempEngine, tempLocation } from '../../helpers/temp-engine';
import { rowsIn, scheduleRowsIn } from '../../helpers/db-rows';
import { nodeStatus, Probe, tickTimes, tickUntil, turn, everyOf } from '../../helpers/probe-nodes';

const T0 = Date.UTC(2026, 0, 1, 9, 0, 0);

let ctx: ReturnType<typeof tempEngine> | undefined;
afterEach(async () => {
  if (ctx) {
    await ctx.engine.stopWorker(200);
    await ctx.close();
  }
  ctx = undefined;
});

/** A fresh engine on a new file with the probe types registered. */
function setup(options: EngineOptions = {}): { engine: Engine; probe: Probe } {
  const probe = new Probe();
  ctx = tempEngine({ registry: probe.registry(), ...options });
  return { engine: ctx.engine, probe };
}

type HistoryEvent = Awaited<ReturnType<Engine['history']>>[number];

async function events(engine: Engine, id: number, type: string, nodeId?: string): Promise<HistoryEvent[]> {
  return (await engine.history(id)).filter((h) => h.type === type && (nodeId === undefined || h.nodeId === nodeId));
}

function dataOf<T>(h: HistoryEvent | undefined): T {
  if (!h) throw new Error('no such history event');
  return h.data as T;
}

async function expectEngineError(p: Promise<unknown>, code: string): Promise<EngineError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(EngineError);
    expect((err as EngineError).code).toBe(code);
    return err as EngineError;
  }
  throw new Error(`expected EngineError ${code}, but it succeeded`);
}

describe('DESIGN.md "Rules pinned"', () => {
  it('retry.maxAttempts counts every attempt, the first included: 1 = no retry, 3 = exactly three handler calls', async () => {
    // given: one node allowed a single attempt, one allowed three, both always failing
    const { engine, probe } = setup();
    await engine.deploy({ name: 'once', nodes: [{ id: 'f', type: 'flaky', retry: { maxAttempts: 1, initialIntervalMs: 0 } }] });
    await engine.deploy({ name: 'thrice', nodes: [{ id: 'f', type: 'flaky', retry: { maxAttempts: 3, initialIntervalMs: 0 } }] });
    await engine.deploy({
      name: 'thrice-then-ok',
      nodes: [{ id: 'f', type: 'flaky', config: { failTimes: 2 }, retry: { maxAttempts: 3, initialIntervalMs: 0 } }],
    });

    // when
    const once = await engine.start('once');
    const thrice = await engine.start('thrice');
    const ok = await engine.start('thrice-then-ok');
    const [a, b, c] = [await runToSettled(engine, once), await runToSettled(engine, thrice), await runToSettled(engine, ok)];

    // then: 1 → one call, no retry; 3 → exactly three calls, numbered 1..3
    expect(probe.callsOf('f', once).map((x) => x.attempt)).toEqual([1]);
    expect(a.status).toBe('FAILED');
    expect(a.nodes[0]).toMatchObject({ id: 'f', status: 'FAILED', attempt: 1, maxAttempts: 1 });
    expect((await events(engine, once, 'node.failed')).map((h) => dataOf<{ willRetry: boolean }>(h).willRetry)).toEqual([false]);

    expect(probe.callsOf('f', thrice).map((x) => x.attempt)).toEqual([1, 2, 3]);
    expect(b.status).toBe('FAILED');
    expect(b.nodes[0]).toMatchObject({ status: 'FAILED', attempt: 3, maxAttempts: 3 });
    const failed = (await events(engine, thrice, 'node.failed'));
    expect(failed.map((h) => [h.attempt, dataOf<{ willRetry: boolean }>(h).willRetry])).toEqual([
      [1, true],
      [2, true],
      [3, false],
    ]);
    const dead = (await engine.metrics()).deadLetters.filter((d) => d.instance_id === thrice);
    expect(dead).toHaveLength(1);
    expect(dead[0]).toMatchObject({ node_id: 'f', attempts: 3 });

    expect(probe.callsOf('f', ok).map((x) => x.attempt)).toEqual([1, 2, 3]);
    expect(c.status).toBe('COMPLETED');
  });

  it('backoff: the delay before attempt n+1 is min(initialIntervalMs × backoffCoefficient^(n−1), maxIntervalMs), without overflow, and jitter only shortens it', async () => {
    // given: a ManualClock and a node that fails four times under 1 s × 3^(n−1), capped at 5 s
    const clock = new ManualClock(T0);
    const { engine, probe } = setup({ clock });
    const policy = { maxAttempts: 5, initialIntervalMs: 1000, backoffCoefficient: 3, maxIntervalMs: 5000 };
    await engine.deploy({ name: 'backoff', nodes: [{ id: 'f', type: 'flaky', config: { failTimes: 4 }, retry: policy }] });
    const id = await engine.start('backoff');
    const formula = (n: number) => Math.min(policy.initialIntervalMs * policy.backoffCoefficient ** (n - 1), policy.maxIntervalMs);
    expect([1, 2, 3, 4].map(formula)).toEqual([1000, 3000, 5000, 5000]);

    for (let n = 1; n <= 4; n++) {
      // when: attempt n fails
      await tickUntil(engine, async () => probe.callsOf('f', id).length === n && (await nodeStatus(engine, id, 'f')) === 'RETRYING', `attempt ${n} failed`);
      const failedAt = clock.now();
      const expectedAt = failedAt + formula(n);

      // then: the RETRYING node, its history and its schedule row all carry the formula's time
      const last = (await events(engine, id, 'node.failed')).at(-1);
      expect(last?.attempt).toBe(n);
      expect(dataOf<{ nextAttemptAt: number; willRetry: boolean }>(last)).toMatchObject({ willRetry: true, nextAttemptAt: expectedAt });
      expect((await engine.getInstance(id)).nodes[0]).toMatchObject({ status: 'RETRYING', attempt: n, nextRunAt: expectedAt });
      expect(await scheduleRowsIn(ctx!.file, id)).toEqual([{ kind: 'run', node_id: 'f', next_run_at: expectedAt, lease_owner: null }]);

      // and: one millisecond early nothing runs; at the due time attempt n+1 does
      clock.set(expectedAt - 1);
      await tickTimes(engine, 3);
      expect(probe.callsOf('f', id)).toHaveLength(n);
      clock.set(expectedAt);
    }
    await tickUntil(engine, async () => (await engine.getInstance(id)).status === 'COMPLETED', 'completed on attempt 5');
    expect(probe.callsOf('f', id).map((c) => c.at - T0)).toEqual([0, 1000, 4000, 9000, 14000]);

    // given: the same shape with jitter 0.5, on several instances
    const jittered = { maxAttempts: 4, initialIntervalMs: 1000, backoffCoefficient: 2, maxIntervalMs: 3000, jitter: 0.5 };
    await engine.deploy({ name: 'jitter', nodes: [{ id: 'j', type: 'flaky', retry: jittered }] });
    const ids = await engine.startMany('jitter', [{}, {}, {}, {}, {}, {}]);
    // when: every attempt runs out (the clock moves past the longest possible delay each round)
    for (let round = 0; round < 4; round++) {
      await tickUntil(engine, () => ids.every((i) => probe.callsOf('j', i).length === round + 1), `jitter round ${round + 1}`);
      await tickTimes(engine, 2);
      clock.advance(jittered.maxIntervalMs);
    }
    await tickUntil(engine, () => everyOf(ids, async (i) => (await engine.getInstance(i)).status === 'FAILED'), 'jittered instances failed');
    // then: each delay lies in [formula × (1 − jitter), formula]
    const jFormula = (n: number) => Math.min(1000 * 2 ** (n - 1), 3000);
    for (const i of ids) {
      const retries = (await events(engine, i, 'node.failed')).filter((h) => dataOf<{ willRetry: boolean }>(h).willRetry);
      expect(retries.map((h) => h.attempt)).toEqual([1, 2, 3]);
      for (const h of retries) {
        const delay = dataOf<{ nextAttemptAt: number }>(h).nextAttemptAt - h.at;
        const full = jFormula(h.attempt ?? 0);
        expect(delay).toBeLessThanOrEqual(full);
        expect(delay).toBeGreaterThanOrEqual(full * (1 - jittered.jitter));
      }
    }

    // and: no n overflows the formula (the cap holds at attempt 10,000 with coefficient 100)
    const steep = { ...DEFAULT_RETRY, initialIntervalMs: 1000, backoffCoefficient: 100, maxIntervalMs: 2_592_000_000 };
    expect(backoffDelayMs(steep, 10_000)).toBe(2_592_000_000);
    expect(backoffDelayMs(steep, Number.MAX_SAFE_INTEGER)).toBe(2_592_000_000);
    expect(backoffDelayMs(steep, 3)).toBe(10_000_000);

    // given: a coefficient far above 100 (Temporal accepts any ≥ 1), deployed and run
    const huge = { maxAttempts: 4, initialIntervalMs: 10, backoffCoefficient: 1e308, maxIntervalMs: 7000 };
    await engine.deploy({ name: 'huge', nodes: [{ id: 'h', type: 'flaky', config: { failTimes: 3 }, retry: huge }] });
    const hid = await engine.start('huge');
    // when: attempts 1…3 fail, then: the first waits 10 ms, the others the cap
    const waited: number[] = [];
    for (let n = 1; n <= 3; n++) {
      await tickUntil(engine, async () => probe.callsOf('h', hid).length === n && (await nodeStatus(engine, hid, 'h')) === 'RETRYING', `huge attempt ${n} failed`);
      const last = (await events(engine, hid, 'node.failed', 'h')).at(-1);
      waited.push(dataOf<{ nextAttemptAt: number }>(last).nextAttemptAt - clock.now());
      clock.advance(waited.at(-1)!);
    }
    expect(waited).toEqual([10, 7000, 7000]);
    await tickUntil(engine, async () => (await engine.getInstance(hid)).status === 'COMPLETED', 'huge completed on attempt 4');
  });

  it('a timed-out attempt is a failed attempt: it counts, and its handler is aborted through its AbortSignal', async () => {
    // given: a handler that never answers, cut at 50 ms, two attempts
    const { engine, probe } = setup();
    await engine.deploy({
      name: 'hung',
      nodes: [
        { id: 'hang', type: 'stuck', timeoutMs: 50, retry: { maxAttempts: 2, initialIntervalMs: 0 } },
        { id: 'next', type: 'counter' },
      ],
      edges: [{ from: 'hang', to: 'next' }],
    });

    // when
    const id = await engine.start('hung');
    const inst = await runToSettled(engine, id);

    // then: two attempts, each aborted with TIMEOUT, each recorded as a failed attempt
    expect(probe.callsOf('hang', id).map((c) => c.attempt)).toEqual([1, 2]);
    expect(probe.aborts.filter((a) => a.instanceId === id)).toEqual([
      { instanceId: id, nodeId: 'hang', attempt: 1, reason: 'TIMEOUT' },
      { instanceId: id, nodeId: 'hang', attempt: 2, reason: 'TIMEOUT' },
    ]);
    const failed = (await events(engine, id, 'node.failed', 'hang'));
    expect(failed.map((h) => [h.attempt, dataOf<{ error: { code: string }; willRetry: boolean }>(h).error.code, dataOf<{ willRetry: boolean }>(h).willRetry])).toEqual([
      [1, 'TIMEOUT', true],
      [2, 'TIMEOUT', false],
    ]);
    expect(inst.status).toBe('FAILED');
    expect(inst.nodes.find((n) => n.id === 'hang')).toMatchObject({ status: 'FAILED', attempt: 2 });
    expect(probe.callsOf('next')).toHaveLength(0);
  });

  it('a `when` that reads a missing variable is false (the edge is not taken) and history says why', async () => {
    // given: a → b only when order.total > 100, and a → c always; no `order` variable
    const { engine, probe } = setup();
    await engine.deploy({
      name: 'missing-var',
      nodes: [
        { id: 'a', type: 'counter' },
        { id: 'b', type: 'counter' },
        { id: 'c', type: 'counter' },
      ],
      edges: [
        { from: 'a', to: 'b', when: 'order.total > 100' },
        { from: 'a', to: 'c' },
      ],
    });

    // when
    const id = await engine.start('missing-var', { variables: { customer: 'x' } });
    const inst = await runToSettled(engine, id);

    // then: b never runs, history names the missing variable, the rest completes
    expect(inst.status).toBe('COMPLETED');
    expect(probe.callsOf('b')).toHaveLength(0);
    expect(probe.callsOf('c', id)).toHaveLength(1);
    expect((await nodeStatus(engine, id, 'b'))).toBe('SKIPPED');
    const notTaken = (await events(engine, id, 'edge.not_taken', 'a'));
    expect(notTaken).toHaveLength(1);
    expect(notTaken[0]?.data).toEqual({ edge: 'a->b', reason: 'reads missing variable "order"' });
  });

  it('a `when` that yields a non-boolean, or does not evaluate, fails the source node with EXPRESSION_ERROR', async () => {
    // given: an edge whose `when` yields a number, and one whose `when` throws at evaluation
    const { engine, probe } = setup();
    await engine.deploy({
      name: 'non-boolean',
      nodes: [
        { id: 'a', type: 'counter', retry: { maxAttempts: 3, initialIntervalMs: 0 } },
        { id: 'b', type: 'counter' },
      ],
      edges: [{ from: 'a', to: 'b', when: 'count' }],
    });
    await engine.deploy({
      name: 'no-eval',
      nodes: [
        { id: 'a', type: 'counter', retry: { maxAttempts: 3, initialIntervalMs: 0 } },
        { id: 'b', type: 'counter' },
      ],
      edges: [{ from: 'a', to: 'b', when: "$number(code) > 1" }],
    });

    // when
    const num = await engine.start('non-boolean', { variables: { count: 3 } });
    const bad = await engine.start('no-eval', { variables: { code: 'not a number' } });
    const [i1, i2] = [await runToSettled(engine, num), await runToSettled(engine, bad)];

    // then: the source node fails once (expression errors are not retried), nothing downstream runs
    for (const [inst, id] of [
      [i1, num],
      [i2, bad],
    ] as const) {
      expect(inst.status).toBe('FAILED');
      const a = inst.nodes.find((n) => n.id === 'a');
      expect(a?.status).toBe('FAILED');
      expect(a?.error).toMatchObject({ code: 'EXPRESSION_ERROR', retryable: false });
      expect(probe.callsOf('a', id)).toHaveLength(1);
      expect(probe.callsOf('b', id)).toHaveLength(0);
    }
    expect((i1.nodes.find((n) => n.id === 'a')?.error as { message: string }).message).toMatch(/must yield true or false, got number 3/);
  });

  it('after a node fails the instance no new node starts, a node already running finishes and is recorded, then compensation runs in reverse completion order', async () => {
    // given: c1 → c2 → boom → after, and a slow parallel branch slow → late; c1, c2, slow compensate
    const clock = new ManualClock(T0);
    const { engine, probe } = setup({ clock });
    const undo = { type: 'undo' };
    await engine.deploy({
      name: 'fail-while-running',
      nodes: [
        { id: 'c1', type: 'counter', compensate: undo },
        { id: 'c2', type: 'counter', compensate: undo },
        { id: 'boom', type: 'flaky', config: { retryable: false } },
        { id: 'after', type: 'counter', compensate: undo },
        { id: 'slow', type: 'gate', compensate: undo },
        { id: 'late', type: 'counter' },
      ],
      edges: [
        { from: 'c1', to: 'c2' },
        { from: 'c2', to: 'boom' },
        { from: 'boom', to: 'after' },
        { from: 'slow', to: 'late' },
      ],
    });
    const id = await engine.start('fail-while-running');

    // when: boom fails while slow is still running
    await tickUntil(engine, async () => (await nodeStatus(engine, id, 'boom')) === 'FAILED', 'boom failed');
    const whileFailing = (await engine.getInstance(id));
    expect(whileFailing.status).toBe('COMPENSATING');
    expect((await nodeStatus(engine, id, 'slow'))).toBe('RUNNING');
    expect((await nodeStatus(engine, id, 'after'))).toBe('CANCELLED');
    await tickTimes(engine, 3);
    expect(probe.calls.filter((c) => c.type === 'undo')).toHaveLength(0); // waits for the running node
    probe.release(id, 'slow');
    await tickUntil(engine, async () => (await engine.getInstance(id)).status === 'FAILED', 'instance FAILED');

    // then: no node started after the failure; slow finished and was recorded
    expect(probe.callsOf('after')).toHaveLength(0);
    expect(probe.callsOf('late')).toHaveLength(0);
    const history = (await engine.history(id));
    const failingAt = history.findIndex((h) => h.type === 'instance.failing');
    const slowDone = history.findIndex((h) => h.type === 'node.completed' && h.nodeId === 'slow');
    expect(failingAt).toBeGreaterThan(-1);
    expect(slowDone).toBeGreaterThan(failingAt);
    expect(history.slice(failingAt).filter((h) => h.type === 'node.completed').map((h) => h.nodeId)).toEqual(['slow']);
    // and: compensation ran in reverse completion order, as history records both
    const completionOrder = history.filter((h) => h.type === 'node.completed').map((h) => h.nodeId);
    expect(completionOrder).toEqual(['c1', 'c2', 'slow']);
    const compensationOrder = history.filter((h) => h.type === 'compensation.completed').map((h) => h.nodeId);
    expect(compensationOrder).toEqual([...completionOrder].reverse());
    expect(probe.calls.filter((c) => c.type === 'undo').map((c) => c.nodeId)).toEqual(['slow', 'c2', 'c1']);
    const final = (await engine.getInstance(id));
    expect(final.error).toMatchObject({ code: 'HANDLER_ERROR' });
    expect(final.nodes.filter((n) => n.status === 'COMPENSATED').map((n) => n.id).sort()).toEqual(['c1', 'c2', 'slow']);
  });

  it('after a node fails the instance, a running node that then fails or asks to wait is recorded, and neither retries nor waits', async () => {
    // given: c1 → boom; two parallel nodes still running when boom fails: one will fail with
    // retries left, one will ask to wait like a delay
    const clock = new ManualClock(T0);
    const { engine, probe } = setup({ clock });
    await engine.deploy({
      name: 'fail-while-running-2',
      nodes: [
        { id: 'c1', type: 'counter', compensate: { type: 'undo' } },
        { id: 'boom', type: 'flaky', config: { retryable: false } },
        { id: 'failing', type: 'gate', config: { fail: true }, retry: { maxAttempts: 3, initialIntervalMs: 0 } },
        { id: 'napping', type: 'gate', config: { waitMs: 60_000 } },
      ],
      edges: [{ from: 'c1', to: 'boom' }],
    });
    const id = await engine.start('fail-while-running-2');
    await tickUntil(engine, async () => (await nodeStatus(engine, id, 'boom')) === 'FAILED', 'boom failed');
    expect((await engine.getInstance(id)).status).toBe('COMPENSATING');

    // when: both running nodes finish after the failure
    probe.release(id, 'failing');
    probe.release(id, 'napping');
    await tickUntil(engine, async () => (await engine.getInstance(id)).status === 'FAILED', 'instance FAILED');
    clock.advance(3_600_000);
    await tickTimes(engine, 3);

    // then: each end is in history; no retry and no timer was started; compensation ran after both
    expect(probe.callsOf('failing', id)).toHaveLength(1);
    expect((await events(engine, id, 'node.failed', 'failing')).map((h) => [h.attempt, dataOf<{ willRetry: boolean; error: { message: string } }>(h)])).toEqual([
      [1, { willRetry: false, durationMs: expect.any(Number), error: { code: 'HANDLER_ERROR', message: 'gate failing failed on release', details: { name: 'Error' }, retryable: true } }],
    ]);
    expect((await events(engine, id, 'node.cancelled', 'napping'))).toHaveLength(1);
    expect((await events(engine, id, 'timer.started'))).toEqual([]);
    const inst = (await engine.getInstance(id));
    expect(inst.nodes.find((n) => n.id === 'failing')).toMatchObject({ status: 'FAILED', error: { code: 'HANDLER_ERROR' } });
    expect(inst.nodes.find((n) => n.id === 'napping')?.status).toBe('CANCELLED');
    const types = (await engine.history(id)).map((h) => `${h.type}:${h.nodeId ?? ''}`);
    expect(types.indexOf('compensation.completed:c1')).toBeGreaterThan(types.indexOf('node.failed:failing'));
    expect(types.indexOf('compensation.completed:c1')).toBeGreaterThan(types.indexOf('node.cancelled:napping'));
    expect(await scheduleRowsIn(ctx!.file, id)).toEqual([]);
  });

  it('a compensation that fails after its retries stops the chain there and SUSPENDs the instance; resuming continues the chain', async () => {
    // given: a → b → c; c fails; b's compensation fails twice (its two attempts), a's would work
    const { engine, probe } = setup();
    await engine.deploy({
      name: 'bad-undo',
      nodes: [
        { id: 'a', type: 'counter', compensate: { type: 'undo' } },
        { id: 'b', type: 'counter', compensate: { type: 'undo', retry: { maxAttempts: 2, initialIntervalMs: 0 } } },
        { id: 'c', type: 'flaky', config: { retryable: false } },
      ],
      edges: [
        { from: 'a', to: 'b' },
        { from: 'b', to: 'c' },
      ],
    });
    probe.failingUndo.add('b');

    // when
    const id = await engine.start('bad-undo');
    const suspended = await runToSettled(engine, id);

    // then: the chain stopped at b (a untouched) and the instance is SUSPENDED showing why
    expect(suspended.status).toBe('SUSPENDED');
    expect(suspended.suspension).toMatchObject({ kind: 'compensation', nodeId: 'b', attempts: 2, error: { code: 'HANDLER_ERROR' } });
    const undos = () => probe.calls.filter((c) => c.type === 'undo').map((c) => `${c.nodeId}#${c.attempt}`);
    expect(undos()).toEqual(['b#1', 'b#2']);
    expect((await events(engine, id, 'compensation.failed', 'b')).map((h) => dataOf<{ willRetry: boolean }>(h).willRetry)).toEqual([true, false]);

    // when: the undo is fixed and a person resumes with retry
    probe.failingUndo.delete('b');
    await engine.resume(id, { action: 'retry', actor: 'ops@example', expectedVersion: suspended.version });
    const done = await runToSettled(engine, id);

    // then: the chain continues from b to a and the instance ends FAILED
    expect(undos()).toEqual(['b#1', 'b#2', 'b#1', 'a#1']);
    expect(done.status).toBe('FAILED');
    expect((await events(engine, id, 'compensation.completed')).map((h) => h.nodeId)).toEqual(['b', 'a']);
    const resumed = (await events(engine, id, 'instance.resumed'));
    expect(resumed).toHaveLength(1);
    expect(resumed[0]).toMatchObject({ actor: 'ops@example', nodeId: 'b', data: { action: 'retry', reason: 'compensation' } });
  });

  it('retry of a FAILED instance re-runs the failure that failed it, not one an error edge handled', async () => {
    // given: x fails and its error edge takes h; then y fails with no error edge and fails the instance
    const { engine, probe } = setup();
    await engine.deploy({
      name: 'two-failures',
      nodes: [
        { id: 'x', type: 'flaky', config: { retryable: false } },
        { id: 'h', type: 'counter' },
        { id: 'y', type: 'flaky', config: { retryable: false, failTimes: 1 } },
      ],
      edges: [
        { from: 'x', to: 'h', on: 'error' },
        { from: 'h', to: 'y' },
      ],
    });
    const id = await engine.start('two-failures');
    const failed = await runToSettled(engine, id);
    const states = (i: typeof failed) => Object.fromEntries(i.nodes.map((n) => [n.id, [n.status, n.attempt]]));
    expect(failed.status).toBe('FAILED');
    expect(states(failed)).toEqual({ x: ['FAILED', 1], h: ['COMPLETED', 1], y: ['FAILED', 1] });

    // when
    await engine.retry(id, { actor: 'ops', expectedVersion: failed.version });
    const done = await runToSettled(engine, id);

    // then: only y ran again (and passed); x's handled failure and h's run stand
    expect(done.status).toBe('COMPLETED');
    expect(probe.calls.map((c) => c.nodeId).sort()).toEqual(['h', 'x', 'y', 'y']);
    expect(states(done)).toEqual({ x: ['FAILED', 1], h: ['COMPLETED', 1], y: ['COMPLETED', 2] });
    expect(dataOf<{ nodes: string[] }>((await events(engine, id, 'instance.retried'))[0] as HistoryEvent).nodes).toEqual(['y']);
  });

  it('a failed compensation resumed with fail stops the chain: FAILED, and no node is left COMPENSATING', async () => {
    // given: as above, b's compensation fails for good and the instance is SUSPENDED on it
    const { engine, probe } = setup();
    await engine.deploy({
      name: 'bad-undo-stop',
      nodes: [
        { id: 'a', type: 'counter', compensate: { type: 'undo' } },
        { id: 'b', type: 'counter', compensate: { type: 'undo', retry: { maxAttempts: 1 } } },
        { id: 'c', type: 'flaky', config: { retryable: false } },
      ],
      edges: [
        { from: 'a', to: 'b' },
        { from: 'b', to: 'c' },
      ],
    });
    probe.failingUndo.add('b');
    const id = await engine.start('bad-undo-stop');
    const suspended = await runToSettled(engine, id);
    expect(suspended.status).toBe('SUSPENDED');

    // when: a person stops the compensation
    await engine.resume(id, { action: 'fail', actor: 'ops@example', expectedVersion: suspended.version });
    const done = (await engine.getInstance(id));

    // then: FAILED; b (its undo failed) and a (never undone) stand COMPLETED; nothing is scheduled
    expect(done.status).toBe('FAILED');
    expect(done.nodes.map((n) => [n.id, n.status])).toEqual([
      ['a', 'COMPLETED'],
      ['b', 'COMPLETED'],
      ['c', 'FAILED'],
    ]);
    expect(probe.calls.filter((c) => c.type === 'undo').map((c) => c.nodeId)).toEqual(['b']);
    expect(await rowsIn(ctx!.file, `SELECT count(*) AS n FROM schedule WHERE instance_id = ?`, [id])).toEqual([{ n: 0 }]);
  });

  it('cancel removes pending timers and retries at once, aborts running handlers, starts nothing downstream, and ends CANCELLED, compensating only when asked', async () => {
    // given: after `done` (compensable), a timer, a retry wait and a running handler, each with a successor
    const clock = new ManualClock(T0);
    const { engine, probe } = setup({ clock });
    await engine.deploy({
      name: 'cancel-me',
      nodes: [
        { id: 'done', type: 'counter', compensate: { type: 'undo' } },
        { id: 't', type: 'delay', config: { durationMs: 60_000 } },
        { id: 'r', type: 'flaky', retry: { maxAttempts: 5, initialIntervalMs: 10_000 } },
        { id: 's', type: 'stuck' },
        { id: 'afterT', type: 'counter' },
        { id: 'afterR', type: 'counter' },
        { id: 'afterS', type: 'counter' },
      ],
      edges: [
        { from: 'done', to: 't' },
        { from: 'done', to: 'r' },
        { from: 'done', to: 's' },
        { from: 't', to: 'afterT' },
        { from: 'r', to: 'afterR' },
        { from: 's', to: 'afterS' },
      ],
    });
    const busy = (id: number) => async () =>
      (await nodeStatus(engine, id, 't')) === 'WAITING' && (await nodeStatus(engine, id, 'r')) === 'RETRYING' && (await nodeStatus(engine, id, 's')) === 'RUNNING';
    const plain = await engine.start('cancel-me');
    const withComp = await engine.start('cancel-me');
    await tickUntil(engine, async () => (await busy(plain)()) && (await busy(withComp)()), 'both instances waiting, retrying and running');
    expect((await scheduleRowsIn(ctx!.file, plain)).map((r) => r.kind).sort()).toEqual(['run', 'run', 'timer']);

    // when: the first is cancelled without compensation
    await engine.cancel(plain, { actor: 'ops' });

    // then: at once, no schedule row is left, the handler saw its abort, and it is CANCELLED
    expect(await scheduleRowsIn(ctx!.file, plain)).toEqual([]);
    expect((await engine.getInstance(plain)).status).toBe('CANCELLED');
    expect(probe.aborts).toEqual([{ instanceId: plain, nodeId: 's', attempt: 1, reason: 'CANCELLED' }]);
    expect((await events(engine, plain, 'instance.cancelled'))).toHaveLength(1);
    expect((await events(engine, plain, 'instance.cancel_requested'))[0]).toMatchObject({ actor: 'ops', data: { compensate: false } });

    // when: the second is cancelled with compensation
    await engine.cancel(withComp, { compensate: true, actor: 'ops' });
    await tickUntil(engine, async () => (await engine.getInstance(withComp)).status === 'CANCELLED', 'compensated cancel ends');

    // and: time runs far past every timer and retry
    clock.advance(3_600_000);
    await tickTimes(engine, 5);

    // then: nothing downstream ever started; only the second was compensated
    for (const n of ['afterT', 'afterR', 'afterS']) expect(probe.callsOf(n)).toHaveLength(0);
    expect(probe.callsOf('r', plain)).toHaveLength(1);
    expect(probe.callsOf('r', withComp)).toHaveLength(1);
    expect(probe.calls.filter((c) => c.type === 'undo').map((c) => [c.instanceId, c.nodeId])).toEqual([[withComp, 'done']]);
    expect(probe.aborts.map((a) => [a.instanceId, a.reason])).toEqual([
      [plain, 'CANCELLED'],
      [withComp, 'CANCELLED'],
    ]);
    for (const id of [plain, withComp]) {
      const inst = (await engine.getInstance(id));
      expect(inst.status).toBe('CANCELLED');
      expect(await scheduleRowsIn(ctx!.file, id)).toEqual([]);
      expect(inst.nodes.filter((n) => ['t', 'r', 's', 'afterT', 'afterR', 'afterS'].includes(n.id)).every((n) => n.status === 'CANCELLED')).toBe(true);
    }
    expect((await nodeStatus(engine, plain, 'done'))).toBe('COMPLETED');
    expect((await nodeStatus(engine, withComp, 'done'))).toBe('COMPENSATED');
  });

  it('an instance stays on the workflow version it started with; saving makes a new version', async () => {
    // given: v1 a → ask → b, an instance waiting at ask
    const { engine, probe } = setup();
    const v1 = await engine.deploy({
      name: 'versioned',
      nodes: [
        { id: 'a', type: 'counter' },
        { id: 'ask', type: 'approval' },
        { id: 'b', type: 'counter' },
      ],
      edges: [
        { from: 'a', to: 'ask' },
        { from: 'ask', to: 'b' },
      ],
    });
    const old = await engine.start('versioned');
    expect((await runToSettled(engine, old)).status).toBe('WAITING');

    // when: v2 (a → ask → c) is saved and the old instance goes on
    const v2 = await engine.deploy({
      name: 'versioned',
      nodes: [
        { id: 'a', type: 'counter' },
        { id: 'ask', type: 'approval' },
        { id: 'c', type: 'counter' },
      ],
      edges: [
        { from: 'a', to: 'ask' },
        { from: 'ask', to: 'c' },
      ],
    });
    await engine.approve(old, 'ask', { approved: true });
    const done = await runToSettled(engine, old);
    const fresh = await engine.start('versioned');
    await engine.runUntil(async () => (await engine.isSettled(fresh)), 10_000);
    await engine.approve(fresh, 'ask', { approved: true });
    const freshDone = await runToSettled(engine, fresh);

    // then: a new version was made; the old instance ran v1's graph, the new one v2's
    expect([v1.version, v1.created, v2.version, v2.created]).toEqual([1, true, 2, true]);
    expect(done).toMatchObject({ status: 'COMPLETED', workflowVersion: 1 });
    expect(done.nodes.map((n) => n.id).sort()).toEqual(['a', 'ask', 'b']);
    expect(probe.callsOf('b', old)).toHaveLength(1);
    expect(probe.callsOf('c', old)).toHaveLength(0);
    expect(freshDone).toMatchObject({ status: 'COMPLETED', workflowVersion: 2 });
    expect(probe.callsOf('c', fresh)).toHaveLength(1);
    expect(probe.callsOf('b', fresh)).toHaveLength(0);
  });

  it('timers are rows with an absolute due time: a restart after sleeping fires an overdue timer once, and a clock set backwards delays nothing already due (a retry waiting for a slot)', async () => {
    // given: a ManualClock, nap (delay 60 s) → after, on a new database (a file in a temp dir, or PostgreSQL's)
    const { location: file, cleanup } = tempLocation();
    const probe = new Probe();
    const clock = new ManualClock(T0);
    let engine = Engine.open(file, { registry: probe.registry(), clock, pollIntervalMs: 10 });
    try {
      await engine.deploy({
        name: 'nap',
        nodes: [
          { id: 'nap', type: 'delay', config: { durationMs: 60_000 } },
          { id: 'after', type: 'counter' },
        ],
        edges: [{ from: 'nap', to: 'after' }],
      });
      const id = await engine.start('nap');
      await tickUntil(engine, async () => (await nodeStatus(engine, id, 'nap')) === 'WAITING', 'nap waiting');

      // then: the timer is a row with its absolute due time
      expect(await scheduleRowsIn(file, id)).toEqual([{ kind: 'timer', node_id: 'nap', next_run_at: T0 + 60_000, lease_owner: null }]);
      expect((await engine.getInstance(id)).nodes.find((n) => n.id === 'nap')?.nextRunAt).toBe(T0 + 60_000);

      // when: the process ends and a new one starts on the file three hours later (a sleeping laptop)
      await engine.close();
      const later = new ManualClock(T0 + 3 * 3_600_000);
      engine = Engine.open(file, { registry: probe.registry(), clock: later, pollIntervalMs: 10 });
      const reopened = engine;
      await tickUntil(reopened, async () => (await reopened.getInstance(id)).status === 'COMPLETED', 'overdue timer fired after restart');
      later.advance(60_000);
      await tickTimes(reopened, 5);

      // then: the overdue timer fired exactly once, at wake-up
      expect(probe.callsOf('after', id)).toHaveLength(1);
      expect(probe.callsOf('after', id)[0]?.at).toBe(T0 + 3 * 3_600_000);
      expect((await events(reopened, id, 'node.completed', 'nap'))).toHaveLength(1);
      expect((await events(reopened, id, 'timer.started', 'nap'))).toHaveLength(1);
      await reopened.close();

      // given: a worker whose only slot is busy while a retry comes due (a row that runs a
      // handler, so it waits for the slot; a timer runs none and would fire at once)
      const c2 = new ManualClock(T0);
      engine = Engine.open(file, { registry: probe.registry(), clock: c2, pollIntervalMs: 10, concurrency: 1 });
      const busy = engine;
      await busy.deploy({ name: 'hold', nodes: [{ id: 'hold', type: 'gate' }] });
      await busy.deploy({
        name: 'again',
        nodes: [
          { id: 'again', type: 'flaky', config: { failTimes: 1 }, retry: { maxAttempts: 2, initialIntervalMs: 60_000 } },
          { id: 'after', type: 'counter' },
        ],
        edges: [{ from: 'again', to: 'after' }],
      });
      const retrier = await busy.start('again');
      await tickUntil(busy, async () => (await nodeStatus(busy, retrier, 'again')) === 'RETRYING', 'retry waiting');
      const holder = await busy.start('hold');
      await tickUntil(busy, () => probe.gateOpen(holder, 'hold'), 'hold running');
      c2.set(T0 + 120_000);
      await tickTimes(busy, 3);
      expect((await nodeStatus(busy, retrier, 'again'))).toBe('RETRYING'); // due, not yet claimed: no free slot

      // when: the slot frees up and the clock is set 12 hours back before the next turn
      probe.release(holder, 'hold');
      await turn();
      c2.set(T0 - 12 * 3_600_000);
      await tickUntil(busy, async () => (await busy.getInstance(retrier)).status === 'COMPLETED', 'due retry ran despite the clock going back');

      // then: the retry that was already due ran at once (the clock never caught up), once
      expect(c2.now()).toBe(T0 - 12 * 3_600_000);
      expect(probe.callsOf('again', retrier)).toHaveLength(2);
      expect(probe.callsOf('after', retrier)).toHaveLength(1);
      expect((await events(busy, retrier, 'node.completed', 'again'))).toHaveLength(1);
      const jumps = await rowsIn<{ data_json: string }>(file, `SELECT data_json FROM history WHERE type = 'clock.jumped'`);
      expect(jumps.map((j) => JSON.parse(j.data_json) as unknown)).toEqual([{ fromMs: T0 + 120_000, toMs: T0 - 12 * 3_600_000, direction: 'backwards' }]);
    } finally {
      await engine.close();
      await cleanup();
    }
  });

  it('a node result or variables document above the size limit fails that node non-retryably with RESULT_TOO_LARGE; no instance is left RUNNING', async () => {
    // given: maxResultBytes 1024; a 2000-byte result, and two 600-byte results merged into the globals
    const { engine, probe } = setup({ maxResultBytes: 1024 });
    await engine.deploy({
      name: 'too-big',
      nodes: [
        { id: 'big', type: 'big', config: { bytes: 2000 }, retry: { maxAttempts: 3, initialIntervalMs: 0 } },
        { id: 'after', type: 'counter' },
      ],
      edges: [{ from: 'big', to: 'after' }],
    });
    await engine.deploy({
      name: 'vars-too-big',
      nodes: [
        { id: 'x', type: 'big', config: { bytes: 600 }, output: 'x' },
        { id: 'y', type: 'big', config: { bytes: 600 }, output: 'y', retry: { maxAttempts: 3, initialIntervalMs: 0 } },
      ],
      edges: [{ from: 'x', to: 'y' }],
    });

    // when
    const one = await engine.start('too-big');
    const two = await engine.start('vars-too-big');
    const [i1, i2] = [await runToSettled(engine, one), await runToSettled(engine, two)];

    // then: one attempt each, a clear non-retryable error, FAILED, nothing RUNNING or leased
    expect(probe.callsOf('big', one)).toHaveLength(1);
    expect(i1.status).toBe('FAILED');
    const bigNode = i1.nodes.find((n) => n.id === 'big');
    expect(bigNode?.status).toBe('FAILED');
    expect(bigNode?.error).toMatchObject({ code: 'RESULT_TOO_LARGE', retryable: false });
    expect((bigNode?.error as { message: string }).message).toMatch(/result is 2002 bytes, above the limit of 1024 bytes/);
    expect(probe.callsOf('after')).toHaveLength(0);

    expect(probe.callsOf('y', two)).toHaveLength(1);
    expect(i2.status).toBe('FAILED');
    expect(i2.nodes.find((n) => n.id === 'y')?.error).toMatchObject({ code: 'RESULT_TOO_LARGE', retryable: false });
    expect((i2.nodes.find((n) => n.id === 'y')?.error as { message: string }).message).toMatch(/variables would be \d+ bytes/);
    expect(i2.variables).not.toHaveProperty('y');

    expect((await engine.listInstances({ status: ['RUNNING', 'PENDING', 'WAITING'] }))).toEqual([]);
    expect([...(await scheduleRowsIn(ctx!.file, one)), ...(await scheduleRowsIn(ctx!.file, two))]).toEqual([]);
    // and: a start whose variables are above the limit is refused and writes nothing
    await expectEngineError(engine.start('too-big', { variables: { blob: 'z'.repeat(2000) } }), 'INVALID_VARIABLES');
    expect((await engine.listInstances())).toHaveLength(2);
  });

  it('a result a person gives (approval decision, skip result) above the size limit is refused and changes nothing', async () => {
    // given: maxResultBytes 1024; an approval waiting, and an incident SUSPENDED holding 300 bytes of globals
    const { engine, probe } = setup({ maxResultBytes: 1024 });
    await engine.deploy({
      name: 'ask-big',
      nodes: [
        { id: 'ask', type: 'approval', output: 'decision' },
        { id: 'then', type: 'counter' },
      ],
      edges: [{ from: 'ask', to: 'then' }],
    });
    await engine.deploy({ name: 'incident-big', nodes: [{ id: 's', type: 'flaky', onFailure: 'suspend', retry: { maxAttempts: 1 }, output: 'r' }] });
    const asking = await engine.start('ask-big');
    const stuck = await engine.start('incident-big', { variables: { note: 'n'.repeat(300) } });
    await engine.runUntil(async () => (await engine.isSettled(asking)) && (await engine.isSettled(stuck)), 10_000);
    const before = [(await engine.getInstance(asking)), (await engine.getInstance(stuck))];
    const historyBefore = [(await engine.history(asking)).length, (await engine.history(stuck)).length];

    // when
    const decision = await expectEngineError(engine.approve(asking, 'ask', { approved: true, data: 'd'.repeat(2000) }), 'RESULT_TOO_LARGE');
    const skip = await expectEngineError(engine.resume(stuck, { action: 'skip', result: 'r'.repeat(900), actor: 'ops' }), 'RESULT_TOO_LARGE');

    // then: clear, non-retryable errors; both instances exactly as they were
    expect(decision.message).toMatch(/node "ask": the given result is \d+ bytes, above the limit of 1024 bytes/);
    expect(decision.retryable).toBe(false);
    expect(skip.message).toMatch(/node "s": the variables would be \d+ bytes, above the limit of 1024 bytes/);
    expect([(await engine.getInstance(asking)), (await engine.getInstance(stuck))]).toEqual(before);
    expect([(await engine.history(asking)).length, (await engine.history(stuck)).length]).toEqual(historyBefore);
    expect(before.map((i) => i.status)).toEqual(['WAITING', 'SUSPENDED']);
    expect(probe.callsOf('then')).toHaveLength(0);
  });

  it('names and ids are Unicode-safe end to end (emoji and CJK): deploy → run → getInstance / history / export', async () => {
    // given: a workflow, node ids, variables, edge condition and business key in CJK and emoji
    const { engine, probe } = setup();
    const name = '发布-🚀-ワークフロー';
    const definition = {
      name,
      description: '東京の端末を更新する 📱',
      nodes: [
        { id: '检查', type: 'counter', name: '检查版本 ✅', config: { result: { ok: true, 版本: '二・〇' } }, output: '结果' },
        { id: '🚀发射', type: 'counter' },
        { id: '👩‍💻', type: 'pass', config: { result: '{{ 设备 }}-完成' }, output: '摘要' },
      ],
      edges: [
        { from: '检查', to: '🚀发射', when: '结果.ok = true' },
        { from: '🚀发射', to: '👩‍💻' },
      ],
      ui: { positions: { 检查: { x: 0, y: 0 }, '🚀发射': { x: 200, y: 0 }, '👩‍💻': { x: 400, y: 0 } } },
    };

    // when
    const dep = await engine.deploy(definition);
    const id = await engine.start(name, { variables: { 设备: '東京-📱' }, businessKey: '注文-🧾-42' });
    const inst = await runToSettled(engine, id);

    // then: every name and id came back as written
    expect(dep).toMatchObject({ name, version: 1, created: true });
    expect(inst.status).toBe('COMPLETED');
    expect(inst.workflow).toBe(name);
    expect(inst.businessKey).toBe('注文-🧾-42');
    expect(inst.nodes.map((n) => [n.id, n.status]).sort()).toEqual(
      [
        ['检查', 'COMPLETED'],
        ['🚀发射', 'COMPLETED'],
        ['👩‍💻', 'COMPLETED'],
      ].sort(),
    );
    expect(inst.variables).toEqual({ 设备: '東京-📱', 结果: { ok: true, 版本: '二・〇' }, 摘要: '東京-📱-完成' });
    expect(probe.callsOf('🚀发射', id)).toHaveLength(1);
    expect(new Set((await engine.history(id)).filter((h) => h.type === 'node.completed').map((h) => h.nodeId))).toEqual(new Set(['检查', '🚀发射', '👩‍💻']));
    expect((await engine.exportWorkflow(name))).toEqual(definition);
    expect((await engine.listWorkflows()).map((w) => w.name)).toContain(name);
    expect((await engine.listInstances({ workflow: name })).map((i) => i.id)).toEqual([id]);
    expect((await engine.listInstances({ text: '🧾' })).map((i) => i.id)).toEqual([id]);
  });

  it('expressions and scripts can never reach the host: no process, require, fetch or constructor escape', async () => {
    // given: a script probing its globals, a script calling require, and JSONata escape attempts
    const { engine, probe } = setup();
    await engine.deploy({
      name: 'sandbox',
      nodes: [
        {
          id: 'globals',
          type: 'script',
          config: {
            code: 'return { process: typeof process, require: typeof require, fetch: typeof fetch, gp: typeof globalThis.process, timers: typeof setTimeout, ctor: (function(){}).constructor("return typeof process")() }',
          },
          output: 'seen',
        },
        {
          id: 'jsonata',
          type: 'pass',
          config: { result: { template: "env: {{ $exists(process) ? process.env.HOME : 'none' }}" } },
          output:
            '{ "jsonata": $string(process) & "|" & $string($eval("process")) & "|" & $string($eval("$string(require)")) & "|" & $string(x.constructor) & "|" & $string($lookup(x, "__proto__")), "tpl": $result.template }',
        },
        { id: 'leak', type: 'counter' },
        { id: 'reads', type: 'script', config: { code: "return require('node:fs').readFileSync('/etc/hostname', 'utf8')" }, retry: { maxAttempts: 1 } },
      ],
      edges: [
        { from: 'globals', to: 'jsonata' },
        { from: 'jsonata', to: 'leak', when: '$exists(process) or $exists($eval("process"))' },
        { from: 'jsonata', to: 'reads' },
      ],
    });

    // when
    const id = await engine.start('sandbox', { variables: { x: { a: 1 } } });
    const inst = await runToSettled(engine, id);

    // then: the script saw none of the host's globals and its Function constructor stayed inside
    expect(inst.variables.seen).toEqual({ process: 'undefined', require: 'undefined', fetch: 'undefined', gp: 'undefined', timers: 'undefined', ctor: 'undefined' });
    // and: every JSONata attempt gave nothing; the template found no process to read
    expect(inst.variables.jsonata).toBe('||||');
    expect(inst.variables.tpl).toBe('env: none');
    expect(probe.callsOf('leak')).toHaveLength(0);
    // and: require is not defined, so the node fails with the script's own ReferenceError
    const reads = inst.nodes.find((n) => n.id === 'reads');
    expect(reads?.status).toBe('FAILED');
    expect(reads?.error).toMatchObject({ code: 'SCRIPT_ERROR' });
    expect((reads?.error as { message: string }).message).toMatch(/require/);
    expect(inst.status).toBe('FAILED');
  });
});

describe('DSL semantics the runtime owes', () => {
  it('an error edge is taken when its source fails after its retries, and its `when` sees $error', async () => {
    // given: a fails twice (its two attempts); error edges for HANDLER_ERROR and for TIMEOUT
    const { engine, probe } = setup();
    await engine.deploy({
      name: 'error-edges',
      nodes: [
        { id: 'a', type: 'flaky', retry: { maxAttempts: 2, initialIntervalMs: 0 } },
        { id: 'ok', type: 'counter' },
        { id: 'onErr', type: 'counter' },
        { id: 'onTimeout', type: 'counter' },
      ],
      edges: [
        { from: 'a', to: 'ok' },
        { from: 'a', to: 'onErr', on: 'error', when: "$error.code = 'HANDLER_ERROR' and $contains($error.message, 'flaky failure 2')" },
        { from: 'a', to: 'onTimeout', on: 'error', when: "$error.code = 'TIMEOUT'" },
      ],
    });

    // when
    const id = await engine.start('error-edges');
    const inst = await runToSettled(engine, id);

    // then: both attempts ran first, then only the matching error edge was taken
    expect(probe.callsOf('a', id).map((c) => c.attempt)).toEqual([1, 2]);
    expect(inst.status).toBe('COMPLETED');
    expect(Object.fromEntries(inst.nodes.map((n) => [n.id, n.status]))).toEqual({ a: 'FAILED', ok: 'SKIPPED', onErr: 'COMPLETED', onTimeout: 'SKIPPED' });
    expect(probe.callsOf('onErr', id)).toHaveLength(1);
    expect(probe.callsOf('onTimeout')).toHaveLength(0);
    const history = (await engine.history(id));
    const lastFailure = history.findIndex((h) => h.type === 'node.failed' && h.attempt === 2);
    const handled = history.findIndex((h) => h.type === 'node.completed' && h.nodeId === 'onErr');
    expect(lastFailure).toBeGreaterThan(-1);
    expect(handled).toBeGreaterThan(lastFailure);
    expect((await engine.metrics()).deadLetters.filter((d) => d.instance_id === id)).toEqual([]);
  });

  it('join "all" needs every incoming edge taken, the default "any" one; a skip flows on', async () => {
    // given: start → x (flag) and start → y (not flag); y → y2 → y3; x,y → anyJoin / allJoin; p,q → bothJoin
    const { engine, probe } = setup();
    await engine.deploy({
      name: 'joins',
      nodes: [
        { id: 'start', type: 'counter' },
        { id: 'x', type: 'counter' },
        { id: 'y', type: 'counter' },
        { id: 'y2', type: 'counter' },
        { id: 'y3', type: 'counter' },
        { id: 'anyJoin', type: 'counter' },
        { id: 'allJoin', type: 'counter', join: 'all' },
        { id: 'p', type: 'counter' },
        { id: 'q', type: 'counter' },
        { id: 'bothJoin', type: 'counter', join: 'all' },
      ],
      edges: [
        { from: 'start', to: 'x', when: 'flag = true' },
        { from: 'start', to: 'y', when: 'flag = false' },
        { from: 'y', to: 'y2' },
        { from: 'y2', to: 'y3' },
        { from: 'x', to: 'anyJoin' },
        { from: 'y', to: 'anyJoin' },
        { from: 'x', to: 'allJoin' },
        { from: 'y', to: 'allJoin' },
        { from: 'start', to: 'p' },
        { from: 'start', to: 'q' },
        { from: 'p', to: 'bothJoin' },
        { from: 'q', to: 'bothJoin' },
      ],
    });

    // when
    const id = await engine.start('joins', { variables: { flag: true } });
    const inst = await runToSettled(engine, id);

    // then
    expect(inst.status).toBe('COMPLETED');
    expect(Object.fromEntries(inst.nodes.map((n) => [n.id, n.status]))).toEqual({
      start: 'COMPLETED',
      x: 'COMPLETED',
      y: 'SKIPPED',
      y2: 'SKIPPED',
      y3: 'SKIPPED',
      anyJoin: 'COMPLETED',
      allJoin: 'SKIPPED',
      p: 'COMPLETED',
      q: 'COMPLETED',
      bothJoin: 'COMPLETED',
    });
    expect(probe.callsOf('anyJoin', id)).toHaveLength(1);
    expect(probe.callsOf('bothJoin', id)).toHaveLength(1);
    for (const n of ['y', 'y2', 'y3', 'allJoin']) expect(probe.callsOf(n)).toHaveLength(0);
    const skipped = Object.fromEntries((await events(engine, id, 'node.skipped')).map((h) => [h.nodeId, dataOf<{ reason: string }>(h).reason]));
    expect(skipped).toEqual({
      y: 'no incoming edge was taken',
      y2: 'no incoming edge was taken',
      y3: 'no incoming edge was taken',
      allJoin: 'join "all": not every incoming edge was taken',
    });
  });

  it('deadlineMs fails the instance with DEADLINE_EXCEEDED, aborting what runs and dropping what waits', async () => {
    // given: a 1 s deadline; nap waits an hour, hang runs forever
    const clock = new ManualClock(T0);
    const { engine, probe } = setup({ clock });
    await engine.deploy({
      name: 'deadline',
      deadlineMs: 1000,
      nodes: [
        { id: 'nap', type: 'delay', config: { durationMs: 3_600_000 } },
        { id: 'afterNap', type: 'counter' },
        { id: 'hang', type: 'stuck' },
      ],
      edges: [{ from: 'nap', to: 'afterNap' }],
    });
    const id = await engine.start('deadline');
    await tickUntil(engine, async () => (await nodeStatus(engine, id, 'nap')) === 'WAITING' && (await nodeStatus(engine, id, 'hang')) === 'RUNNING', 'waiting and running');
    expect((await scheduleRowsIn(ctx!.file, id)).find((r) => r.kind === 'deadline')?.next_run_at).toBe(T0 + 1000);

    // when: the deadline passes
    clock.advance(1001);
    await tickUntil(engine, async () => (await engine.getInstance(id)).status === 'FAILED', 'instance FAILED at its deadline');
    clock.advance(3_600_000);
    await tickTimes(engine, 3);

    // then
    const inst = (await engine.getInstance(id));
    expect(inst.status).toBe('FAILED');
    expect(inst.error).toMatchObject({ code: 'DEADLINE_EXCEEDED' });
    expect(probe.aborts).toEqual([{ instanceId: id, nodeId: 'hang', attempt: 1, reason: 'DEADLINE_EXCEEDED' }]);
    expect(probe.callsOf('afterNap')).toHaveLength(0);
    expect(await scheduleRowsIn(ctx!.file, id)).toEqual([]);
    expect(inst.endedAt).toBe(T0 + 1001);
  });

  it('deploy makes a new version only when the definition changed; moving ui positions does not', async () => {
    // given
    const { engine } = setup();
    const base = {
      name: 'versions',
      nodes: [
        { id: 'a', type: 'counter' },
        { id: 'b', type: 'counter' },
      ],
      edges: [{ from: 'a', to: 'b' }],
      ui: { positions: { a: { x: 0, y: 0 }, b: { x: 100, y: 0 } } },
    };

    // when
    const first = await engine.deploy(base);
    const same = await engine.deploy(structuredClone(base));
    const moved = await engine.deploy({ ...base, ui: { positions: { a: { x: 50, y: 70 }, b: { x: 300, y: 10 } } } });
    const changed = await engine.deploy({ ...base, nodes: [...base.nodes, { id: 'c', type: 'counter' }], edges: [...base.edges, { from: 'b', to: 'c' }] });

    // then
    expect(first).toMatchObject({ version: 1, created: true });
    expect(same).toMatchObject({ version: 1, created: false, workflowId: first.workflowId });
    expect(moved).toMatchObject({ version: 1, created: false, workflowId: first.workflowId });
    expect(changed).toMatchObject({ version: 2, created: true });
    expect((await engine.listVersions('versions')).map((v) => v.version)).toEqual([2, 1]);
  });

  it('a start whose variables fail the inputSchema is refused, naming the failing fields, and writes nothing', async () => {
    // given
    const { engine } = setup();
    await engine.deploy({
      name: 'typed',
      inputSchema: {
        type: 'object',
        required: ['deviceId'],
        properties: { deviceId: { type: 'string' }, retries: { type: 'integer', minimum: 0 } },
      },
      nodes: [{ id: 'a', type: 'counter' }],
    });

    // when
    const missing = await expectEngineError(engine.start('typed', { variables: {} }), 'INVALID_VARIABLES');
    const wrong = await expectEngineError(engine.start('typed', { variables: { deviceId: 7, retries: -1 } }), 'INVALID_VARIABLES');
    const ok = await engine.start('typed', { variables: { deviceId: 'dev-1', retries: 2 } });

    // then
    expect(missing.message).toMatch(/deviceId/);
    expect(missing.details).toEqual([{ field: 'deviceId', message: 'is required' }]);
    expect((wrong.details as { field: string }[]).map((d) => d.field).sort()).toEqual(['deviceId', 'retries']);
    expect(wrong.message).toMatch(/deviceId must be string/);
    expect((await engine.listInstances()).map((i) => i.id)).toEqual([ok]);
  });

  it('each handler sees the stable idempotency key `${instanceId}:${nodeId}` across its attempts', async () => {
    // given: a node that fails twice, in two instances
    const { engine, probe } = setup();
    await engine.deploy({ name: 'keys', nodes: [{ id: 'pay', type: 'flaky', config: { failTimes: 2 }, retry: { maxAttempts: 3, initialIntervalMs: 0 } }] });

    // when
    const [i1, i2] = await engine.startMany('keys', [{}, {}]);
    if (i1 === undefined || i2 === undefined) throw new Error('two instances expected');
    await runToSettled(engine, i1);
    await runToSettled(engine, i2);

    // then
    for (const id of [i1, i2]) {
      expect(probe.callsOf('pay', id).map((c) => [c.attempt, c.idempotencyKey])).toEqual([
        [1, `${id}:pay`],
        [2, `${id}:pay`],
        [3, `${id}:pay`],
      ]);
      expect((await engine.getInstance(id)).status).toBe('COMPLETED');
    }
  });

  it('an approval decision becomes the result: approve takes the approved branch, reject the other', async () => {
    // given
    const { engine, probe } = setup();
    await engine.deploy({
      name: 'approve-me',
      nodes: [
        { id: 'ask', type: 'approval', config: { prompt: 'Ship it?' }, output: 'decision' },
        { id: 'yes', type: 'counter' },
        { id: 'no', type: 'counter' },
      ],
      edges: [
        { from: 'ask', to: 'yes', when: 'decision.approved = true' },
        { from: 'ask', to: 'no', when: 'decision.approved = false' },
      ],
    });
    const good = await engine.start('approve-me');
    const bad = await engine.start('approve-me');
    await engine.runUntil(async () => (await engine.isSettled(good)) && (await engine.isSettled(bad)), 10_000);
    expect((await nodeStatus(engine, good, 'ask'))).toBe('WAITING');

    // when
    await engine.approve(good, 'ask', { approved: true, actor: 'alice', comment: 'looks fine' });
    await engine.approve(bad, 'ask', { approved: false, actor: 'bob', data: { why: 'too risky' } });
    const [g, b] = [await runToSettled(engine, good), await runToSettled(engine, bad)];

    // then
    expect([g.status, b.status]).toEqual(['COMPLETED', 'COMPLETED']);
    expect(probe.callsOf('yes').map((c) => c.instanceId)).toEqual([good]);
    expect(probe.callsOf('no').map((c) => c.instanceId)).toEqual([bad]);
    expect(g.variables.decision).toMatchObject({ approved: true, actor: 'alice', comment: 'looks fine' });
    expect(b.variables.decision).toMatchObject({ approved: false, actor: 'bob', data: { why: 'too risky' } });
    expect((await events(engine, good, 'approval.decided'))[0]).toMatchObject({ actor: 'alice', data: { approved: true } });
    // and: a second decision is refused
    await expectEngineError(engine.approve(good, 'ask', { approved: false }), 'INVALID_STATE');
  });
});

describe('onFailure "suspend": an incident waits for a person, and each resume action is recorded', () => {
  const incident = {
    name: 'incident',
    nodes: [
      { id: 'prep', type: 'counter', compensate: { type: 'undo' } },
      { id: 'step', type: 'flaky', config: { failTimes: 3, result: { ok: true } }, onFailure: 'suspend', retry: { maxAttempts: 2, initialIntervalMs: 0 }, output: 'stepResult' },
      { id: 'next', type: 'counter' },
    ],
    edges: [
      { from: 'prep', to: 'step' },
      { from: 'step', to: 'next', when: 'stepResult.ok = true' },
    ],
  };

  async function suspendedInstance(engine: Engine): Promise<{ id: number; version: number }> {
    await engine.deploy(incident);
    const id = await engine.start('incident', { variables: { region: 'eu', limit: 5 } });
    const inst = await runToSettled(engine, id);
    expect(inst.status).toBe('SUSPENDED');
    expect(inst.suspension).toMatchObject({ kind: 'incident', nodeId: 'step', attempts: 2, error: { code: 'HANDLER_ERROR', message: 'flaky failure 2' } });
    expect((await engine.metrics()).deadLetters.filter((d) => d.instance_id === id)).toHaveLength(1);
    return { id, version: inst.version };
  }

  it('retry: the failed step gets a fresh attempt budget, with edited variables recorded as a diff with the actor', async () => {
    // given: step failed attempts 1 and 2 and the instance is SUSPENDED
    const { engine, probe } = setup();
    const { id, version } = await suspendedInstance(engine);

    // when: a person adds a note, raises the limit and retries
    await engine.resume(id, { action: 'retry', actor: 'ops', expectedVersion: version, variables: { region: 'eu', limit: 9, note: 'retry by hand' } });
    const inst = await runToSettled(engine, id);

    // then: two more attempts were allowed (3 fails, 4 succeeds) and the flow went on
    expect(probe.callsOf('step', id).map((c) => c.attempt)).toEqual([1, 2, 3, 4]);
    expect(inst.status).toBe('COMPLETED');
    expect(probe.callsOf('next', id)).toHaveLength(1);
    expect(inst.variables).toMatchObject({ region: 'eu', limit: 9, note: 'retry by hand', stepResult: { ok: true } });
    const resumed = (await events(engine, id, 'instance.resumed'));
    expect(resumed).toHaveLength(1);
    expect(resumed[0]).toMatchObject({
      actor: 'ops',
      nodeId: 'step',
      data: { action: 'retry', reason: 'incident', diff: { added: { note: 'retry by hand' }, removed: [], changed: { limit: { from: 5, to: 9 } } } },
    });
  });

  it('skip: the step completes with the given result and downstream continues', async () => {
    // given
    const { engine, probe } = setup();
    const { id, version } = await suspendedInstance(engine);

    // when
    await engine.resume(id, { action: 'skip', result: { ok: true, by: 'hand' }, actor: 'carol', expectedVersion: version, variables: { region: 'us', limit: 5 } });
    const inst = await runToSettled(engine, id);

    // then
    expect(probe.callsOf('step', id)).toHaveLength(2);
    expect(probe.callsOf('next', id)).toHaveLength(1);
    expect(inst.status).toBe('COMPLETED');
    expect(inst.nodes.find((n) => n.id === 'step')).toMatchObject({ status: 'COMPLETED', attempt: 2, output: { ok: true, by: 'hand' } });
    // and history's completion names the same attempt as the node's state (the last one run, not 0)
    expect((await events(engine, id, 'node.completed', 'step')).map((e) => e.attempt)).toEqual([2]);
    expect(inst.variables).toEqual({ region: 'us', limit: 5, stepResult: { ok: true, by: 'hand' } });
    expect((await events(engine, id, 'instance.resumed'))[0]).toMatchObject({
      actor: 'carol',
      data: { action: 'skip', result: { ok: true, by: 'hand' }, diff: { added: {}, removed: [], changed: { region: { from: 'eu', to: 'us' } } } },
    });
    expect((await events(engine, id, 'node.skipped_by_hand', 'step'))).toHaveLength(1);
  });

  it('fail: compensation runs and the instance ends FAILED', async () => {
    // given
    const { engine, probe } = setup();
    const { id, version } = await suspendedInstance(engine);

    // when
    await engine.resume(id, { action: 'fail', actor: 'dave', expectedVersion: version, variables: { region: 'eu' } });
    const inst = await runToSettled(engine, id);

    // then
    expect(inst.status).toBe('FAILED');
    expect(probe.callsOf('next')).toHaveLength(0);
    expect(probe.calls.filter((c) => c.type === 'undo').map((c) => [c.instanceId, c.nodeId])).toEqual([[id, 'prep']]);
    expect((await nodeStatus(engine, id, 'prep'))).toBe('COMPENSATED');
    const history = (await engine.history(id));
    const types = history.map((h) => h.type);
    expect(types.indexOf('instance.resumed')).toBeLessThan(types.indexOf('compensation.completed'));
    expect(types.at(-1)).toBe('instance.failed');
    expect((await events(engine, id, 'instance.resumed'))[0]).toMatchObject({ actor: 'dave', data: { action: 'fail', diff: { added: {}, removed: ['limit'], changed: {} } } });
    expect(inst.variables).toEqual({ region: 'eu' });
  });
});
