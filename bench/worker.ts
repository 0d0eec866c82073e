/**
 * A worker process of the several-processes scenario: `node --import tsx bench/worker.ts <db> <sync>`.
 *
 * Warms up on a scratch file, opens the engine, prints `BENCH_READY`, starts its worker loop when a line arrives on stdin,
 * and exits once no instance is PENDING or RUNNING, printing `BENCH_RESULT {json}`: its
 * transitions, its service-time histogram (encoded) and the epoch ms of its last commit.
 */
import { openEngine, Probe, startBatch } from './engine-run';
import type { Sync } from './raw';
import { removeDb, sleep } from './stats';
import { LINEAR } from './workflows';

const [file, sync] = process.argv.slice(2) as [string, Sync];

// Warm-up on a scratch file of its own: the engine's code is compiled and optimised before the
// clock starts. Without it, four processes that each run a quarter of the work spent a larger
// share of it in cold code than one process did, and "adding processes" measured JIT warm-up.
{
  const scratch = `${file}.warm-${process.pid}`;
  removeDb(scratch);
  const warm = openEngine(scratch, sync);
  await warm.deploy(LINEAR);
  const probe = new Probe(warm);
  await startBatch(warm, LINEAR.name, 2000);
  warm.startWorker();
  await probe.until(() => probe.finished >= 2000, 60_000, 'warm-up');
  probe.close();
  await warm.close();
  removeDb(scratch);
}

const engine = openEngine(file, sync);
const probe = new Probe(engine);
// Whether some instance is still live: one index probe (a count of thousands, every 20 ms in
// every process, was CPU taken from the processes measured).
const live = engine.db.raw.prepare<[], { n: number }>(
  `SELECT count(*) AS n FROM (SELECT 1 FROM instance WHERE status IN ('PENDING', 'RUNNING') LIMIT 1)`,
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
