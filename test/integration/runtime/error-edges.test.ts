/**
 * Behind an error edge the handler sees the failure of its source, as `$error` and as
 * `$steps.<failed node>.error`. Real database file.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { runToSettled, tempEngine } from '../../helpers/temp-engine';

describe('behind an error edge', () => {
  let ctx: ReturnType<typeof tempEngine>;
  afterEach(async () => ctx.close());

  it('the handler sees the failure as $error and as $steps.<failed node>.error', async () => {
    ctx = tempEngine();
    const { engine } = ctx;
    await engine.deploy({
      name: 'handled',
      nodes: [
        { id: 'charge', type: 'script', config: { code: "throw new Error('card declined')" }, retry: { maxAttempts: 1 } },
        { id: 'apologise', type: 'pass', input: '{ "why": $error.message, "again": $steps.charge.error.message }', output: 'apology' },
      ],
      edges: [{ from: 'charge', to: 'apologise', on: 'error' }],
    });
    const id = await engine.start('handled');
    const inst = await runToSettled(engine, id);
    expect(inst.status).toBe('COMPLETED');
    expect(inst.variables.apology).toEqual({ why: 'script threw Error: card declined', again: 'script threw Error: card declined' });
  });

  it('node ids named like Object.prototype members: the failure of `__proto__` reaches its handler, and results of the others stay apart', async () => {
    ctx = tempEngine();
    const { engine } = ctx;
    await engine.deploy({
      name: 'handled-odd-ids',
      nodes: [
        { id: 'constructor', type: 'pass', input: '{ "total": 42 }', output: 'first' },
        { id: '__proto__', type: 'script', config: { code: "throw new Error('declined')" }, retry: { maxAttempts: 1 } },
        { id: 'toString', type: 'pass', input: '{ "why": $error.message, "total": $steps.constructor.total, "mine": $steps.toString }', output: 'handled' },
      ],
      edges: [
        { from: 'constructor', to: '__proto__' },
        { from: '__proto__', to: 'toString', on: 'error' },
      ],
    });
    const id = await engine.start('handled-odd-ids');
    const inst = await runToSettled(engine, id);
    expect(inst.status).toBe('COMPLETED');
    // `mine`: the handler's own step has no result yet, so nothing (not an inherited function)
    expect(inst.variables.handled).toEqual({ why: 'script threw Error: declined', total: 42 });
  });
});
