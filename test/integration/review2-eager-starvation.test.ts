/**
 * Second review of the hot path: eager dispatch takes every free slot before due rows are
 * claimed (`left = capacity - eager.claims.length` in Worker.tick). While chains keep the slots
 * busy, nothing due is ever claimed: a passed deadline does not fail its instance (it completes
 * instead), and READY rows of other instances (new starts, timers, retries) wait until the chains
 * end. Before eager dispatch the due rows were claimed in next_run_at order, so both were served
 * at the next free slot.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../engine/runtime/clock';
import { tempEngine } from '../helpers/temp-engine';

/** Lets handlers started by the last turn settle. */
const settle = () => new Promise<void>((resolve) => setTimeout(resolve, 30));

const chain = (name: string, n: number, extra: Record<string, unknown> = {}) => ({
  name,
  ...extra,
  nodes: Array.from({ length: n }, (_, i) => ({ id: `n${i}`, type: 'pass', config: { result: i } })),
  edges: Array.from({ length: n - 1 }, (_, i) => ({ from: `n${i}`, to: `n${i + 1}` })),
});

describe('review2: due rows are not starved by eager dispatch', () => {
  let ctx: ReturnType<typeof tempEngine>;
  afterEach(async () => ctx.close());

  it('fails an instance whose deadline passed even while its chain keeps every slot busy', async () => {
    const clock = new ManualClock(1_000_000);
    ctx = tempEngine({ clock, concurrency: 1 });
    const { engine } = ctx;
    await engine.deploy(chain('dl', 5, { deadlineMs: 1000 }));
    const id = await engine.start('dl', {});
    await engine.tick(); // claims n0
    await settle();
    clock.advance(5000); // the deadline passes while n0 runs
    for (let i = 0; i < 10 && !(await engine.isSettled(id)); i++) {
      await engine.tick();
      await settle();
    }
    const inst = (await engine.getInstance(id));
    expect({ status: inst.status, error: (inst.error as { code?: string } | undefined)?.code }).toEqual({ status: 'FAILED', error: 'DEADLINE_EXCEEDED' });
  });

  it('runs a READY step of another instance before a long chain has finished', async () => {
    const clock = new ManualClock(1_000_000);
    ctx = tempEngine({ clock, concurrency: 1 });
    const { engine } = ctx;
    await engine.deploy(chain('long', 8));
    await engine.deploy(chain('short', 1));
    const long = await engine.start('long', {});
    await engine.tick(); // claims long's n0
    clock.advance(1);
    const short = await engine.start('short', {}); // READY, due now
    clock.advance(1);
    let shortDoneWhileLongRan = false;
    for (let i = 0; i < 30 && !((await engine.isSettled(long)) && (await engine.isSettled(short))); i++) {
      await settle();
      await engine.tick();
      clock.advance(1);
      if ((await engine.getInstance(short)).status === 'COMPLETED' && (await engine.getInstance(long)).status !== 'COMPLETED') shortDoneWhileLongRan = true;
    }
    expect((await engine.getInstance(long)).status).toBe('COMPLETED');
    expect((await engine.getInstance(short)).status).toBe('COMPLETED');
    expect(shortDoneWhileLongRan).toBe(true);
  });
});
