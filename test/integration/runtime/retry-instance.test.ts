// Retrying a FAILED instance (instance:retry): the failures that failed it run again, the steps
// the failure cancelled pick up where they stood, its deadline stays or starts over, and an
// instance whose steps were compensated is refused with a reason.
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../engine/runtime/clock';
import type { EngineOptions } from '../../../engine/runtime/engine';
import { Probe, everyOf, nodeStatus, tickUntil } from '../../helpers/probe-nodes';
import { scheduleRowsIn } from '../../helpers/db-rows';
import { tempEngine } from '../../helpers/temp-engine';
import { rejectionOf } from '../../helpers/engine-errors';

let ctx: ReturnType<typeof tempEngine> | undefined;
afterEach(async () => {
  await ctx?.close();
  ctx = undefined;
});

function setup(options: EngineOptions = {}) {
  const probe = new Probe();
  ctx = tempEngine({ registry: probe.registry(), ...options });
  return { engine: ctx.engine, probe };
}


describe('retry of a FAILED instance', () => {
  it('runs on a branch whose step completed while the instance was failing (a→p, a→q→q2; p fails while q runs)', async () => {
    // given: p fails for good while q still runs; q completes during the failure, q2 was cancelled
    const { engine, probe } = setup();
    await engine.deploy({
      name: 'branches',
      nodes: [
        { id: 'a', type: 'counter' },
        { id: 'p', type: 'flaky', config: { failTimes: 1 }, retry: { maxAttempts: 1 } },
        { id: 'q', type: 'gate' },
        { id: 'q2', type: 'counter' },
      ],
      edges: [
        { from: 'a', to: 'p' },
        { from: 'a', to: 'q' },
        { from: 'q', to: 'q2' },
      ],
    });
    const id = await engine.start('branches');
    await tickUntil(engine, async () => (await nodeStatus(engine, id, 'p')) === 'FAILED' && probe.gateOpen(id, 'q'), 'p failed while q runs');
    expect((await engine.getInstance(id)).status).toBe('COMPENSATING');
    probe.release(id, 'q');
    await tickUntil(engine, async () => (await engine.getInstance(id)).status === 'FAILED', 'the instance failed');
    expect(await nodeStatus(engine, id, 'q')).toBe('COMPLETED');
    expect(await nodeStatus(engine, id, 'q2')).toBe('CANCELLED');

    // when
    await engine.retry(id, { actor: 'ops' });

    // then: p runs again and succeeds, q2 runs once, the instance completes (it stayed WAITING before)
    await tickUntil(engine, async () => (await engine.getInstance(id)).status === 'COMPLETED', 'the retried instance completes');
    expect(probe.callsOf('p', id)).toHaveLength(2);
    expect(probe.callsOf('q', id)).toHaveLength(1);
    expect(probe.callsOf('q2', id)).toHaveLength(1);
    const retried = (await engine.history(id)).find((h) => h.type === 'instance.retried');
    expect(retried).toMatchObject({ actor: 'ops', data: { nodes: ['p'], resumed: ['q2'] } });
  });

  it('keeps a deadline still ahead (the row and deadlineAt stay)', async () => {
    const clock = new ManualClock(1_000_000);
    const { engine } = setup({ clock });
    await engine.deploy({ name: 'due', deadlineMs: 60_000, nodes: [{ id: 'a', type: 'flaky', config: { failTimes: 1 }, retry: { maxAttempts: 1 } }] });
    const id = await engine.start('due');
    const deadlineAt = (await engine.getInstance(id)).deadlineAt;
    expect(deadlineAt).toBe(1_060_000);
    await tickUntil(engine, async () => (await engine.getInstance(id)).status === 'FAILED', 'a failed');
    expect(await scheduleRowsIn(ctx!.file, id)).toEqual([]);
    clock.advance(1000);

    await engine.retry(id);

    expect((await engine.getInstance(id)).deadlineAt).toBe(deadlineAt);
    expect((await scheduleRowsIn(ctx!.file, id)).map((r) => [r.kind, r.next_run_at])).toEqual([
      ['deadline', 1_060_000],
      ['run', 1_001_000],
    ]);
    await tickUntil(engine, async () => (await engine.getInstance(id)).status === 'COMPLETED', 'the retry completes');
  });

  it('gives an instance failed by its deadline a new deadline from the retry, and runs the aborted step again', async () => {
    // given: a step still running when the deadline passes is aborted; the instance FAILS with DEADLINE_EXCEEDED
    const clock = new ManualClock(2_000_000);
    const { engine, probe } = setup({ clock });
    await engine.deploy({ name: 'late', deadlineMs: 1000, nodes: [{ id: 'a', type: 'gate' }, { id: 'b', type: 'counter' }], edges: [{ from: 'a', to: 'b' }] });
    const id = await engine.start('late');
    await tickUntil(engine, () => probe.gateOpen(id, 'a'), 'a runs');
    clock.advance(1001);
    await tickUntil(engine, async () => (await engine.getInstance(id)).status === 'FAILED', 'the deadline failed it');
    expect((await engine.getInstance(id)).error).toMatchObject({ code: 'DEADLINE_EXCEEDED' });
    expect(probe.aborts).toEqual([expect.objectContaining({ nodeId: 'a', reason: 'DEADLINE_EXCEEDED' })]);

    // when
    clock.advance(5000);
    await engine.retry(id);

    // then: a new window of deadlineMs from the retry; a runs again, then b, and it completes
    expect((await engine.getInstance(id)).deadlineAt).toBe(2_006_001 + 1000);
    await tickUntil(engine, () => probe.callsOf('a', id).length === 2 && probe.gateOpen(id, 'a'), 'a runs again');
    probe.release(id, 'a');
    await tickUntil(engine, async () => (await engine.getInstance(id)).status === 'COMPLETED', 'the retry completes');
    expect(probe.callsOf('a', id)).toHaveLength(2);
    expect(probe.callsOf('b', id)).toHaveLength(1);
  });

  it('runs again the steps a deadline cancelled while they waited (no FAILED step at all)', async () => {
    const clock = new ManualClock(3_000_000);
    const { engine, probe } = setup({ clock });
    await engine.deploy({
      name: 'napping',
      deadlineMs: 1000,
      nodes: [
        { id: 'nap', type: 'delay', config: { durationMs: 5000 } },
        { id: 'after', type: 'counter' },
      ],
      edges: [{ from: 'nap', to: 'after' }],
    });
    const id = await engine.start('napping');
    await tickUntil(engine, async () => (await nodeStatus(engine, id, 'nap')) === 'WAITING', 'nap waits');
    clock.advance(1001);
    await tickUntil(engine, async () => (await engine.getInstance(id)).status === 'FAILED', 'the deadline failed it');
    expect((await engine.getInstance(id)).nodes.map((n) => [n.id, n.status])).toEqual([
      ['after', 'CANCELLED'],
      ['nap', 'CANCELLED'],
    ]);

    await engine.retry(id);
    clock.advance(5000);
    await tickUntil(engine, async () => (await engine.getInstance(id)).status !== 'RUNNING' && (await engine.getInstance(id)).status !== 'WAITING', 'the retry ends');
    // the new deadline (1 s from the retry) passed during the 5 s nap again: the retry itself is honest about it
    expect((await engine.getInstance(id)).error).toMatchObject({ code: 'DEADLINE_EXCEEDED' });
    expect(probe.callsOf('after', id)).toHaveLength(0);
  });

  it('refuses an instance whose steps were compensated, naming them, and changes nothing', async () => {
    const { engine, probe } = setup();
    await engine.deploy({
      name: 'undone',
      nodes: [
        { id: 'book', type: 'counter', compensate: { type: 'undo' } },
        { id: 'pay', type: 'flaky', config: { failTimes: 1 }, retry: { maxAttempts: 1 } },
      ],
      edges: [{ from: 'book', to: 'pay' }],
    });
    const id = await engine.start('undone');
    await tickUntil(engine, async () => (await engine.getInstance(id)).status === 'FAILED', 'compensated and failed');
    expect(probe.callsOf('book', id).map((c) => c.type)).toEqual(['counter', 'undo']);
    const before = await engine.getInstance(id);

    const err = await rejectionOf(engine.retry(id));

    expect(err.code).toBe('INVALID_STATE');
    expect(err.message).toMatch(/step "book" was compensated/);
    expect(err.details).toEqual({ compensated: ['book'] });
    expect(await engine.getInstance(id)).toEqual(before);
  });
});

