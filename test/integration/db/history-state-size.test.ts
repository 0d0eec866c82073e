/**
 * What time travel's record (`history_state`, engine/store/history-state.ts) costs a completed
 * 4-node instance, measured in the file's own pages (dbstat): the table and its index, per
 * instance, beside what `history` itself takes. Real SQLite file.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { runToSettled, tempSqliteEngine, type TempEngine } from '../../helpers/temp-engine';
import type { SqliteEngine } from '../../../engine/runtime/engine';

describe('time travel record size', () => {
  let ctx: TempEngine<SqliteEngine>;
  afterEach(async () => ctx.close());

  it('adds under 1 KiB per completed 4-node instance', async () => {
    // Given a 4-node workflow whose nodes each write one small variable, and 200 instances run to the end
    ctx = tempSqliteEngine();
    const { engine } = ctx;
    await engine.deploy({
      name: 'four',
      nodes: [
        { id: 'fetch', type: 'pass', input: '{ "id": orderId, "qty": 2 }', output: 'order' },
        { id: 'price', type: 'pass', input: '{ "total": order.qty * 21 }', output: 'price' },
        { id: 'charge', type: 'pass', input: '{ "charged": price.total, "ok": true }', output: 'payment' },
        { id: 'notify', type: 'pass', input: '{ "sent": true }', output: 'notice' },
      ],
      edges: [
        { from: 'fetch', to: 'price' },
        { from: 'price', to: 'charge' },
        { from: 'charge', to: 'notify' },
      ],
    });
    const N = 200;
    const ids = await engine.startMany('four', Array.from({ length: N }, (_, i) => ({ orderId: `o-${i}` })));
    for (const id of ids) expect((await runToSettled(engine, id)).status).toBe('COMPLETED');
    // When the pages of each table are summed
    const db = engine.db.raw;
    const bytes = (names: string[]) =>
      (db.prepare(`SELECT coalesce(sum(pgsize - unused), 0) AS n FROM dbstat WHERE name IN (${names.map(() => '?').join(', ')})`).get(...names) as { n: number }).n;
    const state = bytes(['history_state']);
    const history = bytes(['history', 'history_instance']);
    const rows = (db.prepare(`SELECT count(*) AS n, sum(length(patch_json)) AS json FROM history_state`).get() as { n: number; json: number });
    const perInstance = Math.round(state / N);
    console.log(
      `history_state: ${perInstance} bytes per completed 4-node instance (${rows.n / N} rows, ${Math.round(rows.json / N)} bytes of patch JSON); history itself: ${Math.round(history / N)} bytes`,
    );
    // Then the record stays below 1 KiB an instance (issue 14 asks for the figure; the test prints it)
    expect(rows.n).toBeGreaterThan(0);
    expect(perInstance).toBeLessThan(1024);
  });
});
