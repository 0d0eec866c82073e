/**
 * The `http` node type: one HTTP request with the global `fetch`.
 *
 * Failures are sorted for the retry policy the way Step Functions and Temporal users expect:
 * network errors, timeouts, 5xx, 408 and 429 may pass if tried again (retryable); any other
 * unexpected status will not (non-retryable), nor will a bad URL or an oversized response.
 * Every request carries `Idempotency-Key: <instance id>:<node id>` so a server can de-duplicate
 * the repeat that at-least-once execution allows (a crash between the response and its commit).
 * Node ids may be any Unicode letters or emoji, and a header carries only bytes: the key is sent
 * through {@link encodeHeaderValue} (ASCII ids unchanged; decode with `decodeURIComponent`).
 */
import { EngineError } from '../errors';
import { abortError, throwIfAborted } from './abort';
import { HttpConfigSchema, HttpMethodSchema, type HttpConfig, type HttpConfigInput } from './http-config';
import type { NodeType } from './types';

export { HttpConfigSchema, HttpMethodSchema, type HttpConfig, type HttpConfigInput };

/** The largest response body read by default: 10 MiB. */
export const DEFAULT_MAX_RESPONSE_BYTES = 10 * 1024 * 1024;

/**
 * The request timeout when the config gives none: 5 minutes.
 *
 * A request must never hang a node forever when the node has no `timeoutMs`; 5 minutes is long
 * enough not to cut slow but healthy endpoints (n8n uses the same order of magnitude).
 */
export const DEFAULT_HTTP_TIMEOUT_MS = 300_000;

/** How much of an error response body is kept in the error's details. */
const ERROR_BODY_PREVIEW_CHARS = 2048;
const ERROR_BODY_PREVIEW_BYTES = 4 * ERROR_BODY_PREVIEW_CHARS;

/** Statuses worth retrying besides 5xx: Request Timeout and Too Many Requests. */
const RETRYABLE_4XX: ReadonlySet<number> = new Set([408, 429]);

/** Characters a header value may carry as they are: visible ASCII except `%` (the escape). */
const HEADER_UNSAFE = /[^\x21-\x24\x26-\x7e]+/g;
const utf8 = new TextEncoder();

/**
 * A header value built from ids or names, made safe for HTTP: every character outside visible
 * ASCII, and `%` itself, becomes the percent-encoding of its UTF-8 bytes (RFC 3986 section 2.1,
 * upper-case hex), the rest is kept byte for byte.
 *
 * So `42:取得` is sent as `42:%E5%8F%96%E5%BE%97` and `42:charge` as it is (node ids cannot hold
 * `%` or spaces, so an ASCII id's key is the same as before this encoding). A receiver gets the
 * original back with `decodeURIComponent(value)`. A lone surrogate (never in a valid id) is sent
 * as U+FFFD. Fetch would otherwise refuse the request: a header value is a ByteString.
 */
