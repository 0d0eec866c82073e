/**
 * The nesting limit (issue 17, item 3): a value nested past MAX_NESTING_DEPTH, or one containing
 * itself, is refused with a typed error naming the path — by validation, the API, the CLI, a
 * start, and as a node's result — and everything within the limit works end to end. Before, 4,000
 * levels answered `INTERNAL: Maximum call stack size exceeded`, 3,000 failed attempts with a
 * retryable RangeError, and a self-referencing YAML alias answered INTERNAL.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createHandlers, dispatch } from '../../../engine/api/handlers';
import { MAX_NESTING_DEPTH } from '../../../engine/dsl/value-limits';
import { EngineError } from '../../../engine/errors';
import { runBin } from '../../helpers/cli';
import { tempEngine } from '../../helpers/temp-engine';

let ctx: ReturnType<typeof tempEngine> | undefined;
afterEach(async () => {
  await ctx?.close();
  ctx = undefined;
});

/** `{ a: { a: … { a: leaf } } }`, `levels` objects deep (built without recursion). */
function nested(levels: number, leaf: unknown = 1): Record<string, unknown> {
  let v: unknown = leaf;
  for (let i = 0; i < levels; i++) v = { a: v };
  return v as Record<string, unknown>;
}

const withConfig = (name: string, result: unknown) => ({ name, nodes: [{ id: 'p', type: 'pass', config: { result } }] });

describe('past the limit', () => {
  it('a definition is refused by validation, the API and the CLI with the path, never INTERNAL', async () => {
    ctx = tempEngine();
    const handlers = createHandlers(ctx.engine);
    const deep = withConfig('deep', nested(4000));

    const validated = await dispatch(handlers, 'workflow:validate', { definition: deep });
    expect(validated).toMatchObject({ ok: false, error: { code: 'BAD_REQUEST' } });
    expect(JSON.stringify(validated)).toMatch(/nested deeper than 100 levels of objects and arrays at definition\.nodes\[0\]\.config\.result\.a\.a/);

    const saved = await dispatch(handlers, 'workflow:save', { definition: withConfig('deep', nested(4500)) });
    expect(saved).toMatchObject({ ok: false, error: { code: 'BAD_REQUEST' } });
    expect(JSON.stringify(saved)).not.toMatch(/above the limit of 5242880/);

    const deployed = await ctx.engine.deploy(deep).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(deployed).toBeInstanceOf(EngineError);
    expect((deployed as EngineError).code).toBe('INVALID_WORKFLOW');
    expect((deployed as EngineError).details).toEqual([expect.objectContaining({ code: 'TOO_DEEP', path: ['nodes', 0, 'config', 'result', ...Array<string>(96).fill('a')] })]);

    const file = path.join(ctx.dir, 'deep.workflow.json');
    fs.writeFileSync(file, JSON.stringify(deep));
    const cli = await runBin(['validate', file]);
    expect(cli.code).toBe(2);
    expect(cli.stderr).toMatch(/INVALID_WORKFLOW: .*nested deeper than 100 levels/);
    expect(cli.stderr).not.toMatch(/Maximum call stack|\n\s+at /);
  });

  it('a YAML alias inside its own anchor is refused as containing itself', async () => {
    ctx = tempEngine();
    const handlers = createHandlers(ctx.engine);
    const text = 'name: loop\nnodes: &x [{ id: a, type: pass, config: { result: *x } }]\n';
    const imported = await dispatch(handlers, 'workflow:import', { text, fileName: 'loop.workflow.yaml' });
    expect(imported).toMatchObject({ ok: false, error: { code: 'INVALID_WORKFLOW' } });
    expect(JSON.stringify(imported)).toMatch(/contains itself at nodes\[0\]\.config\.result/);
    const file = path.join(ctx.dir, 'loop.workflow.yaml');
    fs.writeFileSync(file, text);
    const cli = await runBin(['validate', file]);
    expect(cli.code).toBe(2);
    expect(cli.stderr).toMatch(/INVALID_WORKFLOW: .*contains itself/);
  });

  it('start variables are refused with INVALID_VARIABLES naming the path', async () => {
    ctx = tempEngine();
    await ctx.engine.deploy({ name: 'plain', nodes: [{ id: 'p', type: 'pass' }] });
    const refused = await ctx.engine.start('plain', { variables: { order: nested(150) } }).then(
      () => undefined,
      (e: unknown) => e as EngineError,
    );
    expect(refused?.code).toBe('INVALID_VARIABLES');
    expect(refused?.message).toMatch(/the variables: nested deeper than 100 levels .* at order\.a\.a/);
  });

  it('a node result is refused at once (not retried, not a RangeError)', async () => {
    ctx = tempEngine();
    const code = 'let o = {}; let c = o; for (let i = 0; i < 300; i++) { c.a = {}; c = c.a; } return o;';
    await ctx.engine.deploy({ name: 'builds', nodes: [{ id: 's', type: 'script', config: { code }, retry: { maxAttempts: 3 } }] });
    const id = await ctx.engine.start('builds');
    await ctx.engine.runUntil(() => ctx!.engine.isSettled(id), 20_000);
    const inst = await ctx.engine.getInstance(id);
    expect(inst.status).toBe('FAILED');
    const s = inst.nodes.find((n) => n.id === 's');
    expect(s?.attempt).toBe(1);
    expect(s?.error).toMatchObject({ code: 'RESULT_TOO_LARGE', retryable: false });
    expect((s?.error as { message: string }).message).toMatch(/its result: nested deeper than 100 levels/);
  });
});

describe('within the limit', () => {
  it('a definition nested to the limit validates, saves, runs and exports as it came', async () => {
    ctx = tempEngine();
    // The definition's own levels (root, nodes, the node, config) count too.
    const result = nested(MAX_NESTING_DEPTH - 4, 'leaf');
    const wf = withConfig('at-the-limit', result);
    await ctx.engine.deploy(wf);
    const id = await ctx.engine.start('at-the-limit', { variables: { deep: nested(MAX_NESTING_DEPTH - 2) } });
    await ctx.engine.runUntil(() => ctx!.engine.isSettled(id), 20_000);
    const inst = await ctx.engine.getInstance(id);
    expect(inst.status).toBe('COMPLETED');
    expect(inst.nodes[0]?.output).toEqual(result);
    expect(inst.variables).toEqual({ deep: nested(MAX_NESTING_DEPTH - 2) });
    expect((await ctx.engine.exportWorkflow('at-the-limit')).nodes).toEqual(wf.nodes);
  });
});
