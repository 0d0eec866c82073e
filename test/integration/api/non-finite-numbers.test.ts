/**
 * One rule for numbers JSON cannot keep (Infinity, -Infinity, NaN; `1e999` parses to Infinity):
 * refused with their path wherever a value comes in — start variables from the CLI and the API, a
 * definition from a file (JSON or YAML) or in memory, a resume's variables, a skip's result,
 * approval decision data, signal data — and a node handler's result fails its node, not
 * retryable. Before, each was stored as `null` without a word (JSON.stringify writes them so).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createHandlers, dispatch } from '../../../engine/api/handlers';
import { validateWorkflow } from '../../../engine/dsl/validate';
import { type NodeType } from '../../../engine/nodes/index';
import { createDefaultRegistry } from '../../../engine/nodes/registry';
import { runBin } from '../../helpers/cli';
import { rejectionOf } from '../../helpers/engine-errors';
import { tempEngine } from '../../helpers/temp-engine';

let ctx: ReturnType<typeof tempEngine> | undefined;
afterEach(async () => {
  await ctx?.close();
  ctx = undefined;
});

const NUMBER_INPUT = {
  name: 'inf',
  inputSchema: { type: 'object', properties: { n: { type: 'number' } } },
  nodes: [{ id: 'a', type: 'pass' }],
};

/** A node type whose result holds a number that is not finite. */
const overflow: NodeType<Record<string, never>> = {
  type: 'overflow',
  title: 'Overflow',
  description: 'returns Infinity',
  icon: 'zap',
  group: 'Test',
  configSchema: z.strictObject({}),
  execute: () => Promise.resolve({ output: { ratio: Number.POSITIVE_INFINITY } }),
};

