/**
 * Node ids and workflow names outside ASCII (CJK, emoji with ZWJ and VS16), run end to end with
 * every built-in node type: pass, script, http, delay, approval.
 *
 * Real parts: an HTTP server on 127.0.0.1 that records what it was sent, an engine on a real
 * SQLite file (public methods only), and the real `bin/runnel.js` as child processes. The http
 * node's `Idempotency-Key` must reach the server as bytes it can decode back to
 * `<instance id>:<node id>` (engine/nodes/http.ts `encodeHeaderValue`).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { WorkflowInput } from '../../../engine/dsl/schema';
import { Engine } from '../../../engine/runtime/engine';
import { REPO_ROOT } from '../../helpers/cli';
import { tempDir } from '../../helpers/temp-engine';

const run = promisify(execFile);

/** The ids one workflow uses, one per step. */
interface Ids {
  start: string;
  compute: string;
  fetch: string;
  wait: string;
  approve: string;
  done: string;
}

const CJK: Ids = { start: '開始', compute: '計算', fetch: '取得', wait: '待機', approve: '承認', done: '完了' };
// 👩‍💻 is a ZWJ sequence, ✔️ carries VS16: both are where an encoder splitting code units would break.
const EMOJI: Ids = { start: '🚀', compute: '🧮', fetch: '🌐', wait: '⏳', approve: '👩‍💻', done: '✔️' };

/**
 * pass → script → http → delay → approval → pass, named `name`. The script reads the pass's
 * result by its id and the http body carries the script's, so the ids reach expressions too.
 */
function workflow(name: string, ids: Ids): WorkflowInput {
  return {
    name,
    nodes: [
      { id: ids.start, type: 'pass', config: { result: { n: 41 } } },
      { id: ids.compute, type: 'script', config: { code: `return { n: steps[${JSON.stringify(ids.start)}].n + 1 }` } },
      {
        id: ids.fetch,
        type: 'http',
        config: {
          method: 'POST',
          url: `{{ baseUrl }}/記録/${ids.fetch}`,
          body: { n: `{{ $steps.\`${ids.compute}\`.n }}` },
          query: { node: ids.fetch },
        },
        retry: { maxAttempts: 1 },
      },
      { id: ids.wait, type: 'delay', config: { durationMs: 20 } },
      { id: ids.approve, type: 'approval', config: { prompt: `${name}: ${ids.approve}?` } },
      { id: ids.done, type: 'pass' },
    ],
    edges: [
      { from: ids.start, to: ids.compute },
      { from: ids.compute, to: ids.fetch },
      { from: ids.fetch, to: ids.wait },
      { from: ids.wait, to: ids.approve },
      { from: ids.approve, to: ids.done },
    ],
  };
}

const CASES: { label: string; name: string; ids: Ids }[] = [
  { label: 'CJK ids and a CJK workflow name', name: '注文処理・承認', ids: CJK },
  { label: 'emoji ids', name: 'emoji-ids 🚀', ids: EMOJI },
];