export function encodeHeaderValue(value: string): string {
  return value.replace(HEADER_UNSAFE, (run) =>
    Array.from(utf8.encode(run), (b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join(''),
  );
}


/** The result of an `http` node: status, lower-case headers, and the parsed body. */
export interface HttpResult {
  status: number;
  headers: Record<string, string>;
  /** JSON value, text, or `null` for HEAD and empty JSON responses. */
  body: unknown;
}

/** Options of {@link createHttpNodeType}. */
export interface HttpNodeOptions {
  /** Response bodies above this many bytes fail with RESULT_TOO_LARGE (default 10 MiB). */
  maxResponseBytes?: number;
}

/**
 * Builds an `http` node type.
 *
 * Output: {@link HttpResult}. Errors (all {@link EngineError}):
 * - `INVALID_INPUT` (non-retryable): URL not absolute http(s), invalid header;
 * - `HTTP_ERROR`: unexpected status (details: `status`, `method`, `url`, a body preview, and
 *   `retryAfterMs` when the server sent Retry-After), retryable for 5xx, 408 and 429 only;
 *   network failure (retryable); a body that is not JSON when `responseType` is `json`
 *   (non-retryable);
 * - `TIMEOUT` (retryable): `timeoutMs` passed; `ctx.signal` aborts map through
 *   {@link abortError};
 * - `RESULT_TOO_LARGE` (non-retryable): body above `maxResponseBytes`.
 */
export function createHttpNodeType(options: HttpNodeOptions = {}): NodeType<HttpConfig> {
  const maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  return {
    type: 'http',
    title: 'HTTP request',
    description: 'Sends an HTTP request and returns the response',
    icon: 'globe',
    group: 'Integration',
    configSchema: HttpConfigSchema,
    execute: async (ctx) => ({ output: await sendRequest(ctx.config, ctx, maxResponseBytes) }),
  };
}

/** The `http` node type with default options. */
export const httpNode: NodeType<HttpConfig> = createHttpNodeType();

interface RequestContext {
  signal: AbortSignal;
  idempotencyKey: string;
}

async function sendRequest(config: HttpConfig, ctx: RequestContext, maxBytes: number): Promise<HttpResult> {
  const { url, authorization } = buildUrl(config);
  const shown = url.href;
  const what = `${config.method} ${shown}`;
  throwIfAborted(ctx.signal, what);

  const headers = buildHeaders(config, ctx.idempotencyKey);
  if (authorization !== undefined && !headers.has('authorization'))
    headers.set('authorization', authorization);
  let body: string | undefined;
  if (config.body !== undefined) {
    if (typeof config.body === 'string') body = config.body;
    else {
      body = JSON.stringify(config.body);
      if (!headers.has('content-type')) headers.set('content-type', 'application/json');
    }
  }

  const timeoutMs = config.timeoutMs ?? DEFAULT_HTTP_TIMEOUT_MS;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = AbortSignal.any([ctx.signal, timeout]);
  // Maps a failure of fetch or of reading the body: who aborted decides the code.
  const failure = (err: unknown): EngineError => {
    if (err instanceof EngineError) return err;
    if (ctx.signal.aborted) return abortError(ctx.signal, what);
    if (timeout.aborted) {
      return new EngineError('TIMEOUT', `${what} timed out after ${timeoutMs} ms`, {
        retryable: true,
        details: { method: config.method, url: shown, timeoutMs },
        cause: err,
      });
    }
    const reason = networkReason(err);
    return new EngineError('HTTP_ERROR', `${what} failed: ${reason}`, {
      retryable: true,
      details: { method: config.method, url: shown, reason },
      cause: err,
    });
  };

  let response: Response;
  try {
    response = await fetch(url, { method: config.method, headers, body, signal, redirect: 'follow' });
  } catch (err) {
    throw failure(err);
  }

  const expected = config.expectedStatus
    ? config.expectedStatus.includes(response.status)
    : response.status >= 200 && response.status < 300;
  if (!expected) {
    // Only a preview is kept, and a failure to read it must not hide the status.
    const preview =
      config.method === 'HEAD'
        ? null
        : await readBody(response, ERROR_BODY_PREVIEW_BYTES, what, true).catch(() => null);
    throw statusError(response, config, shown, preview);
  }
  let text: string | null;
  try {
    text = config.method === 'HEAD' ? null : await readBody(response, maxBytes, what, false);
  } catch (err) {
    throw failure(err);
  }

  return {
    status: response.status,
    headers: plainHeaders(response.headers),
    body: text === null ? null : parseBody(text, response, config, what),
  };
}

/**
 * The request URL with `query` appended and credentials taken out: fetch refuses URLs with
 * credentials, so `user:pass@` becomes Basic authorization (as curl does), and messages never
 * show the password.
 */
function buildUrl(config: HttpConfig): { url: URL; authorization?: string } {
  let url: URL;
  try {
    url = new URL(config.url);
  } catch (err) {
    throw new EngineError('INVALID_INPUT', `url "${config.url}" is not an absolute URL`, {
      retryable: false,
      details: { field: 'url', url: config.url },
      cause: err,
    });
  }
  let authorization: string | undefined;
  if (url.username !== '' || url.password !== '') {
    const user = decodeURIComponent(url.username);
    const password = decodeURIComponent(url.password);
    authorization = `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}`;
    url.username = '';
    url.password = '';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new EngineError(
      'INVALID_INPUT',
      `url "${url.href}" uses ${url.protocol}; only http: and https: are allowed`,
      { retryable: false, details: { field: 'url', url: url.href } },
    );
  }
  for (const [key, value] of Object.entries(config.query ?? {})) {
    url.searchParams.append(key, String(value));
  }
  return authorization === undefined ? { url } : { url, authorization };
}

function buildHeaders(config: HttpConfig, idempotencyKey: string): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(config.headers ?? {})) {
    try {
      headers.append(name, value);
    } catch (err) {
      throw new EngineError('INVALID_INPUT', `headers.${name}: ${headerProblem(value, err)}`, {
        retryable: false,
        details: { field: `headers.${name}` },
        cause: err,
      });
    }
  }
  if (!headers.has('idempotency-key')) headers.set('idempotency-key', encodeHeaderValue(idempotencyKey));
  return headers;
}

