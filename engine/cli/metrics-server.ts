/**
 * `runnel worker --metrics-port N`: the worker's Prometheus metrics on 127.0.0.1, without a token.
 *
 * A worker has no API to protect, and its counters (what it committed) exist only in its process,
 * so a local Prometheus must be able to scrape it without a per-run secret. It answers `GET
 * /metrics` and nothing else, on the loopback address only, and refuses a `Host` other than
 * `127.0.0.1:<port>` or `localhost:<port>` (a web page's DNS rebinding could otherwise read it).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EngineMetrics } from '../api';

/** A running metrics listener. */
export interface MetricsServer {
  /** The port bound (the one asked for, or a free one for 0). */
  port: number;
  close(): Promise<void>;
}

/**
 * Serves `metrics` at `http://127.0.0.1:<port>/metrics`.
 *
 * @throws Error when the port cannot be bound (EADDRINUSE, EACCES).
 */
export async function serveMetrics(metrics: EngineMetrics, port: number): Promise<MetricsServer> {
  let bound = 0;
  const server = http.createServer((req, res) => {
    const host = (req.headers.host ?? '').toLowerCase();
    if (host !== `127.0.0.1:${bound}` && host !== `localhost:${bound}`) {
      res.writeHead(403, { 'Content-Type': 'text/plain; charset=utf-8' }).end('forbidden: not this host\n');
      return;
    }
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('only GET /metrics is served here\n');
      return;
    }
    metrics.text().then(
      (text) => res.writeHead(200, { 'Content-Type': metrics.contentType, 'Cache-Control': 'no-store' }).end(text),
      (err: unknown) => {
        const code = (err as { code?: unknown }).code;
        res.writeHead(503, { 'Content-Type': 'text/plain; charset=utf-8' }).end(`# error: ${typeof code === 'string' ? code : 'INTERNAL'}: ${(err as Error).message}\n`);
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  bound = (server.address() as AddressInfo).port;
  return {
    port: bound,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
