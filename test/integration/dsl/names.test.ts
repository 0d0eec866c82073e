// Names are text people read (issue 17, item 9): a NUL, a newline or another control character in
// a workflow's or a node's name is refused with the field named; a request body that is not
// UTF-8 is refused by the browser host instead of decoded into U+FFFD.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../../server/index';
import { runBin } from '../../helpers/cli';
import { tempEngine } from '../../helpers/temp-engine';
import { rejectionOf } from '../../helpers/engine-errors';

let ctx: ReturnType<typeof tempEngine> | undefined;
let server: RunningServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  await ctx?.close();
  ctx = undefined;
});


describe('control characters in names', () => {
  it('are refused in a workflow name, a node name and a rename, naming the field', async () => {
    ctx = tempEngine();
    const { engine } = ctx;
    const nul = await rejectionOf(engine.deploy({ name: 'orders\u0000', nodes: [{ id: 'a', type: 'pass' }] }));
    expect(nul.code).toBe('INVALID_WORKFLOW');
    expect(nul.details).toEqual([expect.objectContaining({ path: ['name'], message: expect.stringMatching(/control characters/) })]);
    const node = await rejectionOf(engine.deploy({ name: 'orders', nodes: [{ id: 'a', type: 'pass', name: 'line\nbreak' }] }));
    expect(node.details).toEqual([expect.objectContaining({ nodeId: 'a', path: ['nodes', 0, 'name'] })]);
    await engine.deploy({ name: 'orders 📦 注文', nodes: [{ id: 'a', type: 'pass', name: 'Pack — 梱包' }] });
    const renamed = await rejectionOf(engine.renameWorkflow('orders 📦 注文', 'tab\there'));
    expect(renamed.code).toBe('INVALID_INPUT');
    expect(renamed.message).toMatch(/newName: .*control characters/);
    expect((await engine.listWorkflows()).map((w) => w.name)).toEqual(['orders 📦 注文']);
  });

  it('take in the line separators and the direction overrides: refused in a workflow name and a rename (show printed them raw)', async () => {
    ctx = tempEngine();
    const { engine } = ctx;
    for (const bad of ['we\u202eird', 'two\u2028lines', 'para\u2029graph', 'iso\u2066late']) {
      const r = await rejectionOf(engine.deploy({ name: bad, nodes: [{ id: 'a', type: 'pass' }] }));
      expect(r.code).toBe('INVALID_WORKFLOW');
      expect(r.details).toEqual([expect.objectContaining({ path: ['name'], message: expect.stringMatching(/control characters/) })]);
    }
    await engine.deploy({ name: 'ok', nodes: [{ id: 'a', type: 'pass' }] });
    const renamed = await rejectionOf(engine.renameWorkflow('ok', 'r\u202el'));
    expect(renamed.message).toMatch(/newName: .*control characters/);
    // a zero-width joiner stays allowed: emoji sequences need it
    await engine.deploy({ name: 'team 👩\u200d💻', nodes: [{ id: 'a', type: 'pass' }] });
    expect((await engine.listWorkflows()).map((w) => w.name).sort()).toEqual(['ok', 'team 👩\u200d💻']);
  });
});

describe('spaces in names', () => {
  it('a blank workflow name, or one with spaces at its ends, is refused on validate, deploy, run and rename, naming the field', async () => {
    ctx = tempEngine();
    const { engine } = ctx;
    const file = path.join(ctx.dir, 'blank.workflow.json');
    const db = path.join(ctx.dir, 'cli.db');
    for (const name of ['  ', '\u3000', 'orders ', ' orders']) {
      // given: a workflow file with that name
      fs.writeFileSync(file, JSON.stringify({ name, nodes: [{ id: 'a', type: 'pass' }] }));
      // when: the CLI validates and runs it
      const validated = await runBin(['validate', file]);
      const run = await runBin(['run', file, '--db', db]);
      // then: refused, exit 2, the field named; nothing saved
      expect(validated.code, JSON.stringify(name)).toBe(2);
      expect(validated.stderr).toMatch(/INVALID_FIELD workflow: name must not (be blank|start or end with spaces)/);
      expect(run.code).toBe(2);
      const deployed = await rejectionOf(engine.deploy({ name, nodes: [{ id: 'a', type: 'pass' }] }));
      expect(deployed.details).toEqual([expect.objectContaining({ code: 'INVALID_FIELD', path: ['name'] })]);
    }
    expect(fs.existsSync(db)).toBe(false);
    const blankNode = await rejectionOf(engine.deploy({ name: 'orders', nodes: [{ id: 'a', type: 'pass', name: ' ' }] }));
    expect(blankNode.details).toEqual([expect.objectContaining({ nodeId: 'a', path: ['nodes', 0, 'name'], message: expect.stringMatching(/name must not be blank/) })]);

    // spaces inside a name are fine, and a rename follows the same rule
    await engine.deploy({ name: 'daily orders', nodes: [{ id: 'a', type: 'pass', name: 'Pack it' }] });
    for (const newName of [' ', 'orders ']) {
      const renamed = await rejectionOf(engine.renameWorkflow('daily orders', newName));
      expect(renamed.code).toBe('INVALID_INPUT');
      expect(renamed.message).toMatch(/^newName: .*must not (be blank|start or end with spaces)/);
    }
    expect((await engine.listWorkflows()).map((w) => w.name)).toEqual(['daily orders']);
  });
});

describe('request bodies that are not UTF-8', () => {
  it('are refused by the browser host with BAD_REQUEST', async () => {
    ctx = tempEngine();
    server = await startServer({ engine: ctx.engine, port: 0, startWorker: false });
    // "name": "café" in latin-1: the é is one byte 0xE9, not UTF-8
    const body = Buffer.concat([Buffer.from('{"definition":{"name":"caf'), Buffer.from([0xe9]), Buffer.from('","nodes":[{"id":"a","type":"pass"}]}}')]);
    const res = await fetch(`http://127.0.0.1:${server.port}/api/workflow:save`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${server.token}`, host: `127.0.0.1:${server.port}` },
      body,
    });
    expect(await res.json()).toEqual({ ok: false, error: { code: 'BAD_REQUEST', message: 'the request body is not valid UTF-8' } });
    expect(await ctx.engine.listWorkflows()).toEqual([]);
  });
});
