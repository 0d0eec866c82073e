/**
 * The browser host's guards (token, Host, Origin, body size, loopback only), its event stream,
 * its static files, and `runnel serve` as a process.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventBatchSchema, type EventBatch, type Output } from '../../../engine/api/contract';
import { startServer } from '../../../server/index';
import { eventually, rawRequest, startTestHost, type TestHost } from '../../helpers/browser-host';
import { tempDir, tempEngine } from '../../helpers/temp-engine';

const root = path.resolve(import.meta.dirname, '../../..');
const quick = JSON.parse(
  fs.readFileSync(path.join(root, 'test/fixtures/api-quick.workflow.json'), 'utf8'),
) as Record<string, unknown>;

/** The machine's first non-loopback IPv4 address, if it has one. */
function nonLoopbackIPv4(): string | undefined {
  for (const list of Object.values(os.networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return undefined;
}

/** Tries a TCP connection; resolves with the error code, or 'CONNECTED'. */
function tryConnect(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port, timeout: 3000 });
    socket.once('connect', () => {
      socket.destroy();
      resolve('CONNECTED');
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve('TIMEOUT');
    });
    socket.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'ERROR'));
  });
}

/** Sends `text` over a plain TCP connection and returns everything the server answers. */
function rawSocket(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port }, () => socket.end(text));
    let out = '';
    socket.on('data', (c: Buffer) => (out += c.toString()));
    socket.on('end', () => resolve(out));
    socket.on('error', reject);
  });
}

/** Reads server-sent events from `res` until `done(batches)` says so; returns the batches. */
async function readBatches(
  res: Response,
  done: (batches: EventBatch[]) => boolean,
  timeoutMs = 20_000,
): Promise<EventBatch[]> {
  if (!res.body) throw new Error('no body');
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  const batches: EventBatch[] = [];
  let buffer = '';
  const timer = setTimeout(() => void reader.cancel(), timeoutMs);
  try {
    while (!done(batches)) {
      const { done: ended, value } = await reader.read();
      if (ended) throw new Error(`stream ended after ${batches.length} batches`);
      buffer += decoder.decode(value, { stream: true });
      let cut: number;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        const message = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const data = message
          .split('\n')
          .filter((l) => l.startsWith('data:'))
          .map((l) => l.slice(5).trimStart())
          .join('\n');
        if (data !== '') batches.push(EventBatchSchema.parse(JSON.parse(data)));
      }
    }
    return batches;
  } finally {
    clearTimeout(timer);
    await reader.cancel().catch(() => undefined);
  }
}