describe('numbers JSON cannot keep', () => {
  it('in --vars and --vars-file: INVALID_VARIABLES naming the field, exit 2, no instance', async () => {
    // given: a workflow whose inputSchema asks for a number
    ctx = tempEngine();
    const wf = path.join(ctx.dir, 'inf.workflow.json');
    fs.writeFileSync(wf, JSON.stringify(NUMBER_INPUT));
    const db = path.join(ctx.dir, 'cli.db');

    // when: run with 1e999 (Infinity once parsed), in the flag and in a file
    const run = await runBin(['run', wf, '--db', db, '--vars', '{"n":1e999}']);
    const varsFile = path.join(ctx.dir, 'vars.json');
    fs.writeFileSync(varsFile, '{"deep":{"n":-1e999}}');
    const fromFile = await runBin(['run', wf, '--db', db, '--vars-file', varsFile]);

    // then: refused before anything is stored, the field named
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toMatch(/^error: INVALID_VARIABLES: --vars: n is Infinity, a number JSON cannot keep/);
    expect(fromFile.code, fromFile.stderr).toBe(2);
    expect(fromFile.stderr).toMatch(/INVALID_VARIABLES: --vars-file: deep\.n is -Infinity/);
    expect(fs.existsSync(db)).toBe(false); // checked before any file is written
  });

  it('in a definition (JSON or YAML file, or in memory): INVALID_WORKFLOW naming the path, nothing saved', async () => {
    ctx = tempEngine();
    const json = path.join(ctx.dir, 'w.workflow.json');
    fs.writeFileSync(json, '{"name":"w","nodes":[{"id":"a","type":"pass","config":{"result":{"x":1e999}}}]}');
    const yaml = path.join(ctx.dir, 'w.workflow.yaml');
    fs.writeFileSync(yaml, 'name: w\nnodes:\n  - id: a\n    type: pass\n    config: {result: {x: .nan}}\n');
    const db = path.join(ctx.dir, 'cli.db');

    const deployed = await runBin(['deploy', json, '--db', db]);
    expect(deployed.code).toBe(2);
    expect(deployed.stderr).toMatch(/INVALID_WORKFLOW: .*nodes\[0\]\.config\.result\.x is Infinity, a number JSON cannot keep/);
    const validated = await runBin(['validate', yaml]);
    expect(validated.code).toBe(2);
    expect(validated.stderr).toMatch(/NOT_FINITE .*nodes\[0\]\.config\.result\.x is NaN/);
    expect(fs.existsSync(db) ? (await runBin(['export', 'w', '--db', db])).code : 2).toBe(2);

    const inMemory = validateWorkflow({ name: 'w', nodes: [{ id: 'a', type: 'delay', config: { durationMs: Number.POSITIVE_INFINITY } }] }, () => undefined);
    expect(inMemory.problems).toEqual([expect.objectContaining({ code: 'NOT_FINITE', path: ['nodes', 0, 'config', 'durationMs'] })]);
    expect((await rejectionOf(ctx.engine.deploy({ name: 'w', nodes: [{ id: 'a', type: 'pass', config: { result: NaN } }] }))).code).toBe('INVALID_WORKFLOW');
    expect(await ctx.engine.listWorkflows()).toHaveLength(0);
  });

  it('in API payloads and engine calls: start, resume variables, a skip result, decision data, signal data', async () => {
    ctx = tempEngine();
    const { engine } = ctx;
    const handlers = createHandlers(engine);
    await engine.deploy(NUMBER_INPUT);

    // the API refuses the payload, naming the field; the engine refuses the variables itself too
    const start = await dispatch(handlers, 'instance:start', { workflow: 'inf', variables: { n: Number.NaN } });
    expect(start).toMatchObject({ ok: false, error: { code: 'BAD_REQUEST', message: expect.stringMatching(/variables\.n is NaN, a number JSON cannot keep/) } });
    const direct = await rejectionOf(engine.start('inf', { variables: { n: Number.POSITIVE_INFINITY } }));
    expect(direct).toMatchObject({ code: 'INVALID_VARIABLES', details: [expect.objectContaining({ field: 'n' })] });

    // a suspended instance: resume with such variables, or skip with such a result
    await engine.deploy({
      name: 'incident',
      nodes: [{ id: 'boom', type: 'script', config: { code: 'throw new Error("down")' }, retry: { maxAttempts: 1 }, onFailure: 'suspend' }],
    });
    const incident = await engine.start('incident');
    await engine.runUntil(async () => (await engine.instanceState(incident)).status === 'SUSPENDED', 20_000);
    const resumeVars = await rejectionOf(engine.resume(incident, { action: 'retry', variables: { n: Number.NEGATIVE_INFINITY } }));
    expect(resumeVars).toMatchObject({ code: 'INVALID_VARIABLES', message: expect.stringMatching(/n is -Infinity/) });
    const skip = await rejectionOf(engine.resume(incident, { action: 'skip', result: { total: Number.POSITIVE_INFINITY } }));
    expect(skip).toMatchObject({ code: 'INVALID_RESULT', message: expect.stringMatching(/total is Infinity/) });
    expect((await engine.instanceState(incident)).status).toBe('SUSPENDED');

    // an approval waiting for a person, and an event node waiting for its event
    await engine.deploy({ name: 'ask', nodes: [{ id: 'ok', type: 'approval' }] });
    const asked = await engine.start('ask');
    await engine.runUntil(async () => (await engine.instanceState(asked)).status === 'WAITING', 20_000);
    const decision = await rejectionOf(engine.approve(asked, 'ok', { approved: true, data: { score: Number.NaN } }));
    expect(decision).toMatchObject({ code: 'INVALID_INPUT', message: expect.stringMatching(/data: .*score is NaN/) });
    await engine.deploy({ name: 'wait', nodes: [{ id: 'paid', type: 'event', config: { name: 'payment' } }] });
    const waiting = await engine.start('wait');
    const signal = await rejectionOf(engine.signal({ id: waiting }, { event: 'payment', data: [1, Number.POSITIVE_INFINITY] }));
    expect(signal).toMatchObject({ code: 'INVALID_INPUT', message: expect.stringMatching(/\[1\] is Infinity/) });
  });

  it('in a node handler\'s result (a custom type, a script): the node fails with INVALID_RESULT, not retried', async () => {
    ctx = tempEngine({ registry: createDefaultRegistry().register(overflow) });
    const { engine } = ctx;
    const retry = { maxAttempts: 3, initialIntervalMs: 1 };
    await engine.deploy({ name: 'custom', nodes: [{ id: 'o', type: 'overflow', config: {}, retry }] });
    await engine.deploy({ name: 'script', nodes: [{ id: 's', type: 'script', config: { code: 'return { big: 1e308 * 10 }' }, retry }] });
    const ids = [await engine.start('custom'), await engine.start('script')];
    await engine.runUntil(async () => (await Promise.all(ids.map((id) => engine.isSettled(id)))).every(Boolean), 20_000);
    const [custom, script] = await Promise.all(ids.map((id) => engine.getInstance(id)));
    expect(custom?.status).toBe('FAILED');
    expect(custom?.nodes[0]).toMatchObject({ attempt: 1, error: { code: 'INVALID_RESULT', retryable: false, message: expect.stringMatching(/its result: ratio is Infinity/) } });
    expect(script?.status).toBe('FAILED');
    expect(script?.nodes[0]).toMatchObject({ attempt: 1, error: { code: 'INVALID_RESULT', retryable: false, message: expect.stringMatching(/big is Infinity/) } });
  });
});
