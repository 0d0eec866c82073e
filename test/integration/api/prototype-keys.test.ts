/**
 * One rule for `__proto__` keys (issue 17, item 7): refused with their path wherever a value
 * comes in — start variables through the API and the CLI, a definition's `config.result` and
 * `ui.positions`, a resume's variables, approval data, and a node's result — where before some
 * paths dropped them silently and others kept them. The global prototype is never touched.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createHandlers, dispatch } from '../../../engine/api/handlers';
import type { EngineError } from '../../../engine/errors';
import { runBin } from '../../helpers/cli';
import { tempEngine } from '../../helpers/temp-engine';

let ctx: ReturnType<typeof tempEngine> | undefined;
afterEach(async () => {
  await ctx?.close();
  ctx = undefined;
  // Nothing reached Object.prototype, whatever was sent.
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
});

const proto = (json: string): unknown => JSON.parse(json) as unknown;

describe('"__proto__" keys', () => {
  it('are refused in API payloads with the path: start variables, approval data, a definition', async () => {
    ctx = tempEngine();
    const handlers = createHandlers(ctx.engine);
    await ctx.engine.deploy({ name: 'plain', nodes: [{ id: 'p', type: 'pass' }] });

    const start = await dispatch(handlers, 'instance:start', proto('{"workflow":"plain","variables":{"order":{"__proto__":{"polluted":1}}}}'));
    expect(start).toMatchObject({ ok: false, error: { code: 'BAD_REQUEST', message: expect.stringMatching(/a "__proto__" key at variables\.order\.__proto__ is not accepted/) } });

    const save = await dispatch(handlers, 'workflow:save', proto('{"definition":{"name":"w","nodes":[{"id":"a","type":"pass"}],"ui":{"positions":{"__proto__":{"x":1,"y":2}}}}}'));
    expect(save).toMatchObject({ ok: false, error: { code: 'BAD_REQUEST' } });
    expect(JSON.stringify(save)).toMatch(/definition\.ui\.positions\.__proto__/);

    const approve = await dispatch(handlers, 'instance:approve', proto('{"id":1,"nodeId":"ask","approved":true,"data":{"__proto__":{"polluted":1}}}'));
    expect(approve).toMatchObject({ ok: false, error: { code: 'BAD_REQUEST' } });
    expect(await ctx.engine.listWorkflows()).toHaveLength(1);
  });

  it('are refused by validation of a definition read from a file, and by the CLI', async () => {
    ctx = tempEngine();
    const file = path.join(ctx.dir, 'w.workflow.json');
    fs.writeFileSync(file, '{"name":"w","nodes":[{"id":"a","type":"pass","config":{"result":{"__proto__":{"polluted":1}}}}]}');
    const validate = await runBin(['validate', file]);
    expect(validate.code).toBe(2);
    expect(validate.stderr).toMatch(/INVALID_WORKFLOW: .*"__proto__" key at nodes\[0\]\.config\.result\.__proto__/);

    const deployed = await ctx.engine.deploy(proto('{"name":"w","nodes":[{"id":"a","type":"pass","config":{"result":{"__proto__":1}}}]}')).then(
      () => undefined,
      (e: unknown) => e as EngineError,
    );
    expect(deployed?.details).toEqual([expect.objectContaining({ code: 'PROTOTYPE_KEY', path: ['nodes', 0, 'config', 'result', '__proto__'] })]);

    const db = path.join(ctx.dir, 'cli.db');
    fs.writeFileSync(path.join(ctx.dir, 'plain.workflow.json'), JSON.stringify({ name: 'plain', nodes: [{ id: 'p', type: 'pass' }] }));
    expect((await runBin(['deploy', path.join(ctx.dir, 'plain.workflow.json'), '--db', db])).code).toBe(0);
    const start = await runBin(['start', 'plain', '--vars', '{"a":{"__proto__":{"polluted":1}}}', '--db', db]);
    expect(start.code).toBe(2);
    expect(start.stderr).toMatch(/INVALID_VARIABLES: --vars: a "__proto__" key at a\.__proto__/);
  });

  it('in a node result fail the node, non-retryable, naming the key', async () => {
    ctx = tempEngine();
    const code = 'return JSON.parse(\'{"ok": true, "meta": {"__proto__": {"polluted": 1}}}\');';
    await ctx.engine.deploy({ name: 'returns', nodes: [{ id: 's', type: 'script', config: { code }, retry: { maxAttempts: 3 } }] });
    const id = await ctx.engine.start('returns');
    await ctx.engine.runUntil(() => ctx!.engine.isSettled(id), 20_000);
    const s = (await ctx.engine.getInstance(id)).nodes.find((n) => n.id === 's');
    expect(s?.attempt).toBe(1);
    expect(s?.error).toMatchObject({ code: 'INVALID_RESULT', retryable: false, message: expect.stringMatching(/"__proto__" key at meta\.__proto__/) });
  });
});
