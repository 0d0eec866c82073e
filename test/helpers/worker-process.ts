/**
 * A worker process for the process tests: `node --import tsx test/helpers/worker-process.ts [db]`.
 *
 * Opens the engine on the database (a file or a postgres:// URL: argv[2] or RUNNEL_DB) with the test node types
 * (test-nodes.ts, logging to RUNNEL_CALL_LOG), runs the worker loop, prints
 * `RUNNEL_WORKER_READY <epoch ms>` once the loop runs, and exits 0 when the file has no pending
 * work (engine.isIdle() and no PENDING/RUNNING/COMPENSATING instance), or on SIGTERM after a
 * graceful stop. Fault points are armed by the engine from RUNNEL_FAULTS.
 *
 * Environment: RUNNEL_LEASE_MS, RUNNEL_POLL_MS, RUNNEL_CONCURRENCY, RUNNEL_SYNCHRONOUS
 * (FULL|NORMAL), RUNNEL_BUSY_TIMEOUT_MS, RUNNEL_EXIT_WHEN_IDLE (default 1), RUNNEL_RETENTION (the
 * default policy as JSON, or `off`), RUNNEL_RETENTION_INTERVAL_MS, RUNNEL_RETENTION_BATCH, RUNNEL_CLOCK_OFFSET_MS
 * (the engine's clock runs that many ms ahead of the wall clock: an OffsetClock, so processes given
 * one offset share one test time, and a restart with a larger one is a stop of that long). On a clean exit it
 * prints `RUNNEL_WORKER_STATS {json}` with its largest event-loop delay. If the file stays without work while an
 * instance is still live for RUNNEL_STUCK_MS (default 3000), it prints `RUNNEL_WORKER_STUCK` to
 * stderr and exits 3: such an instance could never finish.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Engine } from '../../engine/runtime/engine';
import { OffsetClock } from '../../engine/runtime/clock';
import { createTestRegistry } from './test-nodes';

function num(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n)) throw new Error(`${name} must be a number, got "${raw}"`);
  return n;
}

const file = process.argv[2] ?? process.env.RUNNEL_DB;
if (!file) {
  console.error('usage: worker-process.ts <db file> (or RUNNEL_DB)');
  process.exit(2);
}
const callLog = process.env.RUNNEL_CALL_LOG ?? `${file}.calls.log`;
const pollIntervalMs = num('RUNNEL_POLL_MS', 20);
const exitWhenIdle = process.env.RUNNEL_EXIT_WHEN_IDLE !== '0';
const stuckMs = num('RUNNEL_STUCK_MS', 3000);

const clock = new OffsetClock();
clock.offsetMs = num('RUNNEL_CLOCK_OFFSET_MS', 0);
const engine = Engine.open(file, {
  registry: createTestRegistry(callLog),
  ...(clock.offsetMs === 0 ? {} : { clock }),
  leaseMs: num('RUNNEL_LEASE_MS', 30_000),
  pollIntervalMs,
  concurrency: num('RUNNEL_CONCURRENCY', 32),
  synchronous: process.env.RUNNEL_SYNCHRONOUS === 'NORMAL' ? 'NORMAL' : 'FULL',
  ...(process.env.RUNNEL_BUSY_TIMEOUT_MS ? { busyTimeoutMs: num('RUNNEL_BUSY_TIMEOUT_MS', 5000) } : {}),
  // Retention: a default policy as JSON (or "off"), how often a pass starts and its batch size.
  ...(process.env.RUNNEL_RETENTION === 'off'
    ? { retention: false as const }
    : process.env.RUNNEL_RETENTION
      ? { retention: JSON.parse(process.env.RUNNEL_RETENTION) as Record<string, number | null> }
      : {}),
  ...(process.env.RUNNEL_RETENTION_INTERVAL_MS ? { retentionIntervalMs: num('RUNNEL_RETENTION_INTERVAL_MS', 60_000) } : {}),
  ...(process.env.RUNNEL_RETENTION_BATCH ? { retentionBatchSize: num('RUNNEL_RETENTION_BATCH', 500) } : {}),
});
/** Instances still owing work (PENDING, RUNNING, COMPENSATING), on either backend. */
async function liveCount(): Promise<number> {
  const c = await engine.countByStatus({});
  return (c.PENDING ?? 0) + (c.RUNNING ?? 0) + (c.COMPENSATING ?? 0);
}

let stopping = false;
let idleTimer: NodeJS.Timeout | undefined;
async function stop(code: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  if (idleTimer) clearInterval(idleTimer);
  try {
    await engine.close();
    loopDelay.disable();
    process.stdout.write(
      `RUNNEL_WORKER_STATS ${JSON.stringify({ maxLoopDelayMs: Math.round(loopDelay.max / 1e6), p99LoopDelayMs: Math.round(loopDelay.percentile(99) / 1e6) })}\n`,
    );
  } catch (err) {
    console.error('runnel worker-process: close failed', err);
    code = code === 0 ? 1 : code;
  }
  process.exit(code);
}

process.on('SIGTERM', () => void stop(0));
process.on('unhandledRejection', (err) => {
  console.error('runnel worker-process: unhandled rejection', err);
  process.exit(1);
});

const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();
engine.startWorker();
process.stdout.write(`RUNNEL_WORKER_READY ${Date.now()}\n`);

let stuckSince: number | undefined;
if (exitWhenIdle) {
  let checking = false;
  idleTimer = setInterval(
    () => {
      if (checking) return;
      checking = true;
      void check().finally(() => (checking = false));
    },
    Math.max(10, pollIntervalMs),
  );
  const check = async (): Promise<void> => {
    if (stopping || !(await engine.isIdle())) {
      stuckSince = undefined;
      return;
    }
    const n = await liveCount();
    if (n === 0) {
      void stop(0);
      return;
    }
    stuckSince ??= Date.now();
    if (Date.now() - stuckSince > stuckMs) {
      console.error(`RUNNEL_WORKER_STUCK ${n} live instance(s) but no schedule row for ${stuckMs} ms`);
      void stop(3);
    }
  };
}
