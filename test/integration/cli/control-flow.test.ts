/**
 * Control flow from the command line, on a real file: a map over a list started and worked by
 * `runnel start --wait`, its children listed with `list --parent`, and `runnel signal` by id and
 * by business key (an event node's result), refused for an ended instance.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseJson, runCli } from '../../helpers/cli';
import { tempDir } from '../../helpers/temp-engine';

describe('runnel with subworkflow, map and event nodes', () => {
  let tmp: ReturnType<typeof tempDir>;
  let db: string;
  const write = (name: string, content: unknown) => {
    const file = path.join(tmp.dir, name);
    fs.writeFileSync(file, JSON.stringify(content, null, 2));
    return file;
  };
  beforeEach(() => {
    tmp = tempDir();
    db = path.join(tmp.dir, 'runnel.db');
  });
  afterEach(() => tmp.cleanup());

  it('a map parent runs to COMPLETED with --wait; list --parent shows its children', async () => {
    const child = write('child.json', { name: 'square', nodes: [{ id: 'sq', type: 'script', config: { code: 'return input.item * input.item' }, output: 'square' }], edges: [] });
    const parent = write('parent.json', {
      name: 'squares',
      nodes: [{ id: 'each', type: 'map', config: { items: 'numbers', workflow: 'square', maxConcurrency: 2 }, output: 'results' }],
      edges: [],
    });
    // The parent refers to a workflow not deployed yet: refused, naming the node and the field.
    const refused = await runCli('deploy', parent, '--db', db);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('UNKNOWN_WORKFLOW node "each": workflow "square" is not deployed');
    expect((await runCli('deploy', child, '--db', db)).code).toBe(0);
    expect((await runCli('deploy', parent, '--db', db)).code).toBe(0);
    const run = parseJson<{ id: number; status: string; variables: { results: { square: number }[] } }>(
      await runCli('start', 'squares', '--vars', '{"numbers":[1,2,3]}', '--wait', '--db', db, '--json'),
    );
    expect(run.status).toBe('COMPLETED');
    expect(run.variables.results.map((r) => r.square)).toEqual([1, 4, 9]);
    const kids = parseJson<{ workflow: string; status: string; parentId: number }[]>(await runCli('list', '--parent', String(run.id), '--db', db, '--json'));
    expect(kids.map((k) => [k.workflow, k.status, k.parentId])).toEqual([
      ['square', 'COMPLETED', run.id],
      ['square', 'COMPLETED', run.id],
      ['square', 'COMPLETED', run.id],
    ]);
  });

  it('signal by id and by business key completes an event node; an ended instance refuses it', async () => {
    const flow = write('pay.json', { name: 'pay', nodes: [{ id: 'paid', type: 'event', config: { name: 'payment' }, output: 'payment' }], edges: [] });
    expect((await runCli('deploy', flow, '--db', db)).code).toBe(0);
    const a = parseJson<{ id: number; status: string }>(await runCli('start', 'pay', '--wait', '--db', db, '--json'));
    expect(a.status).toBe('WAITING');
    // A parent whose children wait for a person, and an instance waiting for an event, are not stuck.
    expect((await runCli('deploy', write('ask.json', { name: 'ask', nodes: [{ id: 'ok', type: 'approval', config: {} }], edges: [] }), '--db', db)).code).toBe(0);
    expect((await runCli('deploy', write('asks.json', { name: 'asks', nodes: [{ id: 'each', type: 'map', config: { items: 'xs', workflow: 'ask' } }], edges: [] }), '--db', db)).code).toBe(0);
    // --wait returns once the parent can go on only from outside: its children wait for a person.
    const asks = await runCli('start', 'asks', '--vars', '{"xs":[1,2]}', '--wait', '--db', db, '--json');
    expect(parseJson<{ status: string; children: { waiting: number }[] }>(asks)).toMatchObject({ status: 'WAITING', children: [{ waiting: 2 }] });
    const checked = await runCli('check', '--db', db, '--json');
    expect(parseJson<{ ok: boolean; violations: unknown[] }>(checked)).toMatchObject({ ok: true, violations: [] });
    const sent = await runCli('signal', String(a.id), 'payment', '--data', '{"amount":5}', '--db', db);
    expect(sent.code).toBe(0);
    expect(sent.stdout).toContain(`instance ${a.id}: event "payment" taken by "paid"; now WAITING`);
    expect((await runCli('worker', '--until-idle', '--db', db)).code).toBe(0);
    const shown = parseJson<{ status: string; variables: { payment: unknown } }>(await runCli('show', String(a.id), '--db', db, '--json'));
    expect(shown).toMatchObject({ status: 'COMPLETED', variables: { payment: { amount: 5 } } });

    expect((await runCli('start', 'pay', '--business-key', 'order-9', '--db', db)).code).toBe(0);
    const byKey = await runCli('signal', '--business-key', 'order-9', 'payment', '--wait', '--db', db, '--json');
    expect(byKey.code).toBe(0);
    expect(parseJson<{ status: string }>(byKey).status).toBe('COMPLETED');

    const late = await runCli('signal', String(a.id), 'payment', '--db', db);
    expect(late.code).not.toBe(0);
    expect(late.stderr).toContain('INVALID_STATE');
    expect(late.stderr).toContain('has ended (COMPLETED)');
    const bad = await runCli('signal', 'abc', 'payment', '--db', db);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('an instance id is a positive integer (got "abc")');
  });

  it('pause and unpause from the command line', async () => {
    const flow = write('nap.json', { name: 'nap', nodes: [{ id: 'z', type: 'delay', config: { durationMs: 60000 } }], edges: [] });
    expect((await runCli('deploy', flow, '--db', db)).code).toBe(0);
    const a = parseJson<{ id: number }>(await runCli('start', 'nap', '--db', db, '--json'));
    const paused = await runCli('pause', String(a.id), '--db', db);
    expect(paused.stdout).toBe(`instance ${a.id}: paused (PENDING)\n`);
    expect(parseJson<{ pausedAt: number | null }>(await runCli('show', String(a.id), '--db', db, '--json')).pausedAt).toBeGreaterThan(0);
    const again = await runCli('pause', String(a.id), '--db', db);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain('is paused already');
    expect((await runCli('unpause', String(a.id), '--db', db)).stdout).toBe(`instance ${a.id}: unpaused (PENDING)\n`);
    expect(parseJson<{ pausedAt: number | null }>(await runCli('show', String(a.id), '--db', db, '--json')).pausedAt).toBeNull();
  });
});
