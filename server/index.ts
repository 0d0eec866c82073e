/**
 * The browser host: the contract over HTTP and server-sent events, plus the built renderer
 * (DESIGN.md section 5; issue 3 item 3).
 *
 * Protocol (what renderer/src/api/client.ts speaks):
 * - `POST /api/<channel>` with a JSON body (the channel's input; empty = no input) → a
 *   `Result` as JSON, HTTP 200 for values and typed errors alike;
 * - `GET /api/events?token=…` → `text/event-stream`; each message's `data` is one `EventBatch`
 *   (JSON), its `id` the batch's `seq`; `: ping` comments keep the stream alive;
 * - `GET /api/changes?token=…[&after=N][&workflow=W][&consumer=NAME]` → the change feed as
 *   `text/event-stream`, one message per entry with `id: <cursor>`, resuming after
 *   `Last-Event-ID` (./changes-stream.ts);
 * - `GET /api/health` → `{ ok: true, value: { status: 'ok' } }`;
 * - `GET /metrics` → the engine's Prometheus metrics (text format 0.0.4, engine/runtime/metrics.ts),
 *   under the same token rule as `/api` (header only); 503 with the error as a comment when the
 *   database cannot be read;
 * - every `/api` call carries the per-run token: `Authorization: Bearer <token>` or
 *   `x-runnel-token: <token>` (and `?token=` for the event stream only, since EventSource cannot
 *   set headers; the change feed's stream too). The renderer reads it from its page URL's `?token=`.
 *
 * Refusals, each with a `Result` body: 401 UNAUTHORIZED (token), 403 FORBIDDEN (a Host other than
 * `127.0.0.1:<port>` / `localhost:<port>`: DNS rebinding; an Origin other than the served one:
 * CSRF), 413 PAYLOAD_TOO_LARGE (before the body is parsed).
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createAdaptorServer } from '@hono/node-server';
import { serveStatic } from '@hono/node-server/serve-static';
import { Hono, type Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import { EngineMetrics, type Engine } from '../engine/api';
import { err, type ApiErrorCode, type EventBatch, type Result } from '../engine/api/contract';
import { batchEngineEvents } from '../engine/api/event-batcher';
import { createHandlers, dispatch, type DispatchOptions } from '../engine/api/handlers';
import { serveChanges } from './changes-stream';

/** The only address the host binds to. */
export const HOST = '127.0.0.1';

/** Default request body limit: 5 MiB (a workflow definition's limit in the contract). */
export const DEFAULT_BODY_LIMIT_BYTES = 5 * 1024 * 1024;

/** Where `npm run build:renderer` puts the renderer, from the repository root. */
export const DEFAULT_RENDERER_DIR = fileURLToPath(new URL('../dist/renderer', import.meta.url));

/** Options of {@link startServer}. */
export interface ServerOptions {
  /** The engine to serve (the caller opens and closes it). */
  engine: Engine;
  /** TCP port on 127.0.0.1; 0 (default) picks a free one. */
  port?: number;
  /** The built renderer's folder (default `dist/renderer`); a hint page is served when it lacks index.html. */
  rendererDir?: string;
  /** The API token; default 24 random bytes, base64url. */
  token?: string;
  /** Largest request body, in bytes (default 5 MiB). */
  bodyLimitBytes?: number;
  /** Run the engine's worker loop in this process (default true); stopped again by `close`. */
  startWorker?: boolean;
  /** Least ms between two event batches (default 100). */
  eventIntervalMs?: number;
  /** How often to check the file for changes made by another process, ms (default 500). */
  externalPollMs?: number;
  /** Least often an idle `GET /api/changes` stream reads the feed again, ms (default 250). */
  changesPollMs?: number;
  /** More origins allowed to call the API (e.g. a Vite dev server's `http://localhost:5173`). */
  allowedOrigins?: readonly string[];
  /** Passed to `dispatch` (output validation, logging). */
  dispatch?: DispatchOptions;
}

/** A running browser host. */
export interface RunningServer {
  /** The page to open: `http://127.0.0.1:<port>/?token=<token>`. */
  url: string;
  /** The port actually bound. */
  port: number;
  token: string;
  /** The Node server (tests check its address). */
  server: Server;
  /** Ends the event streams, stops listening, and stops the worker if this host started it. */
  close(): Promise<void>;
}

/** A random per-run API token: 24 bytes, base64url (32 characters). */
export function createToken(): string {
  return randomBytes(24).toString('base64url');
}