describe('a person acting on an instance past its deadline (no worker ran meanwhile)', () => {
  it('an approval is refused with DEADLINE_EXCEEDED and the instance fails instead of completing', async () => {
    const clock = new ManualClock(4_000_000);
    const { engine, probe } = setup({ clock });
    await engine.deploy({
      name: 'ask-late',
      deadlineMs: 1000,
      nodes: [
        { id: 'ask', type: 'approval' },
        { id: 'ship', type: 'counter' },
      ],
      edges: [{ from: 'ask', to: 'ship' }],
    });
    const id = await engine.start('ask-late');
    await tickUntil(engine, async () => (await nodeStatus(engine, id, 'ask')) === 'WAITING', 'the approval waits');
    clock.advance(1001);

    const err = await rejectionOf(engine.approve(id, 'ask', { approved: true, actor: 'alice' }));

    expect(err.code).toBe('DEADLINE_EXCEEDED');
    const inst = await engine.getInstance(id);
    expect(inst.status).toBe('FAILED');
    expect(inst.error).toMatchObject({ code: 'DEADLINE_EXCEEDED' });
    expect((await engine.history(id)).some((h) => h.type === 'approval.decided')).toBe(false);
    await engine.tick();
    expect(probe.callsOf('ship', id)).toHaveLength(0);
  });

  it('a resume (retry or skip) is refused the same way; fail still fails it', async () => {
    const clock = new ManualClock(5_000_000);
    const { engine, probe } = setup({ clock });
    await engine.deploy({
      name: 'incident-late',
      deadlineMs: 1000,
      nodes: [
        { id: 's', type: 'flaky', config: { failTimes: 1 }, retry: { maxAttempts: 1 }, onFailure: 'suspend' },
        { id: 'next', type: 'counter' },
      ],
      edges: [{ from: 's', to: 'next' }],
    });
    const skipped = await engine.start('incident-late');
    const failed = await engine.start('incident-late');
    await tickUntil(engine, () => everyOf([skipped, failed], async (i) => (await engine.getInstance(i)).status === 'SUSPENDED'), 'both suspended');
    clock.advance(1001);

    const err = await rejectionOf(engine.resume(skipped, { action: 'skip', result: 1, actor: 'ops' }));
    await engine.resume(failed, { action: 'fail', actor: 'ops' });

    expect(err.code).toBe('DEADLINE_EXCEEDED');
    expect((await engine.getInstance(skipped)).error).toMatchObject({ code: 'DEADLINE_EXCEEDED' });
    expect((await engine.getInstance(skipped)).status).toBe('FAILED');
    expect((await engine.getInstance(failed)).status).toBe('FAILED');
    await engine.tick();
    expect(probe.callsOf('next')).toHaveLength(0);
  });
});
