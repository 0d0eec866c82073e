/**
 * A turn's outcomes are committed in one transaction, without a savepoint each: an outcome that
 * fails to commit is isolated (its claim stays leased, and the step runs again once the lease
 * expires) while the others of the turn land. Real database file; a trigger refuses one commit.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { tempSqliteEngine } from '../../helpers/temp-engine';

/** Lets handlers started by the last turn settle (they run in microtasks and immediates). */
const settle = () => new Promise<void>((resolve) => setTimeout(resolve, 30));

describe('outcomes committed without a savepoint each', () => {
  let ctx: ReturnType<typeof tempSqliteEngine>;
  afterEach(async () => {
    vi.restoreAllMocks();
    await ctx.close();
  });

  it('isolates an outcome that fails to commit: the others of its turn land, its claim stays leased', async () => {
    ctx = tempSqliteEngine();
    const { engine } = ctx;
    const errors = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    await engine.deploy({ name: 'one', nodes: [{ id: 'a', type: 'pass' }] });
    // A trigger makes completing instance 2's node fail inside the turn's transaction.
    engine.db.raw.exec(`CREATE TRIGGER refuse_two BEFORE UPDATE OF status ON node_state
      WHEN NEW.instance_id = 2 AND NEW.status = 'COMPLETED' BEGIN SELECT RAISE(ABORT, 'refused by test'); END`);
    const ids = await engine.startMany('one', [{}, {}, {}]);
    expect(ids).toEqual([1, 2, 3]);
    expect(await engine.tick()).toBe(3);
    await settle();
    await engine.tick();
    expect((await engine.getInstance(1)).status).toBe('COMPLETED');
    expect((await engine.getInstance(3)).status).toBe('COMPLETED');
    const two = (await engine.getInstance(2));
    expect(two.status).toBe('RUNNING');
    expect(two.nodes[0]?.status).toBe('RUNNING');
    expect(errors.mock.calls.some((c) => String(c[0]).includes('cannot commit completed of instance 2'))).toBe(true);
    // Once the cause is gone, the expired lease lets the step run again and finish.
    engine.db.raw.exec(`DROP TRIGGER refuse_two`);
    engine.db.raw.prepare(`UPDATE schedule SET next_run_at = 0 WHERE instance_id = 2`).run();
    await engine.runUntil(async () => (await engine.isSettled(2)), 10_000);
    expect((await engine.getInstance(2)).status).toBe('COMPLETED');
  });
});
