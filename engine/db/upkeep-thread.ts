/**
 * SQLite upkeep off the engine's thread: a second connection in a worker thread that runs WAL
 * checkpoints and renews the worker's leases.
 *
 * Checkpoints. SQLite's automatic checkpoint runs inside the commit that crosses
 * `wal_autocheckpoint` pages, on the committing thread: that commit (and every step waiting behind
 * it) stalls while the pages are copied into the database file and it is synced — most of a P99
 * (anchors-performance.md). A PASSIVE checkpoint never blocks writers (SQLite docs,
 * "wal_checkpoint"), so on its own thread it overlaps the worker and copies most frames ahead of
 * time. The connection's own automatic checkpoint stays: it then finds little left to copy, and
 * being run by the writer between its transactions it is the one that completes, so the next
 * transaction starts the WAL over (a checkpoint on another connection alone cannot: the writer
 * keeps appending while it runs, and the WAL grew without bound in the benchmark). Measured
 * (bench, NORMAL, 10,000 live, 50% load): due→committed P99 6.4 → 4.4 ms, transaction P99 4.0 →
 * 1.2 ms; throughput unchanged.
 *
 * Leases. The loop's own heartbeats run between its turns; a handler or expression that holds the
 * thread (a CPU-bound custom type, a huge JSONata evaluation) would let a lease expire under a
 * live step, and another worker would run it a second time (issue 17: five 8 s busy handlers on
 * two workers all ended LEASE_LOST). Here, every `leaseMs / 6`, the leases of `owner` that are
 * more than a third used are extended by `leaseMs`, as long as the loop said it was alive within
 * `stallMs` (a shared counter it bumps every turn): a busy loop keeps its steps, a hung one loses
 * them after `stallMs`. The version of a row never changes here, so a claim's commit still knows it.
 *
 * The thread's code is plain JavaScript evaluated in the thread (no TypeScript loader needed, in
 * tests, the CLI or the packaged app); it loads the same better-sqlite3 as the engine.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** Options of {@link startUpkeepThread}. */
export interface UpkeepOptions {
  /** better-sqlite3's `nativeBinding` (the packaged app's path to its addon). */
  nativeBinding?: string;
}

/** A running upkeep thread. */
export interface UpkeepThread {
  /** Starts PASSIVE checkpoints every `intervalMs` (backing off while nothing is written). */
  startCheckpoints(intervalMs: number): void;
  stopCheckpoints(): void;
  /** Starts renewing `owner`'s leases (see the module doc); `alive` is a shared BigInt64Array of one epoch-ms stamp. */
  keepLeases(o: { owner: string; leaseMs: number; stallMs: number; alive: BigInt64Array }): void;
  /** Stops renewing leases; resolves once the thread confirmed (no renewal runs after it). */
  stopLeases(): Promise<void>;
  /** Whether the thread does anything (checkpoints or leases). */
  readonly busy: boolean;
  /** Checkpoints that copied frames so far: how many, their time in all and the last one's, ms. */
  checkpointStats(): { count: number; totalMs: number; lastMs: number };
  /** Stops the thread after the work under way; resolves when it has exited. */
  stop(): Promise<void>;
}

const THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.module);
const db = new Database(workerData.file, workerData.nativeBinding ? { nativeBinding: workerData.nativeBinding } : {});
db.pragma('busy_timeout = 0');
// A checkpoint copies frames from the WAL to the file: it needs no page cache of its own.
db.pragma('cache_size = -256');
let cpTimer, cpInterval = 0, cpDelay = 0, last = -1;
const stats = workerData.stats;
function checkpoint() {
  let idle = false;
  try {
    const t0 = performance.now();
    const r = db.pragma('wal_checkpoint(PASSIVE)')[0];
    // Nothing written since the last round: back off (up to 25 intervals), at once back on a write.
    idle = r !== undefined && r.log === last && r.checkpointed === r.log;
    if (!idle && r !== undefined && r.checkpointed > 0) {
      const ms = performance.now() - t0;
      stats[0] += 1; stats[1] += ms; stats[2] = ms;
    }
    last = r === undefined ? -1 : r.log;
  } catch (err) { /* busy or closing: the next round tries again */ }
  cpDelay = idle ? Math.min(cpDelay * 2, cpInterval * 25) : cpInterval;
  cpTimer = setTimeout(checkpoint, cpDelay);
}
let leaseTimer, renew;
function keep(o) {
  const stmt = db.prepare('UPDATE schedule SET next_run_at = ?, lease_expires_at = ? WHERE lease_owner = ? AND lease_expires_at IS NOT NULL AND lease_expires_at < ?');
  renew = () => {
    const now = Date.now();
    if (now - Number(Atomics.load(o.alive, 0)) <= o.stallMs) {
      try {
        db.pragma('busy_timeout = ' + Math.max(10, Math.floor(o.leaseMs / 10)));
        stmt.run(now + o.leaseMs, now + o.leaseMs, o.owner, now + Math.floor((o.leaseMs * 2) / 3));
      } catch (err) { /* busy or closing: the next round tries again, well before the lease ends */ }
      finally { try { db.pragma('busy_timeout = 0'); } catch (err) { /* closing */ } }
    }
    leaseTimer = setTimeout(renew, Math.max(5, Math.floor(o.leaseMs / 6)));
  };
  leaseTimer = setTimeout(renew, Math.max(5, Math.floor(o.leaseMs / 6)));
}
parentPort.on('message', (m) => {
  if (m.type === 'checkpoints') { clearTimeout(cpTimer); cpInterval = m.intervalMs; cpDelay = m.intervalMs; checkpoint(); }
  else if (m.type === 'no-checkpoints') { clearTimeout(cpTimer); }
  else if (m.type === 'leases') { clearTimeout(leaseTimer); keep(m); }
  else if (m.type === 'no-leases') { clearTimeout(leaseTimer); parentPort.postMessage({ type: 'leases-stopped', id: m.id }); }
  else if (m.type === 'stop') {
    clearTimeout(cpTimer); clearTimeout(leaseTimer);
    try { db.close(); } catch (err) { /* already closed */ }
    process.exit(0);
  }
});
`;

/**
 * Starts an upkeep thread on `file` (a WAL database); it does nothing until asked. Returns
 * undefined when no thread can be started here: checkpoints then stay with the connection's
 * automatic checkpoint, and leases with the loop's heartbeats. Errors inside the thread (busy, a
 * file gone) are skipped; the next round tries again.
 */
export function startUpkeepThread(file: string, options: UpkeepOptions = {}): UpkeepThread | undefined {
  let worker: Worker;
  // Written by the thread, read at scrape time: [count, total ms, last ms].
  const stats = new Float64Array(new SharedArrayBuffer(24));
  try {
    const module = createRequire(import.meta.url).resolve('better-sqlite3');
    worker = new Worker(THREAD_SOURCE, {
      eval: true,
      workerData: { file, module, nativeBinding: options.nativeBinding, stats },
      // A small heap: the thread holds one connection and two timers (peak RSS is a benchmark target).
      resourceLimits: { maxOldGenerationSizeMb: 8, maxYoungGenerationSizeMb: 2, stackSizeMb: 1 },
    });
  } catch {
    return undefined;
  }
  // Never keeps the process alive; errors of the thread are its own (the backstops cover them).
  worker.unref();
  let gone = false;
  const exited = new Promise<void>((resolve) => {
    const done = () => {
      gone = true;
      resolve();
    };
    worker.once('exit', done);
    worker.once('error', done);
  });
  let checkpoints = false;
  let leases = false;
  let nextId = 0;
  const post = (m: unknown) => {
    if (!gone) worker.postMessage(m);
  };
  return {
    get busy() {
      return checkpoints || leases;
    },
    checkpointStats() {
      return { count: stats[0] ?? 0, totalMs: stats[1] ?? 0, lastMs: stats[2] ?? 0 };
    },
    startCheckpoints(intervalMs) {
      checkpoints = true;
      post({ type: 'checkpoints', intervalMs });
    },
    stopCheckpoints() {
      checkpoints = false;
      post({ type: 'no-checkpoints' });
    },
    keepLeases(o) {
      leases = true;
      post({ type: 'leases', ...o });
    },
    async stopLeases() {
      if (!leases) return;
      leases = false;
      const id = ++nextId;
      worker.ref();
      try {
        await Promise.race([
          exited,
          new Promise<void>((resolve) => {
            const on = (m: { type?: string; id?: number }) => {
              if (m.type !== 'leases-stopped' || m.id !== id) return;
              worker.off('message', on);
              resolve();
            };
            worker.on('message', on);
            post({ type: 'no-leases', id });
          }),
        ]);
      } finally {
        worker.unref();
      }
    },
    async stop() {
      // Referenced again while it exits: an unreferenced thread would let the process end with
      // this wait still pending.
      worker.ref();
      post({ type: 'stop' });
      await exited;
    },
  };
}
