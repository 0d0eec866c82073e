/**
 * Rows that run no handler taking time — a delay's timer, a wait's timeout, the wake of an event
 * that came, a ready node of an instant type (pass, delay, approval, event) — are taken by every
 * loop turn whatever its free slots (engine/runtime/state-machine/turn.ts, index
 * schedule_instant). Found by newcomers' trials: with every slot held by long handlers, a 500 ms
 * delay and an approval's 500 ms timeout fired 15 s late, and an approval after a delay was
 * requested 16 s late, behind the handlers. Here the one slot stays held by a handler that never
 * settles until the test lets it go, and the turns must run the rest anyway.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createDefaultRegistry } from '../../../engine/nodes/registry';
import { ManualClock } from '../../../engine/runtime/clock';
import { INSTANT_DISPATCH_PER_TX } from '../../../engine/runtime/state-machine/tx';
import { INSTANT_PER_TURN } from '../../../engine/runtime/state-machine/turn';
import { heldNodes } from '../../helpers/held-node';
import { tempEngine } from '../../helpers/temp-engine';

/** Lets what the last turn launched settle (handlers run in microtasks and immediates). */
const settle = () => new Promise<void>((resolve) => setTimeout(resolve, 30));

type TestEngine = ReturnType<typeof tempEngine>['engine'];

/** `n` worker turns, each followed by the settling of what it launched. */
async function turns(engine: TestEngine, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    await engine.tick();
    await settle();
  }
}

/** Each node's status in instance `id`, by node id. */
async function statuses(engine: TestEngine, id: number): Promise<Record<string, string>> {
  return Object.fromEntries((await engine.getInstance(id)).nodes.map((n) => [n.id, n.status]));
}

