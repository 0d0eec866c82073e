/**
 * Several incidents at once: parallel branches that fail with onFailure "suspend" keep the
 * instance SUSPENDED until a person has resolved every one of them, and a join "all" behind them
 * runs once all are resolved (never left WAITING). Real database files in temp dirs.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { everyOf, nodeStatus } from '../../helpers/probe-nodes';
import { runToSettled, tempEngine } from '../../helpers/temp-engine';

const boom = (id: string) => ({ id, type: 'script', config: { code: `throw new Error('${id} broke')` }, retry: { maxAttempts: 1 }, onFailure: 'suspend' as const });

describe('several incidents at once', () => {
  let ctx: ReturnType<typeof tempEngine>;
  afterEach(async () => ctx.close());

  it('stays SUSPENDED until every failed branch is resolved, then completes', async () => {
    // given two parallel branches that both fail with onFailure "suspend"
    ctx = tempEngine();
    const { engine } = ctx;
    await engine.deploy({ name: 'two-incidents', nodes: [boom('x'), boom('y')], edges: [] });
    const id = await engine.start('two-incidents');
    await engine.runUntil(async () => (await engine.getInstance(id)).nodes.every((n) => n.status === 'FAILED'), 10_000);
    let inst = (await engine.getInstance(id));
    expect(inst.status).toBe('SUSPENDED');
    const first = inst.suspension?.nodeId;
    expect(['x', 'y']).toContain(first);
    const second = first === 'x' ? 'y' : 'x';

    // when the first incident is skipped
    await engine.resume(id, { action: 'skip', result: { fixed: first }, actor: 'ops' });

    // then the instance still waits for a person, now at the other branch
    inst = (await engine.getInstance(id));
    expect(inst.status).toBe('SUSPENDED');
    expect(inst.suspension?.nodeId).toBe(second);

    // and skipping that one too completes it
    await engine.resume(id, { action: 'skip', result: { fixed: second }, actor: 'ops' });
    inst = await runToSettled(engine, id);
    expect(inst.status).toBe('COMPLETED');
    expect(inst.nodes.map((n) => n.status)).toEqual(['COMPLETED', 'COMPLETED']);
  });

  it('with a join "all" behind both branches, runs the join once both are resolved (no WAITING forever)', async () => {
    ctx = tempEngine();
    const { engine } = ctx;
    await engine.deploy({
      name: 'two-incidents-join',
      nodes: [boom('x'), boom('y'), { id: 'after', type: 'pass', join: 'all' }],
      edges: [
        { from: 'x', to: 'after' },
        { from: 'y', to: 'after' },
      ],
    });
    const id = await engine.start('two-incidents-join');
    await engine.runUntil(() => everyOf(['x', 'y'], async (n) => (await nodeStatus(engine, id, n)) === 'FAILED'), 10_000);
    await engine.resume(id, { action: 'skip', result: 1, actor: 'ops' });
    expect((await engine.getInstance(id)).status).toBe('SUSPENDED');
    await engine.resume(id, { action: 'retry', actor: 'ops' });
    // the retry fails again (same script): the instance is SUSPENDED at that node once more
    let inst = await runToSettled(engine, id);
    expect(inst.status).toBe('SUSPENDED');
    await engine.resume(id, { action: 'skip', result: 2, actor: 'ops' });
    inst = await runToSettled(engine, id);
    expect(inst.status).toBe('COMPLETED');
    expect(inst.nodes.find((n) => n.id === 'after')?.status).toBe('COMPLETED');
  });
});