/** One request as the server saw it. */
interface Seen {
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

let server: Server;
let baseUrl: string;
const seen: Seen[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: true }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

let tmp: ReturnType<typeof tempDir>;
beforeEach(() => {
  tmp = tempDir();
  seen.length = 0;
});
afterEach(() => tmp.cleanup());

/** The one request the server saw for instance `id`'s http node `nodeId`. */
function requestOf(id: number, nodeId: string): Seen {
  const key = `${id}:${nodeId}`;
  const mine = seen.filter((s) => decodeURIComponent(String(s.headers['idempotency-key'])) === key);
  expect(mine, `requests with key ${key}; saw ${JSON.stringify(seen.map((s) => s.headers['idempotency-key']))}`).toHaveLength(1);
  return mine[0]!;
}

/** What every case asserts about the request: a pure-ASCII, decodable key, the path and body. */
function expectRequest(id: number, ids: Ids): void {
  const req = requestOf(id, ids.fetch);
  const raw = String(req.headers['idempotency-key']);
  expect(raw).toMatch(/^[\x21-\x7e]+$/);
  expect(raw.startsWith(`${id}:%`)).toBe(true);
  expect(decodeURIComponent(raw)).toBe(`${id}:${ids.fetch}`);
  const url = new URL(req.url, baseUrl);
  expect(decodeURIComponent(url.pathname)).toBe(`/記録/${ids.fetch}`);
  expect(url.searchParams.get('node')).toBe(ids.fetch);
  expect(JSON.parse(req.body)).toEqual({ n: 42 });
}

describe.each(CASES)('$label', ({ name, ids }) => {
  it('through an engine on a real file: every node type completes, the server decodes the key', async () => {
    // given an engine on a fresh file and the workflow deployed
    const engine = Engine.open(path.join(tmp.dir, 'runnel.db'), { pollIntervalMs: 5 });
    try {
      const dep = await engine.deploy(workflow(name, ids));
      expect(dep.name).toBe(name);

      // when an instance runs up to the approval, is approved through the engine, and runs on
      const id = await engine.start(name, { variables: { baseUrl } });
      await engine.runUntil(async () => (await engine.isSettled(id)), 20_000);
      const waiting = (await engine.getInstance(id));
      expect(waiting.status).toBe('WAITING');
      expect(waiting.nodes.find((n) => n.id === ids.approve)?.status).toBe('WAITING');
      await engine.approve(id, ids.approve, { approved: true, actor: '審査者' });
      await engine.runUntil(async () => (await engine.isSettled(id)), 20_000);

      // then the instance and every node completed, each node once, with its result
      const done = (await engine.getInstance(id));
      expect(done.status).toBe('COMPLETED');
      expect(done.workflow).toBe(name);
      expect(Object.fromEntries(done.nodes.map((n) => [n.id, [n.status, n.attempt]]))).toEqual(
        Object.fromEntries(Object.values(ids).map((nodeId) => [nodeId, ['COMPLETED', 1]])),
      );
      expect(done.nodes.find((n) => n.id === ids.compute)?.output).toEqual({ n: 42 });
      expect(done.nodes.find((n) => n.id === ids.fetch)?.output).toMatchObject({ status: 200, body: { ok: true } });
      expect(done.nodes.find((n) => n.id === ids.approve)?.output).toMatchObject({ approved: true });
      expectRequest(id, ids);
      expect((await engine.getWorkflow(name)).name).toBe(name);
    } finally {
      await engine.close();
    }
  });

  it('through `runnel run` and `runnel approve` (bin/runnel.js): COMPLETED, the server decodes the key', async () => {
    // given the workflow as a file
    const file = path.join(tmp.dir, 'wf.workflow.json');
    const db = path.join(tmp.dir, 'cli.db');
    fs.writeFileSync(file, JSON.stringify(workflow(name, ids)));
    const bin = path.join(REPO_ROOT, 'bin/runnel.js');
    const opts = { cwd: REPO_ROOT, encoding: 'utf8' as const, timeout: 60_000 };

    // when `runnel run` works it up to the approval (exit 3: waiting for a person)
    const started = await run(
      process.execPath,
      [bin, 'run', file, '--db', db, '--json', '--vars', JSON.stringify({ baseUrl })],
      opts,
    ).then(
      () => {
        throw new Error('runnel run exited 0; expected 3 (waiting for a person)');
      },
      (err: { code?: number; stdout: string; stderr: string }) => err,
    );
    expect(started.code, started.stderr).toBe(3);
    const first = JSON.parse(started.stdout) as { id: number; status: string; workflow: string };
    expect(first).toMatchObject({ status: 'WAITING', workflow: name });
    expectRequest(first.id, ids);

    // and `runnel approve <id> <node> --approve --wait` decides it
    const approved = await run(
      process.execPath,
      [bin, 'approve', String(first.id), ids.approve, '--approve', '--wait', '--db', db, '--json'],
      opts,
    );

    // then it completed, every node once
    const end = JSON.parse(approved.stdout) as { status: string; nodes: { id: string; status: string; attempt: number }[] };
    expect(end.status).toBe('COMPLETED');
    expect(end.nodes.map((n) => [n.id, n.status, n.attempt]).sort()).toEqual(
      Object.values(ids).map((nodeId) => [nodeId, 'COMPLETED', 1]).sort(),
    );
  });
});
