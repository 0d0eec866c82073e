/**
 * What the engine is held against besides the raw pattern (issue 16): a peer queue on the same
 * SQLite pragmas, and the disk's own limit.
 *
 * - plainjob (https://github.com/plainstack/plainjob, a dev dependency): a SQLite job queue for
 *   better-sqlite3 that advertises 15k jobs/s. One no-op job is one step: claimed with one
 *   statement, marked done with another, each its own autocommit transaction.
 * - The fsync probe: a loop of small writes, each followed by `fdatasync`, on the bench's own
 *   directory. Its latency is what one durable commit costs at the least here, so 1 / latency is
 *   the commits per second no SQLite writer on this disk can pass under `synchronous=FULL`.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { better, defineQueue, defineWorker, JobStatus, type Logger } from 'plainjob';
import type { Sync } from './raw';
import { Latency, nowMs, sleep, type LatencySummary } from './stats';

/** Result of {@link plainjobThroughput}. */
export interface PlainjobThroughput {
  sync: Sync;
  jobs: number;
  seconds: number;
  jobsPerSec: number;
}

/** plainjob logs every job at debug level: keep its voice out of the bench's output. */
const QUIET: Logger = { error: () => undefined, warn: () => undefined, info: () => undefined, debug: () => undefined };

/**
 * plainjob's throughput on `file`: `jobs` no-op jobs added up front in one `addMany` (not timed),
 * then one worker runs them all; jobs/s = jobs / (last completion − worker start).
 *
 * The pragmas are the engine's (WAL, `synchronous` = `sync`, `wal_autocheckpoint=1000`), set
 * after plainjob's own (it sets `synchronous=NORMAL`). The worker polls every 1 ms, so an empty
 * poll never pads the figure (it never idles while jobs remain anyway: it takes the next at once).
 *
 * @throws Error when not every job completed within 10 minutes.
 */
export async function plainjobThroughput(file: string, sync: Sync, jobs: number): Promise<PlainjobThroughput> {
  const db = new Database(file);
  const queue = defineQueue({ connection: better(db), logger: QUIET, maintenanceInterval: 3_600_000 });
  db.pragma(`synchronous = ${sync}`);
  db.pragma('wal_autocheckpoint = 1000');
  db.pragma('temp_store = MEMORY');
  queue.addMany('step', Array.from({ length: jobs }, (_, i) => ({ i })));
  let done = 0;
  let last = 0;
  const worker = defineWorker('step', () => undefined, {
    queue,
    pollIntervall: 1,
    logger: QUIET,
    onCompleted: () => {
      done++;
      last = nowMs();
    },
  });
  const t0 = nowMs();
  const running = worker.start();
  const deadline = t0 + 600_000;
  while (done < jobs) {
    if (nowMs() > deadline) throw new Error(`bench: plainjob ran ${done} of ${jobs} jobs in 10 minutes`);
    await sleep(5);
  }
  await worker.stop();
  await running;
  const left = queue.countJobs({ status: JobStatus.Pending });
  queue.close();
  db.close();
  if (left !== 0) throw new Error(`bench: plainjob left ${left} jobs pending`);
  const seconds = (last - t0) / 1000;
  return { sync, jobs, seconds, jobsPerSec: jobs / seconds };
}

/** Result of {@link fsyncProbe}. */
export interface FsyncProbe {
  /** Bytes written before each fdatasync. */
  writeBytes: number;
  syncs: number;
  latency: LatencySummary;
  /** 1000 / mean latency (ms): durable commits per second one writer could reach on this disk. */
  commitsPerSec: number;
}

/**
 * The disk's durable-write latency on `dir`: for `durationMs`, write 4 KiB at the end of a file
 * (a WAL frame's size) and `fdatasync` it, one after the other. The file is removed afterwards.
 */
export function fsyncProbe(dir: string, durationMs: number): FsyncProbe {
  const file = path.join(dir, `fsync-probe-${process.pid}`);
  const fd = fs.openSync(file, 'w');
  const block = Buffer.alloc(4096, 7);
  const latency = new Latency();
  let offset = 0;
  try {
    const end = nowMs() + durationMs;
    while (nowMs() < end) {
      const s = nowMs();
      fs.writeSync(fd, block, 0, block.length, offset);
      fs.fdatasyncSync(fd);
      latency.record(nowMs() - s);
      // A ring of 1 MiB, like a WAL reused after its checkpoints.
      offset = (offset + block.length) % (1 << 20);
    }
  } finally {
    fs.closeSync(fd);
    fs.rmSync(file, { force: true });
  }
  const summary = latency.summary();
  return { writeBytes: block.length, syncs: summary.count, latency: summary, commitsPerSec: 1000 / summary.mean };
}
