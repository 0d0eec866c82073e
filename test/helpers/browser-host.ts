/**
 * Test helpers for the browser host: a real engine on a temp database (the run's backend:
 * test/helpers/temp-engine.ts) behind a real HTTP server on 127.0.0.1, and small clients (fetch
 * for the API, node:http for hand-made headers).
 */
import http from 'node:http';
import path from 'node:path';
import type { Result } from '../../engine/api/contract';
import type { EngineOptions } from '../../engine/api';
import { startServer, type RunningServer, type ServerOptions } from '../../server/index';
import type { Engine, SqliteEngine } from '../../engine/runtime/engine';
import { tempEngine, tempSqliteEngine, type TempEngine } from './temp-engine';

/** A browser host over a fresh temp engine. */
export interface TestHost<E extends Engine = Engine> {
  engine: E;
  file: string;
  dir: string;
  server: RunningServer;
  /** `http://127.0.0.1:<port>` */
  base: string;
  /** POSTs `payload` to `/api/<channel>` with the token; asserts HTTP 200 and returns the Result. */
  call<T = unknown>(channel: string, payload?: unknown): Promise<Result<T>>;
  /** Like `call`, but returns the value or throws with the error's code and message. */
  value<T = unknown>(channel: string, payload?: unknown): Promise<T>;
  close(): Promise<void>;
}

/** A browser host over an engine on a SQLite file (for tests that read the file's rows). */
export type SqliteTestHost = TestHost<SqliteEngine>;

/** Starts a browser host on a temp engine of the run's backend (worker running, no renderer build). */
export async function startTestHost(options: Omit<ServerOptions, 'engine'> = {}, engineOptions: EngineOptions = {}): Promise<TestHost> {
  return hostOn(tempEngine(engineOptions), options);
}

/** {@link startTestHost} on a SQLite file whatever the run's backend. */
export async function startSqliteTestHost(options: Omit<ServerOptions, 'engine'> = {}, engineOptions: EngineOptions = {}): Promise<SqliteTestHost> {
  return hostOn(tempSqliteEngine(engineOptions), options);
}

async function hostOn<E extends Engine>(t: TempEngine<E>, options: Omit<ServerOptions, 'engine'>): Promise<TestHost<E>> {
  const server = await startServer({
    engine: t.engine,
    rendererDir: path.join(t.dir, 'no-renderer'),
    ...options,
  });
  const base = `http://127.0.0.1:${server.port}`;
  const call = async <T>(channel: string, payload?: unknown): Promise<Result<T>> => {
    const res = await fetch(`${base}/api/${channel}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
      body: payload === undefined ? '' : JSON.stringify(payload),
    });
    const body = (await res.json()) as Result<T>;
    if (res.status !== 200) throw new Error(`HTTP ${res.status} from ${channel}: ${JSON.stringify(body)}`);
    return body;
  };
  return {
    engine: t.engine,
    file: t.file,
    dir: t.dir,
    server,
    base,
    call,
    async value<T>(channel: string, payload?: unknown): Promise<T> {
      const r = await call<T>(channel, payload);
      if (!r.ok) throw new Error(`${channel} failed: ${r.error.code}: ${r.error.message}`);
      return r.value;
    },
    async close() {
      await server.close();
      await t.close();
    },
  };
}

/** A raw HTTP response. */
export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/**
 * One HTTP request with exactly the given headers (fetch will not set Host, for one), to
 * 127.0.0.1:`port` unless `address` says otherwise. `chunked` sends the body without a length.
 */
export function rawRequest(
  port: number,
  options: {
    method?: string;
    path: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    chunked?: boolean;
    address?: string;
  },
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: options.address ?? '127.0.0.1',
        port,
        method: options.method ?? 'GET',
        path: options.path,
        headers: options.headers ?? {},
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (options.body !== undefined) {
      if (options.chunked) {
        // Several writes without a Content-Length: Node sends Transfer-Encoding: chunked.
        const buf = Buffer.from(options.body);
        const step = 16 * 1024;
        for (let i = 0; i < buf.length; i += step) req.write(buf.subarray(i, i + step));
      } else {
        req.setHeader('content-length', Buffer.byteLength(options.body));
        req.write(options.body);
      }
    }
    req.end();
  });
}

/** Polls `check` every 20 ms until it returns a value other than undefined, or fails after `timeoutMs`. */
export async function eventually<T>(
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 20_000,
  what = 'condition',
): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
