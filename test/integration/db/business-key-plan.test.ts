/**
 * An instance is found by its business key with one index seek (SQLite migration 17,
 * `instance_business`): a signal sent by business key looks its live instance up so, as does
 * the instance list's `businessKey` filter. Without the index both read every live instance (22 ms
 * a signal at 100,000 live). Real file; the plan SQLite chooses for the statements the engine
 * prepares (EXPLAIN QUERY PLAN), and the signal's answer.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { tempSqliteEngine, type TempEngine } from '../../helpers/temp-engine';
import type { SqliteEngine } from '../../../engine/api';

describe('instances by business key', () => {
  let ctx: TempEngine<SqliteEngine> | undefined;
  afterEach(async () => ctx?.close());

  it('a signal by business key and the list filtered by it seek instance_business', async () => {
    ctx = tempSqliteEngine();
    const { engine } = ctx;
    await engine.deploy({ name: 'bk', nodes: [{ id: 'wait', type: 'event', config: { name: 'go' } }] });
    // Given live instances, half of them with a business key
    const ids: number[] = [];
    for (let k = 0; k < 400; k++) ids.push(await engine.start('bk', k % 2 === 1 ? { businessKey: `order-${k}` } : {}));
    // When a signal and a list name a business key, with the statements they prepare captured
    const raw = engine.db.raw;
    const prepare = raw.prepare.bind(raw);
    const prepared: string[] = [];
    (raw as { prepare: unknown }).prepare = (source: string) => {
      prepared.push(source);
      return prepare(source);
    };
    let sent: Awaited<ReturnType<typeof engine.signal>>;
    let listed: Awaited<ReturnType<typeof engine.listInstances>>;
    try {
      sent = await engine.signal({ businessKey: 'order-7' }, { event: 'go', data: { ok: true } });
      listed = await engine.listInstances({ businessKey: 'order-9' });
    } finally {
      (raw as { prepare: unknown }).prepare = prepare;
    }
    // Then each found its instance
    expect(sent.instanceId).toBe(ids[7]);
    expect(listed.map((i) => i.id)).toEqual([ids[9]]);
    // And every statement naming the business key seeks the index
    const byKey = prepared.filter((sql) => /business_key = \?/.test(sql));
    expect(byKey.length).toBeGreaterThanOrEqual(2);
    for (const sql of byKey) {
      const n = (sql.match(/\?/g) ?? []).length;
      const plan = (raw.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...Array.from({ length: n }, () => 'order-7')) as { detail: string }[]).map((r) => r.detail);
      expect(plan, sql).toContain('SEARCH i USING INDEX instance_business (business_key=?)');
    }
  });
});
