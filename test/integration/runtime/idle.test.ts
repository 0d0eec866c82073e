/**
 * `isIdle()` means nothing is due: an approval waiting for a person is idle until its timeout is
 * due, not idle while the passed timeout waits to be handled, and idle again once its error path
 * ran. Real database file, a manual clock.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../engine/runtime/clock';
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
