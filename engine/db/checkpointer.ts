/**
 * WAL checkpoints off the worker's hot path: a second connection in a worker thread runs
 * `PRAGMA wal_checkpoint(PASSIVE)` every {@link CheckpointerOptions.intervalMs}.
 *
 * SQLite's automatic checkpoint runs inside the commit that crosses `wal_autocheckpoint` pages,
 * on the committing thread: that commit (and every step waiting behind it) stalls while the pages
 * are copied into the database file and it is synced — most of a P99 (anchors-performance.md).
 * A PASSIVE checkpoint never blocks writers (SQLite docs, "wal_checkpoint"), so on its own thread
 * it overlaps the worker and copies most frames ahead of time. The connection's own automatic
 * checkpoint stays: it then finds little left to copy, and being run by the writer between its
 * transactions it is the one that completes, so the next transaction starts the WAL over (a
 * checkpoint on another connection alone cannot: the writer keeps appending while it runs, and
 * the WAL grew without bound in the benchmark). Measured (bench, NORMAL, 10,000 live, 50% load):
 * due→committed P99 6.4 → 4.4 ms, transaction P99 4.0 → 1.2 ms; throughput unchanged.
 *
 * The thread's code is plain JavaScript evaluated in the thread (no TypeScript loader needed, in
 * tests, the CLI or the packaged app); it loads the same better-sqlite3 as the engine.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** Options of {@link startCheckpointer}. */
export interface CheckpointerOptions {
  /** Time between checkpoints, ms. Default 20. */
  intervalMs?: number;
  /** better-sqlite3's `nativeBinding` (the packaged app's path to its addon). */
  nativeBinding?: string;
}

/** A running checkpointer thread. */
export interface Checkpointer {
  /** Stops the thread after the checkpoint under way (if any); resolves when it has exited. */
  stop(): Promise<void>;
}

const THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.module);
const db = new Database(workerData.file, workerData.nativeBinding ? { nativeBinding: workerData.nativeBinding } : {});
db.pragma('busy_timeout = 0');
// A checkpoint copies frames from the WAL to the file: it needs no page cache of its own.
db.pragma('cache_size = -256');
let timer;
let delay = workerData.intervalMs;
let last = -1;
function run() {
  let idle = false;
  try {
    const r = db.pragma('wal_checkpoint(PASSIVE)')[0];
    // Nothing written since the last round: back off (up to 25 intervals), at once back on a write.
    idle = r !== undefined && r.log === last && r.checkpointed === r.log;
    last = r === undefined ? -1 : r.log;
  } catch (err) { /* busy or closing: the next round tries again */ }
  delay = idle ? Math.min(delay * 2, workerData.intervalMs * 25) : workerData.intervalMs;
  timer = setTimeout(run, delay);
}
parentPort.on('message', () => {
  clearTimeout(timer);
  try { db.close(); } catch (err) { /* already closed */ }
  process.exit(0);
});
run();
`;

/**
 * Starts checkpointing `file` (a WAL database) on a worker thread. Returns undefined when no
 * thread can be started here (the connection's automatic checkpoint still does all the work).
 * Errors inside the thread (busy, a file gone) are skipped; the next round tries again.
 */
export function startCheckpointer(file: string, options: CheckpointerOptions = {}): Checkpointer | undefined {
  let worker: Worker;
  try {
    const module = createRequire(import.meta.url).resolve('better-sqlite3');
    worker = new Worker(THREAD_SOURCE, {
      eval: true,
      workerData: { file, module, intervalMs: options.intervalMs ?? 20, nativeBinding: options.nativeBinding },
      // A small heap: the thread holds one connection and a timer (peak RSS is a benchmark target).
      resourceLimits: { maxOldGenerationSizeMb: 8, maxYoungGenerationSizeMb: 2, stackSizeMb: 1 },
    });
  } catch {
    return undefined;
  }
  // Never keeps the process alive; errors of the thread are its own (the backstop covers it).
  worker.unref();
  const exited = new Promise<void>((resolve) => {
    worker.once('exit', () => resolve());
    worker.once('error', () => resolve());
  });
  return {
    async stop() {
      // Referenced again while it exits: an unreferenced thread would let the process end with
      // this wait still pending.
      worker.ref();
      worker.postMessage('stop');
      await exited;
    },
  };
}
