/**
 * A full disk (issue 17, item 6): callers get DATABASE_FULL (transient, nothing written), the
 * worker backs off and says so once per change (not a stack a turn), and when space comes back it
 * resumes by itself, every acknowledged start in the file and worked to its end.
 *
 * The disk is filled with SQLite's own limit, `PRAGMA max_page_count` on the engine's connection:
 * a write past it fails with SQLITE_FULL exactly as on a full disk.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { EngineError } from '../../../engine/errors';
import { tempSqliteEngine } from '../../helpers/temp-engine';

let ctx: ReturnType<typeof tempSqliteEngine> | undefined;
afterEach(async () => {
  await ctx?.close();
  ctx = undefined;
});

describe('a full disk', () => {
  it('answers DATABASE_FULL, logs once, and loses nothing once space is back', { timeout: 60_000 }, async () => {
    ctx = tempSqliteEngine({ pollIntervalMs: 10 });
    const { engine } = ctx;
    await engine.deploy({ name: 'fill', nodes: [{ id: 'a', type: 'pass' }, { id: 'b', type: 'pass' }], edges: [{ from: 'a', to: 'b' }] });
    const raw = engine.db.raw;

    // given: the file may grow by a few pages only
    const pages = raw.pragma('page_count', { simple: true }) as number;
    // (enough for a few starts: each writes its instance, node states, history and time travel's record)
    raw.pragma(`max_page_count = ${pages + 12}`);
    const acknowledged: number[] = [];
    let refused: EngineError | undefined;
    for (let i = 0; i < 2000 && refused === undefined; i++) {
      try {
        acknowledged.push(...(await engine.startMany('fill', Array.from({ length: 5 }, (_, j) => ({ i, j, pad: 'p'.repeat(400) })))));
      } catch (err) {
        if (!(err instanceof EngineError)) throw err;
        refused = err;
      }
    }

    // then: the start is refused with the typed, transient code
    expect(refused?.code).toBe('DATABASE_FULL');
    expect(refused?.kind).toBe('transient');
    expect(refused?.message).toMatch(/disk is full/);

    // when: the worker runs against the full file for a while
    const logged: string[] = [];
    const original = console.error;
    console.error = (...a: unknown[]) => void logged.push(a.map(String).join(' '));
    try {
      engine.startWorker();
      await new Promise((r) => setTimeout(r, 1500));
      // then: one line for the state it is in (not one a turn)
      expect(logged.filter((l) => l.includes('DATABASE_FULL')), logged.join('\n').slice(0, 3000)).toHaveLength(1);
      expect(logged.join('\n')).not.toMatch(/\n\s+at /);

      // when: space comes back
      raw.pragma('max_page_count = 1073741823');
      await engine.runUntil(async () => (await engine.countByStatus()).COMPLETED === acknowledged.length, 30_000);
    } finally {
      console.error = original;
      await engine.stopWorker();
    }

    // then: every acknowledged start ran to its end, and the worker said it commits again
    expect(await engine.countByStatus()).toEqual({ COMPLETED: acknowledged.length });
    expect(acknowledged.length).toBeGreaterThan(0);
    expect(logged.some((l) => l.includes('commit again'))).toBe(true);
  });
});
