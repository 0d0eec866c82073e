/**
 * A template that reads a missing variable fails its node at once with a non-retryable
 * EXPRESSION_ERROR naming the variable, while a `$exists` guard still works. Real database file.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { runToSettled, tempEngine } from '../../helpers/temp-engine';

describe('a template that reads a missing variable', () => {
  let ctx: ReturnType<typeof tempEngine>;
  afterEach(async () => ctx.close());

  it('fails its node at once with a non-retryable EXPRESSION_ERROR naming the variable; a $exists guard still works', async () => {
    ctx = tempEngine();
    const { engine } = ctx;
    await engine.deploy({
      name: 'holes',
      nodes: [
        { id: 'guarded', type: 'pass', config: { result: 'to {{ $exists(who) ? who : "nobody" }}' }, output: 'greeting' },
        { id: 'url', type: 'pass', config: { result: '{{ base }}/{{ missing.deep }}/{{ n }}' }, retry: { maxAttempts: 3, initialIntervalMs: 1 } },
      ],
      edges: [{ from: 'guarded', to: 'url' }],
    });
    const inst = await runToSettled(engine, await engine.start('holes', { variables: { base: 'http://x', n: null } }));
    expect(inst.status).toBe('FAILED');
    expect(inst.variables.greeting).toBe('to nobody');
    const node = inst.nodes.find((n) => n.id === 'url');
    expect(node).toMatchObject({ status: 'FAILED', attempt: 1 });
    expect(node?.error).toMatchObject({ code: 'EXPRESSION_ERROR', retryable: false });
    expect((node?.error as { message: string }).message).toMatch(/reads missing variable "missing"/);
  });
});