describe('browser host: token, Host and Origin', () => {
  let h: TestHost;
  let port: number;
  let auth: Record<string, string>;

  beforeAll(async () => {
    h = await startTestHost();
    port = h.server.port;
    auth = { authorization: `Bearer ${h.server.token}` };
  });
  afterAll(async () => {
    await h.close();
  });

  it('the token is 24 random bytes (base64url), and the URL carries it', () => {
    expect(h.server.token).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(h.server.url).toBe(`http://127.0.0.1:${port}/?token=${h.server.token}`);
  });

  it('no token → 401, on every /api path', async () => {
    for (const [method, p] of [
      ['POST', '/api/workflow:list'],
      ['POST', '/api/instance:start'],
      ['GET', '/api/health'],
      ['GET', '/api/events'],
      ['POST', '/api/nope'],
    ] as const) {
      const r = await rawRequest(port, {
        method,
        path: p,
        headers: { host: `127.0.0.1:${port}` },
        ...(method === 'POST' ? { body: '{}' } : {}),
      });
      expect(r.status, `${method} ${p}`).toBe(401);
      expect(JSON.parse(r.body)).toEqual({
        ok: false,
        error: { code: 'UNAUTHORIZED', message: 'the API token is missing' },
      });
    }
  });

  it('wrong token → 401, however it is sent; ?token= counts only for the event stream', async () => {
    const wrong = `${h.server.token.slice(0, -1)}${h.server.token.endsWith('A') ? 'B' : 'A'}`;
    const attempts: Record<string, string>[] = [
      { authorization: `Bearer ${wrong}` },
      { 'x-runnel-token': wrong },
      { authorization: `Bearer ${h.server.token}x` },
      { authorization: h.server.token },
    ];
    for (const headers of attempts) {
      const r = await fetch(`${h.base}/api/workflow:list`, { method: 'POST', headers, body: '{}' });
      expect(r.status).toBe(401);
      expect(await r.json()).toMatchObject({
        ok: false,
        error: { code: 'UNAUTHORIZED', message: 'the API token is wrong' },
      });
    }
    expect(
      (await fetch(`${h.base}/api/workflow:list?token=${h.server.token}`, { method: 'POST', body: '{}' }))
        .status,
    ).toBe(401);
    expect((await fetch(`${h.base}/api/events?token=${wrong}`)).status).toBe(401);
    // the right token, each way
    expect(
      (
        await fetch(`${h.base}/api/workflow:list`, {
          method: 'POST',
          headers: { 'x-runnel-token': h.server.token },
        })
      ).status,
    ).toBe(200);
    expect((await fetch(`${h.base}/api/health`, { headers: auth })).status).toBe(200);
  });

  it('a Host that is not 127.0.0.1:<port> or localhost:<port> → 403 (DNS rebinding), even with the token', async () => {
    for (const host of [
      'evil.example:' + port,
      `127.0.0.1:${port + 1}`,
      '127.0.0.1',
      `localhost.evil.example:${port}`,
      `[::1]:${port}`,
    ]) {
      for (const p of ['/api/health', '/']) {
        const r = await rawRequest(port, { path: p, headers: { ...auth, host } });
        expect(r.status, `${host} ${p}`).toBe(403);
        expect(JSON.parse(r.body)).toMatchObject({ ok: false, error: { code: 'FORBIDDEN' } });
      }
    }
    // no Host at all (HTTP/1.0 allows that): refused, by Node's parser (400) or by the check (403)
    const bare = await rawSocket(
      port,
      `GET /api/health HTTP/1.0\r\nAuthorization: Bearer ${h.server.token}\r\n\r\n`,
    );
    expect(bare).toMatch(/^HTTP\/1\.[01] 40[03] /);
    expect(bare).not.toContain('"ok":true');
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LOCALHOST:${port}`]) {
      const r = await rawRequest(port, { path: '/api/health', headers: { ...auth, host } });
      expect(r.status, host).toBe(200);
    }
  });

  it('an Origin other than the served one → 403 (CSRF), even with the token', async () => {
    for (const origin of [
      'http://evil.example',
      'null',
      `http://127.0.0.1:${port + 1}`,
      `https://127.0.0.1:${port}`,
      `http://localhost.evil.example:${port}`,
    ]) {
      const post = await rawRequest(port, {
        method: 'POST',
        path: '/api/instance:start',
        headers: { ...auth, host: `127.0.0.1:${port}`, origin, 'content-type': 'application/json' },
        body: '{"workflow":"x"}',
      });
      expect(post.status, origin).toBe(403);
      expect(JSON.parse(post.body)).toMatchObject({ ok: false, error: { code: 'FORBIDDEN' } });
      const sse = await rawRequest(port, {
        path: `/api/events?token=${h.server.token}`,
        headers: { host: `127.0.0.1:${port}`, origin },
      });
      expect(sse.status, origin).toBe(403);
    }
    for (const origin of [`http://127.0.0.1:${port}`, `http://localhost:${port}`]) {
      const r = await rawRequest(port, {
        method: 'POST',
        path: '/api/workflow:list',
        headers: { ...auth, host: `127.0.0.1:${port}`, origin },
        body: '',
      });
      expect(r.status, origin).toBe(200);
      expect(JSON.parse(r.body)).toEqual({ ok: true, value: [] });
    }
  });

  it('API responses are not cached and no page leaks its URL (token) as a Referer', async () => {
    const r = await fetch(`${h.base}/api/health`, { headers: auth });
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(r.headers.get('referrer-policy')).toBe('no-referrer');
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
  });
});

describe('browser host: body limit', () => {
  let h: TestHost;

  beforeAll(async () => {
    h = await startTestHost({ bodyLimitBytes: 1024 });
  });
  afterAll(async () => {
    await h.close();
  });

  it('a body over the limit → 413 before it is parsed, with or without a Content-Length; nothing written', async () => {
    const port = h.server.port;
    const headers = {
      authorization: `Bearer ${h.server.token}`,
      host: `127.0.0.1:${port}`,
      'content-type': 'application/json',
    };
    const definition = { ...quick, description: 'd'.repeat(4000) };
    const body = JSON.stringify({ definition });

    const declared = await rawRequest(port, { method: 'POST', path: '/api/workflow:save', headers, body });
    expect(declared.status).toBe(413);
    expect(JSON.parse(declared.body)).toEqual({
      ok: false,
      error: { code: 'PAYLOAD_TOO_LARGE', message: 'the request body is above the limit of 1024 bytes' },
    });

    const chunked = await rawRequest(port, {
      method: 'POST',
      path: '/api/workflow:save',
      headers,
      body: JSON.stringify({ definition: { ...quick, description: 'd'.repeat(64 * 1024) } }),
      chunked: true,
    });
    expect(chunked.status).toBe(413);
    expect(JSON.parse(chunked.body)).toMatchObject({ ok: false, error: { code: 'PAYLOAD_TOO_LARGE' } });

    // a lying Content-Length under the limit does not help either: at most the limit is read
    expect(await h.value('workflow:list')).toEqual([]);
    // at the limit is fine
    const small = JSON.stringify({ definition: quick });
    expect(small.length).toBeLessThan(1024);
    const ok = await rawRequest(port, { method: 'POST', path: '/api/workflow:save', headers, body: small });
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.body)).toMatchObject({ ok: true, value: { name: 'api-quick', created: true } });
    expect(
      (await fetch(`${h.base}/api/health`, { headers: { authorization: `Bearer ${h.server.token}` } }))
        .status,
    ).toBe(200);
  });
});

