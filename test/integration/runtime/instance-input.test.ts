/**
 * An instance's start variables are stored once while unchanged: its input is its variables
 * (`input_json` holds the '' marker) until the first change of the variables, which stores the
 * input apart. Real database file.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { rowsIn } from '../../helpers/db-rows';
import { tempEngine } from '../../helpers/temp-engine';

describe('the start variables are stored once while unchanged', () => {
  let ctx: ReturnType<typeof tempEngine>;
  afterEach(async () => ctx.close());

  it('keeps the input apart from the first change of the variables on', async () => {
    ctx = tempEngine();
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
    const stored = async () => (await rowsIn<{ input_json: string }>(ctx.file, `SELECT input_json FROM instance WHERE id = ?`, [id]))[0]?.input_json;
    expect(await stored()).toBe('');
    expect((await engine.getInstance(id)).input).toEqual({ total: 1, who: 'ann' });
    await engine.runUntil(async () => (await engine.isSettled(id)), 10_000);
    const inst = (await engine.getInstance(id));
    expect(inst.status).toBe('COMPLETED');
    expect(inst.variables).toEqual({ total: 2, who: 'ann' });
    expect(inst.input).toEqual({ total: 1, who: 'ann' });
    expect(JSON.parse((await stored()) ?? 'null')).toEqual({ total: 1, who: 'ann' });
  });
});
