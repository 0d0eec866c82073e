/**
 * An instance's start variables are stored once while unchanged: its input is its variables
 * (`input_json` holds the '' marker) until the first change of the variables, which stores the
 * input apart. Real database file.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { tempSqliteEngine } from '../../helpers/temp-engine';

describe('the start variables are stored once while unchanged', () => {
  let ctx: ReturnType<typeof tempSqliteEngine>;
  afterEach(async () => ctx.close());

  it('keeps the input apart from the first change of the variables on', async () => {
    ctx = tempSqliteEngine();
    const { engine } = ctx;
    await engine.deploy({
      name: 'vars',
      nodes: [
        { id: 'a', type: 'pass', config: { result: 1 } },
        { id: 'b', type: 'pass', config: { result: 2 }, output: 'total' },
      ],
      edges: [{ from: 'a', to: 'b' }],
    });
    const id = await engine.start('vars', { variables: { total: 1, who: 'ann' } });
    const stored = engine.db.raw.prepare<[number], { input_json: string }>(`SELECT input_json FROM instance WHERE id = ?`);
    expect(stored.get(id)?.input_json).toBe('');
    expect((await engine.getInstance(id)).input).toEqual({ total: 1, who: 'ann' });
    await engine.runUntil(async () => (await engine.isSettled(id)), 10_000);
    const inst = (await engine.getInstance(id));
    expect(inst.status).toBe('COMPLETED');
    expect(inst.variables).toEqual({ total: 2, who: 'ann' });
    expect(inst.input).toEqual({ total: 1, who: 'ann' });
    expect(JSON.parse(stored.get(id)?.input_json ?? 'null')).toEqual({ total: 1, who: 'ann' });
  });
});