describe('rows that run no handler', () => {
  let ctx: ReturnType<typeof tempEngine>;
  afterEach(async () => ctx.close());

  it('a timer, a timeout and a wake fire on time while every handler slot is held', async () => {
    // given a worker with one slot, and a handler that holds it until let go
    const held = heldNodes();
    const clock = new ManualClock(1_000_000);
    ctx = tempEngine({ registry: createDefaultRegistry().register(held.type), concurrency: 1, clock });
    const { engine } = ctx;
    await engine.deploy({
      name: 'waits',
      nodes: [
        { id: 'nap', type: 'delay', config: { durationMs: 500 } },
        { id: 'go', type: 'event', config: { name: 'go' } },
      ],
      edges: [],
    });
    await engine.deploy({ name: 'asks', nodes: [{ id: 'ask', type: 'approval', config: { prompt: 'ok?' }, timeoutMs: 500 }], edges: [] });
    await engine.deploy({ name: 'busy', nodes: [{ id: 'hold', type: 'held', config: {} }], edges: [] });
    const waits = await engine.start('waits');
    const asks = await engine.start('asks');
    await turns(engine, 6);
    expect(await statuses(engine, waits)).toEqual({ nap: 'WAITING', go: 'WAITING' });
    expect(await statuses(engine, asks)).toEqual({ ask: 'WAITING' });
    const busy = await engine.start('busy');
    await turns(engine, 2);
    expect((await engine.getInstance(busy)).nodes[0]?.status).toBe('RUNNING');

    // when the event comes and the clock passes the timer and the timeout, the slot still held
    await engine.signal({ id: waits }, { event: 'go', data: { n: 1 } });
    clock.advance(1000);
    await turns(engine, 3);

    // then each fired: the delay and the event completed the instance, the approval timed out
    expect((await engine.getInstance(waits)).status).toBe('COMPLETED');
    expect(await statuses(engine, waits)).toEqual({ nap: 'COMPLETED', go: 'COMPLETED' });
    const fired = (await engine.history(waits)).find((h) => h.type === 'timer.fired');
    expect((fired?.data as { lateMs: number }).lateMs).toBe(500);
    const a = await engine.getInstance(asks);
    expect(a.status).toBe('FAILED');
    expect(a.nodes[0]).toMatchObject({ id: 'ask', status: 'FAILED', error: { code: 'TIMEOUT' } });
    // and the handler kept its slot all along
    expect((await engine.getInstance(busy)).nodes[0]?.status).toBe('RUNNING');
    expect(held.waiting).toBe(1);
    held.letGo();
    await turns(engine, 3);
    expect((await engine.getInstance(busy)).status).toBe('COMPLETED');
  });

  it('nodes of instant types start while every handler slot is held, and a handler type still waits for it', async () => {
    // given a worker with one slot held by a handler
    const held = heldNodes();
    const clock = new ManualClock(2_000_000);
    ctx = tempEngine({ registry: createDefaultRegistry().register(held.type), concurrency: 1, clock });
    const { engine } = ctx;
    await engine.deploy({
      name: 'chain',
      nodes: [
        { id: 'p', type: 'pass', config: { result: { ok: true } } },
        { id: 'nap', type: 'delay', config: { durationMs: 500 } },
        { id: 'ask', type: 'approval', config: { prompt: 'ok?' }, timeoutMs: 300 },
      ],
      edges: [
        { from: 'p', to: 'nap' },
        { from: 'nap', to: 'ask' },
      ],
    });
    await engine.deploy({ name: 'hear', nodes: [{ id: 'ev', type: 'event', config: { name: 'go' } }], edges: [] });
    await engine.deploy({ name: 'busy', nodes: [{ id: 'hold', type: 'held', config: {} }], edges: [] });
    const busy = await engine.start('busy');
    await turns(engine, 2);
    expect(await statuses(engine, busy)).toEqual({ hold: 'RUNNING' });

    // when instances of instant types start and a second handler is queued, the slot still held
    const chain = await engine.start('chain');
    const hear = await engine.start('hear');
    const queued = await engine.start('busy');
    await turns(engine, 3);

    // then the pass ran and the delay and the event wait; the second handler waits for the slot
    expect(await statuses(engine, chain)).toEqual({ p: 'COMPLETED', nap: 'WAITING', ask: 'PENDING' });
    expect(await statuses(engine, hear)).toEqual({ ev: 'WAITING' });
    expect(await statuses(engine, queued)).toEqual({ hold: 'READY' });
    expect(held.waiting).toBe(1);

    // when the delay is due: the approval is requested at once
    clock.advance(500);
    await turns(engine, 3);
    expect(await statuses(engine, chain)).toEqual({ p: 'COMPLETED', nap: 'COMPLETED', ask: 'WAITING' });
    const requested = (await engine.history(chain)).find((h) => h.type === 'approval.requested');
    expect(requested?.at).toBe(2_000_500);
    // and its timeout fires on time, the event is taken, the handler still holding its slot
    await engine.signal({ id: hear }, { event: 'go', data: {} });
    clock.advance(300);
    await turns(engine, 3);
    expect((await engine.getInstance(chain)).nodes.find((n) => n.id === 'ask')).toMatchObject({ status: 'FAILED', error: { code: 'TIMEOUT' } });
    expect((await engine.getInstance(hear)).status).toBe('COMPLETED');
    expect(await statuses(engine, queued)).toEqual({ hold: 'READY' });

    // when the held handler lets go, the queued one takes the slot and runs
    held.letGo();
    await turns(engine, 4);
    expect((await engine.getInstance(busy)).status).toBe('COMPLETED');
    expect((await engine.getInstance(queued)).status).toBe('COMPLETED');
  });

  it('a turn starts at most INSTANT_DISPATCH_PER_TX steps of instant types at once; the rest wait READY for the next turns', async () => {
    // given a pass that fans out to 600 passes (more than a turn dispatches)
    const fan = 600;
    expect(fan).toBeGreaterThan(INSTANT_DISPATCH_PER_TX + INSTANT_PER_TURN);
    ctx = tempEngine({ concurrency: 1, clock: new ManualClock(3_000_000) });
    const { engine } = ctx;
    const leaves = Array.from({ length: fan }, (_, i) => `p${i}`);
    await engine.deploy({
      name: 'wide',
      nodes: [{ id: 's', type: 'pass' }, ...leaves.map((id) => ({ id, type: 'pass' }))],
      edges: leaves.map((to) => ({ from: 's', to })),
    });
    const id = await engine.start('wide');
    const counts = async () => {
      const c: Record<string, number> = {};
      for (const n of (await engine.getInstance(id)).nodes) c[n.status] = (c[n.status] ?? 0) + 1;
      return c;
    };
    // when the turn that commits s's completion runs
    for (let i = 0; i < 5 && (await statuses(engine, id))['s'] !== 'COMPLETED'; i++) await turns(engine, 1);
    // then it started INSTANT_DISPATCH_PER_TX at once and claimed INSTANT_PER_TURN of the READY rest
    expect(await counts()).toEqual({ COMPLETED: 1, RUNNING: INSTANT_DISPATCH_PER_TX + INSTANT_PER_TURN, READY: fan - INSTANT_DISPATCH_PER_TX - INSTANT_PER_TURN });
    // and the following turns finish the rest, whatever the one slot
    for (let i = 0; i < 6 && (await engine.getInstance(id)).status !== 'COMPLETED'; i++) await turns(engine, 1);
    expect((await engine.getInstance(id)).status).toBe('COMPLETED');
    expect(await counts()).toEqual({ COMPLETED: fan + 1 });
  });
});
