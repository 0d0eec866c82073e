/**
 * The browser host under load, for the API round-trip figures:
 * `node --import tsx bench/api-host.ts <db> <sync>`.
 *
 * Serves the engine over HTTP (server/index.ts, the real host), keeps its worker flat out
 * (a backlog of linear instances topped up by 100 every 10 ms), prints `BENCH_API {url, token}`, and on
 * a line on stdin stops, printing `BENCH_RESULT {json}` with the transitions/s it kept up.
 */
import { startServer } from '../server/index';
import { openEngine, Probe, startBatch } from './engine-run';
import type { Sync } from './raw';
import { nowMs, sleep } from './stats';
import { LINEAR } from './workflows';

const [file, sync] = process.argv.slice(2) as [string, Sync];
const engine = openEngine(file, sync);
await engine.deploy(LINEAR);
const probe = new Probe(engine);
let started = 0;
started += (await startBatch(engine, LINEAR.name, 3000, 5_000_000)).length;
const server = await startServer({ engine, startWorker: true });
const t0 = nowMs();
const base = probe.transitions;
process.stdout.write(
  `BENCH_API ${JSON.stringify({ url: `http://127.0.0.1:${server.port}`, token: server.token })}\n`,
);
let stopping = false;
process.stdin.once('data', () => (stopping = true));
process.stdin.once('end', () => (stopping = true));
// Small top-ups, often: one startMany of thousands would hold the event loop (and every
// request behind it) for tens of milliseconds, which no host does.
while (!stopping) {
  if (started - probe.finished < 2000)
    started += (await startBatch(engine, LINEAR.name, 100, 5_000_000 + started)).length;
  await sleep(10);
}
const seconds = (nowMs() - t0) / 1000;
const transitions = probe.transitions - base;
await server.close();
probe.close();
await engine.close();
process.stdout.write(
  `BENCH_RESULT ${JSON.stringify({ transitionsPerSec: transitions / seconds, seconds })}\n`,
);
process.stdin.destroy();
