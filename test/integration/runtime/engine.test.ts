import { afterEach, describe, expect, it } from 'vitest';
import { runToSettled, tempEngine } from '../../helpers/temp-engine';

describe('engine: a linear workflow on a real file', () => {
  let ctx: ReturnType<typeof tempEngine>;
  afterEach(async () => ctx.close());

  it('runs pass → script → pass to COMPLETED with outputs merged into the globals', async () => {
    ctx = tempEngine();
    const { engine } = ctx;
    const dep = await engine.deploy({
      name: 'linear',
      nodes: [
        { id: 'a', type: 'pass', config: { result: { n: 2 } }, output: 'first' },
        { id: 'b', type: 'script', config: { code: 'return input.first.n * 21' }, output: 'answer' },
        { id: 'c', type: 'pass' },
      ],
      edges: [
        { from: 'a', to: 'b' },
        { from: 'b', to: 'c', when: 'answer = 42' },
      ],
    });
    expect(dep).toMatchObject({ name: 'linear', version: 1, created: true });
    const id = await engine.start('linear', { variables: { who: 'me' } });
    const inst = await runToSettled(engine, id);
    expect(inst.status).toBe('COMPLETED');
    expect(inst.variables).toEqual({ who: 'me', first: { n: 2 }, answer: 42 });
    expect(inst.nodes.map((n) => [n.id, n.status]).sort()).toEqual([
      ['a', 'COMPLETED'],
      ['b', 'COMPLETED'],
      ['c', 'COMPLETED'],
    ]);
  });
});
