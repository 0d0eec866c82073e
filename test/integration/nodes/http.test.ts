import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineError } from '../../../engine/errors';
import {
  HttpConfigSchema,
  createHttpNodeType,
  encodeHeaderValue,
  httpNode,
  type HttpConfig,
  type HttpConfigInput,
  type HttpResult,
} from '../../../engine/nodes/http';
import type { NodeContext } from '../../../engine/nodes/types';
import { makeContext } from '../../helpers/node-context';

/** What the server saw, per request, in order. */
interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

let server: Server;
let base: string;
const seen: Seen[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      const url = new URL(req.url ?? '/', 'http://x');
      const status = /^\/status\/(\d+)$/.exec(url.pathname);
      if (url.pathname === '/json') {
        res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'x-trace': 'abc' });
        res.end(JSON.stringify({ hello: 'wörld 🚀', query: Object.fromEntries(url.searchParams) }));
      } else if (url.pathname === '/echo') {
        res.writeHead(201, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({ method: req.method, contentType: req.headers['content-type'] ?? null, body }),
        );
      } else if (status) {
        const code = Number(status[1]);
        const headers: Record<string, string> = { 'content-type': 'text/plain' };
        if (code === 429 || code === 503) headers['retry-after'] = '2';
        res.writeHead(code, headers);
        res.end(code === 204 ? undefined : `status ${code} body`);
      } else if (url.pathname === '/text') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('just text');
      } else if (url.pathname === '/lying-json') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('not json at all');
      } else if (url.pathname === '/slow') {
        // Answers only after 10 s: long after any timeout in these tests.
        const timer = setTimeout(() => res.end('late'), 10_000);
        res.on('close', () => clearTimeout(timer));
      } else if (url.pathname === '/big-chunked') {
        // 11 MiB with no content-length: the cap must be enforced while reading.
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        const chunk = Buffer.alloc(1024 * 1024, 97);
        let sent = 0;
        const push = (): void => {
          while (sent < 11) {
            sent += 1;
            if (!res.write(chunk)) {
              res.once('drain', push);
              return;
            }
          }
          res.end();
        };
        res.on('error', () => undefined);
        push();
      } else if (url.pathname === '/big-declared') {
        res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(11 * 1024 * 1024) });
        res.on('error', () => undefined);
        res.end(Buffer.alloc(11 * 1024 * 1024, 98));
      } else {
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end('no such route');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function httpContext(config: HttpConfigInput, partial: Partial<NodeContext<HttpConfig>> = {}) {
  return makeContext<HttpConfig>({
    instanceId: 42,
    nodeId: 'charge',
    idempotencyKey: '42:charge',
    config: HttpConfigSchema.parse(config),
    ...partial,
  });
}

async function request(
  config: HttpConfigInput,
  partial: Partial<NodeContext<HttpConfig>> = {},
): Promise<HttpResult> {
  const result = await httpNode.execute(httpContext(config, partial));
  if (!('output' in result)) throw new Error('http did not complete');
  return result.output as HttpResult;
}

async function failure(promise: Promise<unknown>): Promise<EngineError> {
  const err: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(EngineError);
  return err as EngineError;
}

function lastSeen(): Seen {
  const last = seen.at(-1);
  if (!last) throw new Error('the server saw no request');
  return last;
}

describe('http node', () => {
  it('GETs JSON: status, lower-case headers, parsed body, query appended', async () => {
    const out = await request({ url: `${base}/json?a=1`, query: { b: 'two words', c: 3, d: true } });
    expect(out.status).toBe(200);
    expect(out.headers['x-trace']).toBe('abc');
    expect(out.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(out.body).toEqual({ hello: 'wörld 🚀', query: { a: '1', b: 'two words', c: '3', d: 'true' } });
    expect(lastSeen().method).toBe('GET');
  });

  it('POSTs a JSON body with the Idempotency-Key header the server sees', async () => {
    const out = await request({ method: 'POST', url: `${base}/echo`, body: { amount: 10, note: 'ünïcode' } });
    expect(out.status).toBe(201);
    expect(out.body).toEqual({
      method: 'POST',
      contentType: 'application/json',
      body: '{"amount":10,"note":"ünïcode"}',
    });
    expect(lastSeen().headers['idempotency-key']).toBe('42:charge');
  });

  it('sends a string body as is and keeps an Idempotency-Key the config sets', async () => {
    await request({
      method: 'PUT',
      url: `${base}/echo`,
      body: 'raw=1',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Idempotency-Key': 'mine' },
    });
    expect(lastSeen().body).toBe('raw=1');
    expect(lastSeen().headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(lastSeen().headers['idempotency-key']).toBe('mine');
  });

  it('sends an Idempotency-Key built from a non-ASCII id percent-encoded (UTF-8), decodable back', async () => {
    await request({ method: 'POST', url: `${base}/echo`, body: {} }, { nodeId: '取得', idempotencyKey: '42:取得' });
    expect(lastSeen().headers['idempotency-key']).toBe('42:%E5%8F%96%E5%BE%97');
    await request({ url: `${base}/json` }, { nodeId: '👩‍💻', idempotencyKey: '42:👩‍💻:compensate' });
    expect(lastSeen().headers['idempotency-key']).toBe('42:%F0%9F%91%A9%E2%80%8D%F0%9F%92%BB:compensate');
    expect(decodeURIComponent(String(lastSeen().headers['idempotency-key']))).toBe('42:👩‍💻:compensate');
  });

  it('refuses a header value outside Latin-1 from the config, naming the header, before sending', async () => {
    const before = seen.length;
    const err = await failure(request({ url: `${base}/json`, headers: { 'X-Customer': '山田' } }));
    expect(err.code).toBe('INVALID_INPUT');
    expect(err.retryable).toBe(false);
    expect(err.message).toBe(
      'headers.X-Customer: the value holds "山" (U+5C71) at index 0, and a header carries only Latin-1 bytes: ' +
        'encode it, e.g. {{ $encodeUrlComponent(…) }}',
    );
    expect(err.details).toEqual({ field: 'headers.X-Customer' });
    const badName = await failure(request({ url: `${base}/json`, headers: { 'bad name': 'x' } }));
    expect(badName.code).toBe('INVALID_INPUT');
    expect(badName.message).toMatch(/^headers\.bad name: /);
    expect(seen.length).toBe(before);
  });

  it('reads text, and auto keeps text when a JSON content type lies', async () => {
    expect((await request({ url: `${base}/text` })).body).toBe('just text');
    expect((await request({ url: `${base}/lying-json` })).body).toBe('not json at all');
    expect((await request({ url: `${base}/json`, responseType: 'text' })).body).toMatch(/^\{"hello"/);
    const err = await failure(request({ url: `${base}/lying-json`, responseType: 'json' }));
    expect(err.code).toBe('HTTP_ERROR');
    expect(err.retryable).toBe(false);
  });

  it('HEAD has a null body; 204 JSON-less empty body is text ""', async () => {
    const head = await request({ method: 'HEAD', url: `${base}/json` });
    expect(head.status).toBe(200);
    expect(head.body).toBeNull();
    const empty = await request({ url: `${base}/status/204` });
    expect(empty.status).toBe(204);
    expect(empty.body).toBe('');
  });

  it('503 is a retryable HTTP_ERROR with status, url and Retry-After in details', async () => {
    const err = await failure(request({ url: `${base}/status/503` }));
    expect(err.code).toBe('HTTP_ERROR');
    expect(err.retryable).toBe(true);
    expect(err.message).toContain('503');
    expect(err.message).toContain(`${base}/status/503`);
    expect(err.details).toMatchObject({ status: 503, retryAfterMs: 2000, body: 'status 503 body' });
  });

  it('404 is a non-retryable HTTP_ERROR naming status and url', async () => {
    const err = await failure(request({ url: `${base}/status/404` }));
    expect(err.code).toBe('HTTP_ERROR');
    expect(err.retryable).toBe(false);
    expect(err.message).toMatch(/404/);
    expect(err.message).toContain(`${base}/status/404`);
    expect(err.details).toMatchObject({ status: 404, method: 'GET' });
  });

  it('429 is retryable', async () => {
    const err = await failure(request({ url: `${base}/status/429` }));
    expect(err.retryable).toBe(true);
    expect(err.details).toMatchObject({ status: 429, retryAfterMs: 2000 });
  });

  it('expectedStatus decides success: 404 may be expected, 200 may not', async () => {
    const ok = await request({ url: `${base}/status/404`, expectedStatus: [200, 404] });
    expect(ok.status).toBe(404);
    expect(ok.body).toBe('status 404 body');
    const err = await failure(request({ url: `${base}/json`, expectedStatus: [201] }));
    expect(err.code).toBe('HTTP_ERROR');
    expect(err.details).toMatchObject({ status: 200, expected: '201' });
    expect(err.retryable).toBe(false);
  });

  it('a timeout aborts the request with a retryable TIMEOUT', async () => {
    const started = performance.now();
    const err = await failure(request({ url: `${base}/slow`, timeoutMs: 150 }));
    expect(err.code).toBe('TIMEOUT');
    expect(err.retryable).toBe(true);
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('an abort of ctx.signal stops the request with the abort reason', async () => {
    const ctx = httpContext({ url: `${base}/slow` });
    setTimeout(() => ctx.controller.abort(new DOMException('node timeout', 'TimeoutError')), 100);
    const err = await failure(httpNode.execute(ctx));
    expect(err.code).toBe('TIMEOUT');
    expect(err.retryable).toBe(true);

    const cancelled = httpContext({ url: `${base}/slow` });
    setTimeout(() => cancelled.controller.abort(), 50);
    expect((await failure(httpNode.execute(cancelled))).code).toBe('CANCELLED');
  });

  it('a refused connection is a retryable HTTP_ERROR naming the cause', async () => {
    // given a port that was just free
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const err = await failure(request({ url: `http://127.0.0.1:${port}/` }));
    expect(err.code).toBe('HTTP_ERROR');
    expect(err.retryable).toBe(true);
    expect(err.message).toMatch(/ECONNREFUSED/);
  });

  it('refuses URLs that are not absolute http(s), without sending anything', async () => {
    const before = seen.length;
    for (const url of [
      'file:///etc/passwd',
      'ftp://example.com/x',
      'javascript:alert(1)',
      '/relative',
      'not a url',
    ]) {
      // the config schema refuses a literal one (so validation does), and the handler checks again
      // what a template rendered
      expect(HttpConfigSchema.safeParse({ url }).success).toBe(false);
      const unchecked = { ...HttpConfigSchema.parse({ url: 'http://x/' }), url };
      const err = await failure(httpNode.execute(makeContext<HttpConfig>({ config: unchecked })));
      expect(err.code).toBe('INVALID_INPUT');
      expect(err.retryable).toBe(false);
      expect(err.message).toContain(url);
    }
    expect(seen.length).toBe(before);
  });

  it('sends URL credentials as Basic authorization and keeps them out of messages', async () => {
    const err = await failure(
      request({ url: `http://us%C3%A9r:s3cret@127.0.0.1:${new URL(base).port}/status/500` }),
    );
    expect(lastSeen().headers.authorization).toBe(`Basic ${Buffer.from('usér:s3cret').toString('base64')}`);
    expect(err.message).not.toContain('s3cret');
    expect(JSON.stringify(err.details)).not.toContain('s3cret');
  });

  it('a response body above the cap fails with RESULT_TOO_LARGE, streamed or declared', async () => {
    for (const path of ['/big-chunked', '/big-declared']) {
      const err = await failure(request({ url: `${base}${path}` }));
      expect(err.code).toBe('RESULT_TOO_LARGE');
      expect(err.retryable).toBe(false);
    }
  });

  it('the cap is configurable per node type', async () => {
    const small = createHttpNodeType({ maxResponseBytes: 8 });
    const err = await failure(small.execute(httpContext({ url: `${base}/text` })));
    expect(err.code).toBe('RESULT_TOO_LARGE');
  });

  it('the config schema refuses a body with GET, unknown keys and bad methods', () => {
    expect(HttpConfigSchema.safeParse({ url: 'http://x', body: 'a' }).success).toBe(false);
    expect(HttpConfigSchema.safeParse({ url: 'http://x', metod: 'GET' }).success).toBe(false);
    expect(HttpConfigSchema.safeParse({ url: 'http://x', method: 'TRACE' }).success).toBe(false);
    expect(HttpConfigSchema.parse({ url: 'http://x' })).toMatchObject({
      method: 'GET',
      responseType: 'auto',
    });
    expect(httpNode.compensate).toBeUndefined();
  });
});

describe('encodeHeaderValue', () => {
  it('keeps visible ASCII byte for byte, so keys of ASCII ids are what they always were', () => {
    for (const key of ['42:charge', '1:a_b-c.d', '9007199254740991:Z9:compensate']) {
      expect(encodeHeaderValue(key)).toBe(key);
    }
  });

  it('percent-encodes the UTF-8 bytes of everything else, and the escape character itself', () => {
    expect(encodeHeaderValue('7:取得')).toBe('7:%E5%8F%96%E5%BE%97');
    expect(encodeHeaderValue('7:✔️')).toBe('7:%E2%9C%94%EF%B8%8F');
    expect(encodeHeaderValue('ü')).toBe('%C3%BC');
    expect(encodeHeaderValue('a b%c\t')).toBe('a%20b%25c%09');
    // A lone surrogate cannot be UTF-8: it goes as U+FFFD rather than throwing.
    expect(encodeHeaderValue('x\ud800')).toBe('x%EF%BF%BD');
  });

  it('round-trips through decodeURIComponent for every kind of id', () => {
    for (const id of ['開始', '🚀', '👩‍💻', 'café', 'Ωmega-1', 'mixed_取得🌐.v2']) {
      const encoded = encodeHeaderValue(`12:${id}`);
      expect(encoded).toMatch(/^[\x21-\x7e]+$/);
      expect(decodeURIComponent(encoded)).toBe(`12:${id}`);
    }
  });
});
