/**
 * `isIdle()` means nothing is due: an approval waiting for a person is idle until its timeout is
 * due, not idle while the passed timeout waits to be handled, and idle again once its error path
 * ran. Real database file, a manual clock.
 *
 * An idle worker writes nothing: while no row is due, its loop reads the earliest due time and
 * takes no write turn; a row another engine adds, or a timer coming due, is claimed at the next
 * poll. Real database file, the wall clock.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Engine } from '../../../engine/runtime/engine';
import { ManualClock } from '../../../engine/runtime/clock';
import type { EngineEvent } from '../../../engine/runtime/events';
import { tempEngine } from '../../helpers/temp-engine';

/** Lets handlers started by the last turn settle (they run in microtasks and immediates). */
const settle = () => new Promise<void>((resolve) => setTimeout(resolve, 30));

describe('idle means nothing due', () => {
  let ctx: ReturnType<typeof tempEngine>;
  afterEach(async () => ctx.close());

  it('is not idle while a passed approval timeout waits to be handled, and is once its error path ran', async () => {
    const clock = new ManualClock(1_000_000);
    ctx = tempEngine({ clock });
    const { engine } = ctx;
    await engine.deploy({
      name: 'ask-or-escalate',
      nodes: [
        { id: 'ask', type: 'approval', config: { prompt: 'ok?' }, timeoutMs: 1000 },
        { id: 'yes', type: 'pass' },
        { id: 'escalate', type: 'pass' },
      ],
      edges: [
        { from: 'ask', to: 'yes' },
        { from: 'ask', to: 'escalate', on: 'error' },
      ],
    });
    const id = await engine.start('ask-or-escalate', {});
    await engine.tick();
    await settle();
    await engine.tick();
    expect((await engine.getInstance(id)).status).toBe('WAITING');
    // Waiting for a person, timeout not yet due: nothing to do.
    expect((await engine.isIdle())).toBe(true);
    clock.advance(1500);
    // The timeout is due: there is work.
    expect((await engine.isIdle())).toBe(false);
    for (let i = 0; i < 4; i++) {
      await engine.tick();
      await settle();
    }
    expect((await engine.getInstance(id)).status).toBe('COMPLETED');
    expect((await engine.getInstance(id)).nodes.find((n) => n.id === 'escalate')?.status).toBe('COMPLETED');
    expect((await engine.isIdle())).toBe(true);
  });
});

describe('an idle worker writes nothing', () => {
  let ctx: ReturnType<typeof tempEngine>;
  let second: Engine | undefined;
  afterEach(async () => {
    await second?.close();
    second = undefined;
    await ctx.close();
  });

  it('takes no write turn while no row is due, and claims at the next poll what another engine starts or a timer makes due', async () => {
    // given: a worker polling every 20 ms, a workflow whose step waits 300 ms in a delay
    ctx = tempEngine({ pollIntervalMs: 20 });
    const { engine } = ctx;
    await engine.deploy({
      name: 'nap',
      nodes: [
        { id: 'nap', type: 'delay', config: { durationMs: 300 } },
        { id: 'after', type: 'pass' },
      ],
      edges: [{ from: 'nap', to: 'after' }],
    });
    const turns: EngineEvent[] = [];
    const off = engine.on((e) => {
      if (e.type === 'worker.turn') turns.push(e);
    });
    engine.startWorker();
    // then: its first turn writes (it finds nothing)
    const t1 = Date.now();
    while (turns.length === 0 && Date.now() - t1 < 5000) await new Promise((r) => setTimeout(r, 10));
    expect(turns.map((t) => (t.type === 'worker.turn' ? t.claimed : -1))).toEqual([0]);
    turns.length = 0;
    // when: a second idle
    await new Promise((r) => setTimeout(r, 1000));
    // then: about 50 polls, and not one write turn (each polled with BEGIN IMMEDIATE before)
    expect(turns).toEqual([]);

    // when: a second engine on the database, with no worker of its own, starts an instance
    second = Engine.open(ctx.file);
    const id = await second.start('nap');
    // then: the first worker claims it at a poll, waits out the delay (no write turn in between
    // but the claim and the delay's own) and completes it
    const t0 = Date.now();
    while ((await engine.getInstance(id)).status !== 'COMPLETED' && Date.now() - t0 < 10_000) await new Promise((r) => setTimeout(r, 20));
    expect((await engine.getInstance(id)).status).toBe('COMPLETED');
    expect(turns.length).toBeGreaterThan(0);
    // (it fires at or after its due time, which the delay's handler set 300 ms after it began)
    const history = await engine.history(id);
    const fired = history.find((h) => h.type === 'timer.fired' && h.nodeId === 'nap');
    const started = history.find((h) => h.type === 'timer.started' && h.nodeId === 'nap');
    const until = (started?.data as { until?: number } | undefined)?.until ?? Number.NaN;
    expect(until - (started?.at ?? 0)).toBeGreaterThan(250);
    expect((fired?.at ?? 0) - until).toBeGreaterThanOrEqual(0);

    // and: idle again, it writes nothing again
    await new Promise((r) => setTimeout(r, 100));
    const after = turns.length;
    await new Promise((r) => setTimeout(r, 500));
    expect(turns.length).toBe(after);
    off();
  });
});
