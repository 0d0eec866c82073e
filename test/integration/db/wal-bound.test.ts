/**
 * A WAL past its bound is reported (issue 17, item 8): while a long reader holds old frames, the
 * WAL grows past `journal_size_limit` and nothing can reset it; `storage:health` and `metrics:get`
 * say so, the worker logs it once (and once when it is back), and the status bar warns
 * (renderer/src/components/StatusBar.tsx reads `storage:health`).
 */
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { createHandlers, dispatch } from '../../../engine/api/handlers';
import { tempSqliteEngine } from '../../helpers/temp-engine';

let ctx: ReturnType<typeof tempSqliteEngine> | undefined;
afterEach(async () => {
  await ctx?.close();
  ctx = undefined;
});

describe('a WAL past its bound', () => {
  it('is reported by storage:health and metrics:get, and logged once each way by the worker', { timeout: 60_000 }, async () => {
    ctx = tempSqliteEngine({ walLimitBytes: 256 * 1024, synchronous: 'NORMAL' });
    const { engine, file } = ctx;
    const handlers = createHandlers(engine);
    await engine.deploy({ name: 'fill', nodes: [{ id: 'a', type: 'pass' }, { id: 'b', type: 'pass' }], edges: [{ from: 'a', to: 'b' }] });
    const health = async () => {
      const r = await dispatch(handlers, 'storage:health', {});
      if (!r.ok) throw new Error(r.error.message);
      return (r.value as { wal: { bytes: number; limitBytes: number } }).wal;
    };
    expect((await health()).limitBytes).toBe(256 * 1024);

    const logged: string[] = [];
    const original = console.error;
    console.error = (...a: unknown[]) => void logged.push(a.map(String).join(' '));
    const reader = new Database(file, { readonly: true });
    try {
      // given: a reader holding a read transaction open (a snapshot of the file as it is now)
      reader.exec('BEGIN');
      reader.prepare('SELECT count(*) FROM instance').get();

      // when: work goes on
      await engine.startMany('fill', Array.from({ length: 600 }, (_, i) => ({ i, pad: 'p'.repeat(300) })));
      await engine.runUntil(async () => (await engine.countByStatus()).COMPLETED === 600, 30_000);
      // (a worker turn looks at the WAL every few seconds)
      await engine.runUntil(() => logged.some((l) => l.includes('above its bound')), 15_000);

      // then: reported, and logged once
      const over = await health();
      expect(over.bytes).toBeGreaterThan(over.limitBytes);
      const metrics = await dispatch(handlers, 'metrics:get', {});
      expect(metrics).toMatchObject({ ok: true, value: { storage: { wal: { limitBytes: 256 * 1024 } } } });
      expect(logged.filter((l) => l.includes('above its bound'))).toHaveLength(1);
      expect(logged.find((l) => l.includes('above its bound'))).toMatch(/a reader holds old frames/);

      // when: the reader lets go, the WAL is reset and truncated back
      reader.exec('COMMIT');
      await engine.startMany('fill', [{ i: -1 }]);
      await engine.runUntil(async () => (await health()).bytes <= 256 * 1024 && logged.some((l) => l.includes('back within its bound')), 20_000);
      expect(logged.filter((l) => l.includes('back within its bound'))).toHaveLength(1);
    } finally {
      console.error = original;
      reader.close();
    }
  });
});