/** Why fetch refused a header: a character it cannot carry is named, else fetch's own words. */
function headerProblem(value: string, err: unknown): string {
  const wide = /[\u0100-\u{10ffff}]/u.exec(value);
  if (wide !== null) {
    const code = wide[0].codePointAt(0)?.toString(16).toUpperCase().padStart(4, '0') ?? '';
    return (
      `the value holds "${wide[0]}" (U+${code}) at index ${wide.index}, and a header carries only ` +
      'Latin-1 bytes: encode it, e.g. {{ $encodeUrlComponent(…) }}'
    );
  }
  return err instanceof Error ? err.message : String(err);
}

/** undici reports "fetch failed" and puts the useful part (ECONNREFUSED, …) in the cause. */
function networkReason(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause: unknown = err.cause;
  if (cause instanceof Error) {
    const code = (cause as { code?: unknown }).code;
    return typeof code === 'string' ? `${code} (${cause.message})` : cause.message;
  }
  return err.message;
}

/**
 * Reads the body as UTF-8 text, stopping as soon as it passes `maxBytes` so an endless or huge
 * response never sits in memory whole: past the cap it fails with RESULT_TOO_LARGE, or with
 * `truncate` returns what it has so far.
 */
async function readBody(
  response: Response,
  maxBytes: number,
  what: string,
  truncate: boolean,
): Promise<string> {
  const tooLarge = (): EngineError =>
    new EngineError('RESULT_TOO_LARGE', `${what}: response body exceeds ${maxBytes} bytes`, {
      retryable: false,
      details: { status: response.status, maxBytes },
    });
  const declared = Number(response.headers.get('content-length') ?? NaN);
  if (!truncate && Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw tooLarge();
  }
  if (!response.body) return '';
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let size = 0;
  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined);
      if (!truncate) throw tooLarge();
      const room = value.byteLength - (size - maxBytes);
      return text + decoder.decode(value.subarray(0, room));
    }
    text += decoder.decode(value, { stream: true });
  }
  return text + decoder.decode();
}

function isJsonContentType(response: Response): boolean {
  const type = response.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase() ?? '';
  return type === 'application/json' || type.endsWith('+json');
}

function parseBody(text: string, response: Response, config: HttpConfig, what: string): unknown {
  const wantJson =
    config.responseType === 'json' || (config.responseType === 'auto' && isJsonContentType(response));
  if (!wantJson) return text;
  if (text.trim() === '') return null;
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    // `auto` trusted a content type that lied: keep the text rather than fail a 2xx.
    if (config.responseType === 'auto') return text;
    throw new EngineError('HTTP_ERROR', `${what}: response body is not JSON`, {
      retryable: false,
      details: { status: response.status, body: text.slice(0, ERROR_BODY_PREVIEW_CHARS) },
      cause: err,
    });
  }
}

function plainHeaders(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  // Headers yields names lower-cased and set-cookie once per cookie; join repeats as fetch does.
  headers.forEach((value, name) => {
    out[name] = out[name] === undefined ? value : `${out[name]}, ${value}`;
  });
  return out;
}

/** Retry-After as ms: either delay-seconds or an HTTP date (RFC 9110 section 10.2.3). */
function retryAfterMs(response: Response): number | undefined {
  const value = response.headers.get('retry-after');
  if (value === null) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isFinite(at) ? Math.max(0, at - Date.now()) : undefined;
}

function statusError(response: Response, config: HttpConfig, url: string, text: string | null): EngineError {
  const status = response.status;
  const retryable = status >= 500 || RETRYABLE_4XX.has(status);
  const expected = config.expectedStatus ? config.expectedStatus.join(', ') : '2xx';
  const label = response.statusText ? `${status} ${response.statusText}` : String(status);
  const details: Record<string, unknown> = { status, method: config.method, url, expected };
  if (text !== null && text !== '') details.body = text.slice(0, ERROR_BODY_PREVIEW_CHARS);
  const after = retryAfterMs(response);
  if (after !== undefined) details.retryAfterMs = after;
  return new EngineError('HTTP_ERROR', `${config.method} ${url} answered ${label} (expected ${expected})`, {
    retryable,
    details,
  });
}
