/**
 * The `app://runnel/` protocol's pure half: which file of the built renderer a request maps to,
 * its content type, and the response headers (the CSP among them). `main.ts` registers the scheme
 * and serves the bytes; tests cover the mapping without Electron.
 */
import path from 'node:path';
import { APP_HOST, APP_SCHEME, contentSecurityPolicy } from './security';

const MIME_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.wasm': 'application/wasm',
  '.map': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};

/** A request of the app protocol resolved to a file. */
export interface AppAsset {
  /** Absolute path inside `rendererDir`. */
  file: string;
  /** The `Content-Type` to send. */
  contentType: string;
}

/**
 * Maps `app://runnel/<path>` to a file inside `rendererDir`; `/` is `index.html`.
 *
 * Returns null (a 404) for another scheme or host, for a path that would leave `rendererDir`
 * (`..`, encoded or not, absolute or drive paths), and for NUL bytes. Query and fragment are
 * ignored. The file's existence is the caller's to check.
 */
export function resolveAppAsset(rendererDir: string, requestUrl: string): AppAsset | null {
  let url: URL;
  try {
    url = new URL(requestUrl);
  } catch {
    return null;
  }
  if (url.protocol !== `${APP_SCHEME}:` || url.host !== APP_HOST) return null;
  let pathname: string;
  try {
    pathname = decodeURIComponent(url.pathname);
  } catch {
    return null;
  }
  if (pathname.includes('\0') || pathname.includes('\\')) return null;
  if (pathname === '' || pathname === '/') pathname = '/index.html';
  const root = path.resolve(rendererDir);
  const file = path.resolve(root, `.${path.posix.normalize(pathname)}`);
  const relative = path.relative(root, file);
  if (relative === '' || relative.startsWith('..') || path.isAbsolute(relative)) return null;
  const contentType = MIME_TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream';
  return { file, contentType };
}

/**
 * Headers of every app-protocol response: the type, the strict CSP (so it holds even without a
 * `<meta>` tag), no MIME sniffing, no referrer, no caching of stale bundles.
 */
export function appResponseHeaders(contentType: string): Record<string, string> {
  return {
    'Content-Type': contentType,
    'Content-Security-Policy': contentSecurityPolicy(),
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'Cache-Control': 'no-cache',
  };
}
