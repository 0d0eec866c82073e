/**
 * A worker process of the several-processes scenario: `node --import tsx bench/worker.ts <db> <sync>`.
 *
 * Opens the engine, prints `BENCH_READY`, starts its worker loop when a line arrives on stdin,
 * and exits once no instance is PENDING or RUNNING, printing `BENCH_RESULT {json}`: its
 * transitions, its service-time histogram (encoded) and the epoch ms of its last commit.
 */
import { openEngine, Probe } from './engine-run';
import type { Sync } from './raw';
import { sleep } from './stats';

const [file, sync] = process.argv.slice(2) as [string, Sync];
const engine = openEngine(file, sync);
const probe = new Probe(engine);
const live = engine.db.raw.prepare<[], { n: number }>(
  `SELECT count(*) AS n FROM instance WHERE status IN ('PENDING', 'RUNNING')`,
);
process.stdout.write('BENCH_READY\n');
// The parent gone (stdin closed) before "go": nothing to run for.
process.stdin.once('end', () => process.exit(1));
await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()));
engine.startWorker();
while ((live.get()?.n ?? 0) > 0) await sleep(20);
await engine.stopWorker();
probe.close();
const result = {
  pid: process.pid,
  transitions: probe.transitions,
  service: probe.service.encode(),
  lockWait: probe.lockWait.encode(),
  lastCommitEpochMs: performance.timeOrigin + probe.lastCommitMs,
};
await engine.close();
process.stdout.write(`BENCH_RESULT ${JSON.stringify(result)}\n`);
process.stdin.destroy();
