/**
 * `runnel backup <dest>`: a consistent copy of a Runnel database while workers commit to it.
 *
 * `VACUUM INTO` rather than the online backup API (https://sqlite.org/lang_vacuum.html#vacuuminto,
 * https://sqlite.org/backup.html): the backup API copies the file a few pages per step and starts
 * over whenever another connection writes between two steps — with a worker process committing
 * hundreds of transactions a second it would restart for as long as the load lasts, and copying
 * every page in one step holds the same read transaction VACUUM INTO does, without compacting.
 * VACUUM INTO reads one snapshot in one read transaction (writers go on in WAL mode; the WAL
 * cannot be checkpointed past that snapshot until it ends), never restarts, and writes a compact
 * file (no free pages). It runs in a worker thread on a read-only connection of its own, so the
 * caller's thread stays free to print progress: the bytes written so far against the bytes the
 * snapshot holds in use.
 *
 * SQLite does not fsync what VACUUM INTO writes, and a crash mid-way leaves a partial file; so it
 * writes `<dest>.partial` beside the destination, which is fsynced and then renamed over `dest`
 * (and the directory fsynced): `dest` is either the old file or the whole backup, never half of one.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { EngineError } from '../errors';
import { accessError, canWrite, describeFileKind } from './open-database';

/** Progress of a backup: bytes written so far and the size the copy will have (an estimate until done). */
export interface BackupProgress {
  bytesWritten: number;
  bytesTotal: number;
}

/** What {@link backupDatabase} made. */
export interface BackupResult {
  /** Absolute paths of the source and of the backup. */
  source: string;
  dest: string;
  /** The backup's size, bytes. */
  bytes: number;
  /** How long it took, ms. */
  elapsedMs: number;
}

/** Options of {@link backupDatabase}. */
export interface BackupOptions {
  /** Replace an existing `dest` (default false: an existing file is refused). */
  force?: boolean;
  /** Called about every `progressMs` while the copy is written, and once at the end. */
  onProgress?: (p: BackupProgress) => void;
  /** Interval of `onProgress`, ms (default 250). */
  progressMs?: number;
  /** better-sqlite3's `nativeBinding` (the desktop app's addon). */
  nativeBinding?: string;
}

const THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.module);
let db;
try {
  db = new Database(workerData.source, { readonly: true, fileMustExist: true, ...(workerData.nativeBinding ? { nativeBinding: workerData.nativeBinding } : {}) });
  db.pragma('busy_timeout = 5000');
  db.prepare('VACUUM INTO ?').run(workerData.partial);
  parentPort.postMessage({ ok: true });
} catch (err) {
  parentPort.postMessage({ ok: false, code: err && err.code, message: String(err && err.message || err) });
} finally {
  try { if (db) db.close(); } catch (e) { /* closing */ }
}
`;

/**
 * Bytes the database's pages in use take (what VACUUM INTO writes, about).
 *
 * @throws EngineError DATABASE_READONLY when the file cannot be read here (a WAL file whose `-shm`
 *   SQLite may not create), DATABASE_CORRUPT when it is not a database.
 */
function bytesInUse(source: string, nativeBinding: string | undefined): number {
  let db: Database.Database | undefined;
  try {
    db = new Database(source, { readonly: true, fileMustExist: true, ...(nativeBinding === undefined ? {} : { nativeBinding }) });
    const pages = db.pragma('page_count', { simple: true }) as number;
    const free = db.pragma('freelist_count', { simple: true }) as number;
    const size = db.pragma('page_size', { simple: true }) as number;
    return Math.max(0, pages - free) * size;
  } catch (err) {
    throw accessError(source, err) ?? err;
  } finally {
    db?.close();
  }
}

function fsyncPath(p: string, flags: string): void {
  const fd = fs.openSync(p, flags);
  try {
    fs.fsyncSync(fd);
  } catch (err) {
    // Some file systems cannot fsync a directory (EINVAL, EISDIR): the rename itself is still atomic.
    if (flags === 'r+') throw err;
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Copies the database `source` (an existing Runnel file; the caller probes it) to `dest` as one
 * consistent snapshot while other connections keep writing (see the module doc). Resolves once
 * `dest` is complete and on disk.
 *
 * @throws EngineError INVALID_INPUT (`dest` is the source, or not a regular file), CONFLICT (`dest`
 *   exists and `force` is not set), NOT_FOUND (its directory does not exist), DATABASE_FULL (the disk
 *   filled up: nothing is left behind), DATABASE_CORRUPT (SQLite cannot read the source), INTERNAL.
 */
export async function backupDatabase(source: string, dest: string, options: BackupOptions = {}): Promise<BackupResult> {
  const started = Date.now();
  const from = path.resolve(source);
  const to = path.resolve(dest);
  if (to === from || to === `${from}-wal` || to === `${from}-shm`) {
    throw new EngineError('INVALID_INPUT', `backup destination ${to} is the database itself (or its WAL); name another file`, { kind: 'user', retryable: false });
  }
  const dir = path.dirname(to);
  if (!fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory()) {
    throw new EngineError('NOT_FOUND', `cannot write the backup ${to}: directory ${dir} does not exist`, { kind: 'user' });
  }
  const existing = fs.statSync(to, { throwIfNoEntry: false });
  if (existing && !existing.isFile()) {
    throw new EngineError('INVALID_INPUT', `backup destination ${to} is ${describeFileKind(existing)}, not a file`, { kind: 'user', retryable: false });
  }
  if (existing && !options.force) {
    throw new EngineError('CONFLICT', `backup destination ${to} exists; pass --force to replace it`, { kind: 'user', retryable: false });
  }
  if (!canWrite(dir)) {
    throw new EngineError('INVALID_INPUT', `cannot write the backup ${to}: directory ${dir} is not writable (permission denied)`, { kind: 'user', retryable: false });
  }
  const partial = `${to}.partial`;
  fs.rmSync(partial, { force: true });
  const bytesTotal = bytesInUse(from, options.nativeBinding);
  const report = (bytesWritten: number, total = bytesTotal) => options.onProgress?.({ bytesWritten, bytesTotal: total });
  const timer = setInterval(() => report(fs.statSync(partial, { throwIfNoEntry: false })?.size ?? 0), options.progressMs ?? 250);
  let outcome: { ok: boolean; code?: string; message?: string };
  try {
    outcome = await new Promise((resolve, reject) => {
      const worker = new Worker(THREAD_SOURCE, {
        eval: true,
        workerData: { source: from, partial, module: createRequire(import.meta.url).resolve('better-sqlite3'), nativeBinding: options.nativeBinding },
      });
      let answer: { ok: boolean; code?: string; message?: string } | undefined;
      worker.once('message', (m: { ok: boolean; code?: string; message?: string }) => (answer = m));
      worker.once('error', reject);
      worker.once('exit', () => resolve(answer ?? { ok: false, message: 'the backup thread exited without an answer' }));
    });
  } catch (err) {
    outcome = { ok: false, message: (err as Error).message };
  } finally {
    clearInterval(timer);
  }
  if (!outcome.ok) {
    fs.rmSync(partial, { force: true });
    const code = outcome.code ?? '';
    if (code === 'SQLITE_FULL') throw new EngineError('DATABASE_FULL', `the disk is full: the backup ${to} could not be written (nothing was left behind)`);
    if (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB') {
      throw new EngineError('DATABASE_CORRUPT', `${from} cannot be read to the end (SQLite: ${outcome.message ?? code}); run "runnel check" on it`, { kind: 'user', retryable: false });
    }
    throw new EngineError('INTERNAL', `backup of ${from} to ${to} failed: ${outcome.message ?? 'unknown error'}`);
  }
  fsyncPath(partial, 'r+');
  // A WAL left beside a replaced file would be replayed onto the new one by the next open.
  fs.rmSync(`${to}-wal`, { force: true });
  fs.rmSync(`${to}-shm`, { force: true });
  fs.renameSync(partial, to);
  fsyncPath(dir, 'r');
  const bytes = fs.statSync(to).size;
  report(bytes, bytes);
  return { source: from, dest: to, bytes, elapsedMs: Date.now() - started };
}