const HINT_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Runnel</title></head>
<body style="font-family: system-ui, sans-serif; margin: 3rem">
<h1>Runnel</h1>
<p>The browser host is running, but the renderer has not been built.</p>
<p>Run <code>npm run build:renderer</code>, then reload this page (keep its <code>?token=</code>).</p>
</body></html>
`;

const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  // React Flow positions nodes with inline style attributes.
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "form-action 'none'",
].join('; ');

function sameToken(given: string | undefined, token: string): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

function bearer(header: string | undefined): string | undefined {
  const m = header === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m?.[1];
}

type Refusal = { status: 401 | 403 | 404 | 405 | 413; code: ApiErrorCode; message: string };

/** Reads a request body up to `limit` bytes; `undefined` when over it (the rest is not read). */
async function readBody(req: Request, limit: number): Promise<Buffer | undefined> {
  const declared = Number(req.headers.get('content-length') ?? 'NaN');
  if (Number.isFinite(declared) && declared > limit) return undefined;
  if (req.body === null) return Buffer.alloc(0);
  const chunks: Buffer[] = [];
  let size = 0;
  const reader = req.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      return undefined;
    }
    chunks.push(Buffer.from(value));
  }
  return Buffer.concat(chunks, size);
}

/** Strict UTF-8: a malformed byte sequence throws instead of becoming U+FFFD. */
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** One connected event-stream client. */
interface StreamClient {
  send(batch: EventBatch): void;
  end(): void;
}

/**
 * Starts the browser host on 127.0.0.1 and (by default) the engine's worker loop.
 *
 * @throws Error when the port is taken (EADDRINUSE) or cannot be bound.
 */
export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const { engine } = options;
  const token = options.token ?? createToken();
  const bodyLimit = options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES;
  const rendererDir = path.resolve(options.rendererDir ?? DEFAULT_RENDERER_DIR);
  const hasRenderer = fs.existsSync(path.join(rendererDir, 'index.html'));
  const clients = new Set<StreamClient>();
  const feedStreams = new Set<() => void>();
  const metrics = new EngineMetrics(engine);
  const handlers = createHandlers(engine, { metrics });
  let port = 0;

  const stopEvents = batchEngineEvents(
    engine,
    (batch) => {
      for (const c of clients) c.send(batch);
    },
    options.eventIntervalMs,
  );
  // Another process (a CLI deploy, a demo run) changing the file must reach the page too.
  const stopWatch = engine.watchExternalChanges(options.externalPollMs);

  const refuse = (c: Context, r: Refusal): Response => c.json(err(r.code, r.message), r.status);

  const app = new Hono();

  // Every response: no sniffing, no framing, and no Referer (the page URL holds the token).
  app.use('*', async (c, next) => {
    await next();
    c.res.headers.set('X-Content-Type-Options', 'nosniff');
    c.res.headers.set('X-Frame-Options', 'DENY');
    c.res.headers.set('Referrer-Policy', 'no-referrer');
    if (c.res.headers.get('content-type')?.startsWith('text/html'))
      c.res.headers.set('Content-Security-Policy', CSP);
  });

  // DNS rebinding and CSRF: only our own Host, and our own Origin when one is sent.
  app.use('*', async (c, next) => {
    const host = (c.req.header('host') ?? '').toLowerCase();
    if (host !== `${HOST}:${port}` && host !== `localhost:${port}`) {
      return refuse(c, {
        status: 403,
        code: 'FORBIDDEN',
        message: `Host "${host.slice(0, 100)}" is not this server`,
      });
    }
    const origin = c.req.header('origin');
    if (origin !== undefined) {
      const allowed =
        origin === `http://${HOST}:${port}` ||
        origin === `http://localhost:${port}` ||
        (options.allowedOrigins ?? []).includes(origin);
      if (!allowed)
        return refuse(c, {
          status: 403,
          code: 'FORBIDDEN',
          message: `Origin "${origin.slice(0, 100)}" may not call this server`,
        });
    }
    return next();
  });

  // The token, on every /api call and on /metrics.
  const requireToken = async (c: Context, next: () => Promise<void>) => {
    const authorization = c.req.header('authorization');
    const header = c.req.header('x-runnel-token');
    const query = (c.req.path === '/api/events' || c.req.path === '/api/changes') && c.req.method === 'GET' ? c.req.query('token') : undefined;
    const given = bearer(authorization) ?? header ?? query;
    if (!sameToken(given, token)) {
      const presented = authorization !== undefined || header !== undefined || query !== undefined;
      return refuse(c, {
        status: 401,
        code: 'UNAUTHORIZED',
        message: presented ? 'the API token is wrong' : 'the API token is missing',
      });
    }
    c.header('Cache-Control', 'no-store');
    return next();
  };
  app.use('/api/*', requireToken);
  app.use('/metrics', requireToken);

  app.get('/metrics', async (c) => {
    try {
      return c.body(await metrics.text(), 200, { 'Content-Type': metrics.contentType });
    } catch (e) {
      const code = (e as { code?: unknown }).code;
      return c.body(`# error: ${typeof code === 'string' ? code : 'INTERNAL'}: ${(e as Error).message}\n`, 503, { 'Content-Type': 'text/plain; charset=utf-8' });
    }
  });

  app.get('/api/health', (c) =>
    c.json({ ok: true, value: { status: 'ok' } } satisfies Result<{ status: string }>),
  );

  app.get('/api/events', (c) =>
    streamSSE(c, async (stream) => {
      let queue = Promise.resolve();
      let backlog = 0;
      let finish: () => void = () => undefined;
      const done = new Promise<void>((resolve) => (finish = resolve));
      const client: StreamClient = {
        send(batch) {
          // A client that cannot keep up is dropped; EventSource reconnects and the UI reloads.
          if (++backlog > 200) return client.end();
          queue = queue
            .then(() => stream.writeSSE({ id: String(batch.seq), data: JSON.stringify(batch) }))
            .then(
              () => void backlog--,
              () => client.end(),
            );
        },
        end() {
          clients.delete(client);
          finish();
        },
      };
      stream.onAbort(() => client.end());
      clients.add(client);
      await stream.write('retry: 2000\n: connected\n\n');
      const ping = setInterval(() => {
        queue = queue
          .then(() => stream.write(': ping\n\n'))
          .then(
            () => undefined,
            () => client.end(),
          );
      }, 15_000);
      try {
        await done;
      } finally {
        clearInterval(ping);
        clients.delete(client);
        await queue.catch(() => undefined);
      }
    }),
  );

  app.get('/api/changes', (c) =>
    serveChanges(c, {
      engine,
      handlers,
      ...(options.changesPollMs === undefined ? {} : { pollMs: options.changesPollMs }),
      track: (end) => {
        feedStreams.add(end);
        return () => feedStreams.delete(end);
      },
    }),
  );

  app.post('/api/:channel', async (c) => {
    const body = await readBody(c.req.raw, bodyLimit);
    if (body === undefined) {
      return refuse(c, {
        status: 413,
        code: 'PAYLOAD_TOO_LARGE',
        message: `the request body is above the limit of ${bodyLimit} bytes`,
      });
    }
    let payload: unknown;
    if (body.length > 0) {
      let text: string;
      try {
        // Bytes that are not UTF-8 are refused, not read as U+FFFD into names and values.
        text = UTF8.decode(body);
      } catch {
        return c.json(err('BAD_REQUEST', 'the request body is not valid UTF-8'));
      }
      try {
        payload = JSON.parse(text);
      } catch {
        return c.json(err('BAD_REQUEST', 'the request body is not JSON'));
      }
    }
    return c.json(await dispatch(handlers, c.req.param('channel'), payload, options.dispatch));
  });

  // Anything else under /api: a channel called with the wrong method, or no such path.
  app.all('/api/*', (c) =>
    c.req.method !== 'POST' && !c.req.path.slice('/api/'.length).includes('/')
      ? refuse(c, {
          status: 405,
          code: 'BAD_REQUEST',
          message: `${c.req.method} ${c.req.path.slice(0, 100)}: channels are called with POST`,
        })
      : refuse(c, {
          status: 404,
          code: 'UNKNOWN_CHANNEL',
          message: `no such API path ${c.req.path.slice(0, 100)}`,
        }),
  );

  if (hasRenderer) {
    app.use('*', serveStatic({ root: rendererDir }));
    // Client-side routes: any other page is the app.
    app.get('*', (c) => c.html(fs.readFileSync(path.join(rendererDir, 'index.html'), 'utf8')));
  } else {
    app.get('*', (c) => c.html(HINT_PAGE));
  }

  const server = createAdaptorServer({ fetch: app.fetch }) as Server;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, HOST, () => {
      server.off('error', reject);
      resolve();
    });
  });
  port = (server.address() as AddressInfo).port;

  const ownsWorker = options.startWorker ?? true;
  if (ownsWorker) engine.startWorker();

  let closing: Promise<void> | undefined;
  return {
    url: `http://${HOST}:${port}/?token=${token}`,
    port,
    token,
    server,
    close() {
      closing ??= (async () => {
        stopWatch();
        stopEvents();
        metrics.close();
        for (const c of [...clients]) c.end();
        for (const end of [...feedStreams]) end();
        await new Promise<void>((resolve) => {
          // Ended streams leave keep-alive sockets behind a moment later: close them as they idle,
          // and after a second close whatever is left (a stuck socket must not hold the shutdown).
          const idle = setInterval(() => server.closeIdleConnections(), 20);
          const all = setTimeout(() => server.closeAllConnections(), 1000);
          server.close(() => {
            clearInterval(idle);
            clearTimeout(all);
            resolve();
          });
          server.closeIdleConnections();
        });
        if (ownsWorker) await engine.stopWorker();
      })();
      return closing;
    },
  };
}
