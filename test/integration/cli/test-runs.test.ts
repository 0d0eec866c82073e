/**
 * `runnel run FILE --test --pin node=JSON` on a real file, against a real HTTP server on 127.0.0.1
 * that counts its requests: the pinned http node calls nothing, the run is a test run (left out of
 * `runnel list`, shown by `runnel list --test`), `runnel delete --test-runs` deletes it; bad pins
 * are usage errors naming the flag, a pin of an unknown node names the node.
 */
import fs from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseJson, runCli } from '../../helpers/cli';
import { tempDir } from '../../helpers/temp-engine';

let server: Server;
let baseUrl = '';
let requests = 0;

beforeAll(async () => {
  server = createServer((_req, res) => {
    requests++;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"version":"live"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const FLOW = {
  name: 'check-device',
  nodes: [
    { id: 'fetch', type: 'http', config: { method: 'GET', url: '{{ baseUrl }}/device' }, output: 'device' },
    { id: 'say', type: 'script', config: { code: 'return "version " + variables.device.body.version' }, output: 'said' },
  ],
  edges: [{ from: 'fetch', to: 'say' }],
};

describe('runnel run --test --pin', () => {
  let tmp: ReturnType<typeof tempDir>;
  let db: string;
  let file: string;
  beforeEach(() => {
    tmp = tempDir();
    db = path.join(tmp.dir, 'runnel.db');
    file = path.join(tmp.dir, 'check.workflow.json');
    fs.writeFileSync(file, JSON.stringify(FLOW));
    requests = 0;
  });
  afterEach(() => tmp.cleanup());

  it('runs a test run with the http node pinned (no request), lists it only with --test, and deletes it with --test-runs', async () => {
    // when a test run pins the http node
    const vars = JSON.stringify({ baseUrl });
    const r = await runCli('run', file, '--db', db, '--vars', vars, '--test', '--pin', 'fetch={"status":200,"headers":{},"body":{"version":"pinned"}}');
    // then it completes on the pinned result and the server got nothing
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('run: deployed check-device v1; started test run 1 (pinned: fetch)');
    expect(requests).toBe(0);
    const shown = parseJson<{ status: string; test: boolean; variables: Record<string, unknown> }>(await runCli('show', '1', '--db', db, '--json'));
    expect(shown).toMatchObject({ status: 'COMPLETED', test: true, variables: { said: 'version pinned' } });

    // and a plain run calls the server
    expect((await runCli('run', file, '--db', db, '--vars', vars)).code).toBe(0);
    expect(requests).toBe(1);

    // the default list has the real run only; --test the test run only
    expect(parseJson<{ id: number }[]>(await runCli('list', '--db', db, '--json')).map((i) => i.id)).toEqual([2]);
    expect(parseJson<{ id: number; test: boolean }[]>(await runCli('list', '--test', '--db', db, '--json'))).toEqual([expect.objectContaining({ id: 1, test: true })]);

    // delete --test-runs deletes it and leaves the real run
    const del = await runCli('delete', '--test-runs', '--db', db);
    expect(del.code).toBe(0);
    expect(del.stdout).toMatch(/^deleted 1 test run \(/);
    expect((await runCli('list', '--test', '--db', db)).stdout).toBe('no test runs\n');
    expect(parseJson<{ id: number }[]>(await runCli('list', '--db', db, '--json')).map((i) => i.id)).toEqual([2]);
  });

  it('refuses bad pins naming the flag or the node, before any database is made', async () => {
    const noEquals = await runCli('run', file, '--db', db, '--test', '--pin', 'fetch');
    expect(noEquals.code).toBe(2);
    expect(noEquals.stderr).toContain('--pin must be <node id>=<JSON result>');
    const notJson = await runCli('run', file, '--db', db, '--test', '--pin', 'fetch={nope');
    expect(notJson.code).toBe(2);
    expect(notJson.stderr).toContain('--pin fetch is not valid JSON');
    const twice = await runCli('run', file, '--db', db, '--test', '--pin', 'fetch=1', '--pin', 'fetch=2');
    expect(twice.stderr).toContain('--pin: node "fetch" is pinned twice');
    const withoutTest = await runCli('run', file, '--db', db, '--pin', 'fetch=1');
    expect(withoutTest.code).toBe(2);
    expect(withoutTest.stderr).toContain('--pin needs --test');
    const unknown = await runCli('run', file, '--db', db, '--vars', JSON.stringify({ baseUrl }), '--test', '--pin', 'nope=1');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('pins.nope: workflow check-device v1 has no node "nope"');
    expect(fs.existsSync(db)).toBe(false);
    expect(requests).toBe(0);
  });
});