describe('browser host: listens on 127.0.0.1 only', () => {
  let h: TestHost;

  beforeAll(async () => {
    h = await startTestHost();
  });
  afterAll(async () => {
    await h.close();
  });

  it('the server is bound to 127.0.0.1', () => {
    const address = h.server.server.address();
    expect(address).toMatchObject({ address: '127.0.0.1', family: 'IPv4', port: h.server.port });
  });

  it("other addresses of the machine refuse the connection (127.0.0.2 always; the non-loopback one when there is one)", async () => {
    // 127.0.0.2 is another loopback address on Linux: a server bound to 0.0.0.0 would accept it
    expect(await tryConnect('127.0.0.2', h.server.port)).toBe('ECONNREFUSED');
    const ip = nonLoopbackIPv4();
    if (ip !== undefined) {
      expect(ip.startsWith('127.')).toBe(false);
      expect(await tryConnect(ip, h.server.port)).toBe('ECONNREFUSED');
    }
    // and the loopback one accepts it
    expect(await tryConnect('127.0.0.1', h.server.port)).toBe('CONNECTED');
  });

  it('IPv6 loopback and the wildcard address do not reach it either', async () => {
    expect(await tryConnect('::1', h.server.port)).not.toBe('CONNECTED');
  });
});

describe('browser host: server-sent events', () => {
  let h: TestHost;

  beforeAll(async () => {
    h = await startTestHost();
    await h.value('workflow:save', { definition: quick });
  });
  afterAll(async () => {
    await h.close();
  });

  it('an instance started through the API streams instance.created … instance.finished in batches', async () => {
    const res = await fetch(`${h.base}/api/events?token=${h.server.token}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const { id } = await h.value<Output<'instance:start'>>('instance:start', { workflow: 'api-quick' });
    const finishedOf = (bs: EventBatch[]) =>
      bs.some((b) => b.events.some((e) => e.type === 'instance.finished' && e.instanceId === id));
    const batches = await readBatches(res, finishedOf);

    batches.forEach((b, i) => {
      if (i > 0) expect(b.seq).toBeGreaterThan(batches[i - 1]?.seq ?? 0);
    });
    const mine = batches.flatMap((b) => b.events).filter((e) => 'instanceId' in e && e.instanceId === id);
    expect(mine[0]).toEqual({ type: 'instance.created', instanceId: id, workflow: 'api-quick', version: 1 });
    expect(mine[mine.length - 1]).toEqual({ type: 'instance.finished', instanceId: id, status: 'COMPLETED' });
    const lastNode = new Map<string, string>();
    for (const e of mine) if (e.type === 'node.changed') lastNode.set(e.nodeId, e.status);
    expect(Object.fromEntries(lastNode)).toEqual({ a: 'COMPLETED', b: 'COMPLETED', c: 'COMPLETED' });
  });

  it('many instances arrive coalesced in few batches, none of their finishes dropped', async () => {
    const res = await fetch(`${h.base}/api/events`, {
      headers: { authorization: `Bearer ${h.server.token}` },
    });
    const started = await Promise.all(
      Array.from({ length: 40 }, () =>
        h.value<Output<'instance:start'>>('instance:start', { workflow: 'api-quick' }),
      ),
    );
    const ids = new Set(started.map((s) => s.id));
    const finished = new Set<number>();
    const batches = await readBatches(res, (bs) => {
      for (const b of bs)
        for (const e of b.events)
          if (e.type === 'instance.finished' && ids.has(e.instanceId)) finished.add(e.instanceId);
      return finished.size === ids.size;
    });
    expect(finished.size).toBe(40);
    const events = batches.reduce((n, b) => n + b.events.length, 0);
    const coalesced = batches.reduce((n, b) => n + b.coalesced, 0);
    // 40 instances × (created + 3 nodes × several changes + instance changes + finished)
    expect(events + coalesced).toBeGreaterThan(40 * 5);
    expect(batches.length).toBeLessThan(events);
  });

  it('close() ends open streams and returns promptly', async () => {
    const other = await startTestHost();
    const res = await fetch(`${other.base}/api/events?token=${other.server.token}`);
    const reader = res.body?.getReader();
    const t0 = Date.now();
    await other.close();
    expect(Date.now() - t0).toBeLessThan(900);
    // the stream ends (possibly after the "connected" preamble)
    await eventually(
      async () => ((await reader?.read())?.done ? true : undefined),
      5000,
      'the stream to end',
    );
  });
});

describe('browser host: static files', () => {
  it('without a renderer build it serves a page saying how to build one (with a CSP)', async () => {
    const h = await startTestHost();
    try {
      const r = await fetch(`${h.base}/?token=${h.server.token}`);
      expect(r.status).toBe(200);
      expect(await r.text()).toContain('npm run build:renderer');
      expect(r.headers.get('content-security-policy')).toContain("default-src 'self'");
    } finally {
      await h.close();
    }
  });

  it('serves the built renderer, falls back to index.html for app routes, and never leaves its folder', async () => {
    const { dir, cleanup } = tempDir('runnel-renderer-');
    fs.writeFileSync(
      path.join(dir, 'index.html'),
      '<!doctype html><title>app</title><script type="module" src="/assets/app.js"></script>',
    );
    fs.mkdirSync(path.join(dir, 'assets'));
    fs.writeFileSync(path.join(dir, 'assets', 'app.js'), 'console.log(1)');
    fs.writeFileSync(path.join(path.dirname(dir), `secret-${path.basename(dir)}.txt`), 'secret');
    const h = await startTestHost({ rendererDir: dir });
    try {
      const index = await fetch(`${h.base}/`);
      expect(await index.text()).toContain('<title>app</title>');
      const js = await fetch(`${h.base}/assets/app.js`);
      expect(js.headers.get('content-type')).toContain('javascript');
      expect(await js.text()).toBe('console.log(1)');
      expect(await (await fetch(`${h.base}/instances/42`)).text()).toContain('<title>app</title>');
      const escape = await rawRequest(h.server.port, {
        path: `/../secret-${path.basename(dir)}.txt`,
        headers: { host: `127.0.0.1:${h.server.port}` },
      });
      expect(escape.body).not.toContain('secret');
      const encoded = await rawRequest(h.server.port, {
        path: `/%2e%2e/secret-${path.basename(dir)}.txt`,
        headers: { host: `127.0.0.1:${h.server.port}` },
      });
      expect(encoded.body).not.toContain('secret');
    } finally {
      await h.close();
      fs.rmSync(path.join(path.dirname(dir), `secret-${path.basename(dir)}.txt`), { force: true });
      cleanup();
    }
  });

  it('refuses a taken port with EADDRINUSE', async () => {
    const h = await startTestHost();
    const t = tempEngine();
    try {
      await expect(
        startServer({ engine: t.engine, port: h.server.port, startWorker: false }),
      ).rejects.toMatchObject({ code: 'EADDRINUSE' });
    } finally {
      await t.close();
      await h.close();
    }
  });
});

describe('runnel serve', () => {
  it('prints a URL with the token, serves the API with the worker running, and stops cleanly on SIGINT', async () => {
    const { dir, cleanup } = tempDir();
    const db = path.join(dir, 'served.db');
    const child = spawn(
      process.execPath,
      [path.join(root, 'bin/runnel.js'), 'serve', '--db', db, '--port', '0'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const url = await eventually(
        () => /^(http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{32})$/m.exec(stdout)?.[1],
        30_000,
        'the URL',
      );
      const parsed = new URL(url);
      const token = parsed.searchParams.get('token') ?? '';
      const call = async (channel: string, payload: unknown) =>
        (await (
          await fetch(`${parsed.origin}/api/${channel}`, {
            method: 'POST',
            headers: { authorization: `Bearer ${token}` },
            body: JSON.stringify(payload),
          })
        ).json()) as { ok: boolean; value: { id: number; status: string } };
      expect((await call('workflow:save', { definition: quick })).ok).toBe(true);
      const { id } = (await call('instance:start', { workflow: 'api-quick' })).value;
      // the worker loop runs inside the host
      await eventually(
        async () => ((await call('instance:get', { id })).value.status === 'COMPLETED' ? true : undefined),
        20_000,
        'COMPLETED',
      );
      child.kill('SIGINT');
      expect(await exited).toBe(130);
      expect(stderr).toContain('serve: stopped');
      expect(fs.existsSync(db)).toBe(true);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      cleanup();
    }
  });
});
