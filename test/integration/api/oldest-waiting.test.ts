/**
 * The Dashboard's "oldest waiting instance" (`metrics:get` → `oldestWaiting`, the read model's
 * `oldestWaiting`) is the WAITING or SUSPENDED instance created first, not the one with the lowest
 * id: ids and creation times disagree when a clock was set back, when an instance was copied in
 * from another database (`runnel copy`), or when a fork or a schedule's catch-up is stamped
 * earlier. On both backends (a conformance file of `integration-pg`).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Output } from '../../../engine/api/contract';
import { createHandlers, dispatch } from '../../../engine/api/handlers';
import { ManualClock } from '../../../engine/runtime/clock';
import { runToSettled, tempEngine, type TempEngine } from '../../helpers/temp-engine';

const T0 = Date.UTC(2026, 11, 1, 12, 0, 0);
const HOUR = 3_600_000;

let t: TempEngine;
let clock: ManualClock;

beforeEach(async () => {
  clock = new ManualClock(T0);
  t = tempEngine({ clock });
  await t.engine.deploy({ name: 'asks', nodes: [{ id: 'ask', type: 'approval', config: {} }], edges: [] });
  await t.engine.deploy({
    name: 'breaks',
    nodes: [
      {
        id: 'boom',
        type: 'script',
        config: { code: "throw new Error('boom')" },
        retry: { maxAttempts: 1 },
        onFailure: 'suspend',
      },
    ],
    edges: [],
  });
});
afterEach(async () => {
  await t.close();
});

/** Starts `workflow` with the clock at `at` and runs it until it waits for a person. */
async function startAt(workflow: string, at: number): Promise<number> {
  clock.set(at);
  const id = await t.engine.start(workflow);
  await runToSettled(t.engine, id);
  return id;
}

describe('oldest waiting instance', () => {
  it('is the one created first among WAITING and SUSPENDED, whatever the ids say', async () => {
    // given: ids in one order, creation times in another (the clock set back between starts)
    const newestTime = await startAt('asks', T0); // lowest id, created last
    const oldestTime = await startAt('asks', T0 - 3 * HOUR); // created first
    const middle = await startAt('breaks', T0 - HOUR); // SUSPENDED, between the two
    expect(newestTime).toBeLessThan(oldestTime);
    expect(oldestTime).toBeLessThan(middle);
    expect((await t.engine.getInstance(oldestTime)).status).toBe('WAITING');
    expect((await t.engine.getInstance(middle)).status).toBe('SUSPENDED');

    // then: the read model names the one waiting longest, with its creation time
    expect(await t.engine.oldestWaiting()).toMatchObject({
      id: oldestTime,
      status: 'WAITING',
      createdAt: T0 - 3 * HOUR,
      waitingFor: 'approval',
    });
    // and the API says the same
    const m = (await dispatch(createHandlers(t.engine), 'metrics:get', {})) as {
      ok: true;
      value: Output<'metrics:get'>;
    };
    expect(m.value.oldestWaiting).toMatchObject({ id: oldestTime, createdAt: T0 - 3 * HOUR });

    // when: that one ends, the SUSPENDED one (created an hour before the lowest id) is next
    clock.set(T0 + HOUR);
    await t.engine.cancel(oldestTime);
    expect(await t.engine.oldestWaiting()).toMatchObject({
      id: middle,
      status: 'SUSPENDED',
      createdAt: T0 - HOUR,
    });

    // and when only the lowest id is left, it is that one
    await t.engine.cancel(middle);
    expect(await t.engine.oldestWaiting()).toMatchObject({ id: newestTime, createdAt: T0 });
    await t.engine.cancel(newestTime);
    expect(await t.engine.oldestWaiting()).toBeNull();
  });

  it('takes the lower id of two created in the same millisecond', async () => {
    const first = await startAt('asks', T0);
    const second = await startAt('breaks', T0);
    expect(first).toBeLessThan(second);
    expect(await t.engine.oldestWaiting()).toMatchObject({ id: first });
  });
});
