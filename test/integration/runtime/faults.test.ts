/**
 * Fault points (engine/runtime/faults.ts) are armed only on purpose: the RUNNEL_FAULTS variable
 * alone never kills a real worker. Real database file.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { turn } from '../../helpers/probe-nodes';
import { runToSettled, tempEngine } from '../../helpers/temp-engine';

describe('fault points', () => {
  let ctx: ReturnType<typeof tempEngine>;
  afterEach(async () => {
    delete process.env.RUNNEL_FAULTS;
    await ctx.close();
  });

  it('are not armed by RUNNEL_FAULTS alone (a stray variable never kills a real worker)', async () => {
    process.env.RUNNEL_FAULTS = 'claimed=throw';
    ctx = tempEngine();
    const { engine } = ctx;
    await engine.deploy({ name: 'plain', nodes: [{ id: 'a', type: 'pass' }] });
    const id = await engine.start('plain');
    await turn();
    const inst = await runToSettled(engine, id);
    expect(inst.status).toBe('COMPLETED');
    expect((await engine.history(id)).some((h) => h.type === 'node.recovered')).toBe(false);
  });
});
