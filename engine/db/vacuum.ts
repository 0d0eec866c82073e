/**
 * `runnel vacuum`: converts an existing file to `auto_vacuum = INCREMENTAL` once (new files are
 * created with it, engine/db/open-database.ts), so that retention's deletes give pages back to
 * the file system batch by batch (`PRAGMA incremental_vacuum` after each, in the batch's own
 * transaction) instead of leaving them free inside the file.
 *
 * SQLite changes a file's auto_vacuum mode only by rebuilding it (`PRAGMA auto_vacuum = …` then
 * `VACUUM`, https://sqlite.org/pragma.html#pragma_auto_vacuum), which rewrites every page through
 * the WAL and must not meet another connection mid-way. So it first takes the file for itself:
 * `locking_mode = EXCLUSIVE` and `BEGIN EXCLUSIVE` without waiting, which fails while any other
 * process has the file open in WAL mode (a worker, `runnel serve`, the desktop app) — refused,
 * nothing changed. The rebuild runs in a worker thread, so the caller's thread prints progress:
 * the WAL's bytes written so far against the bytes in use. A file that is INCREMENTAL already is
 * not rebuilt: its free pages are given back (`incremental_vacuum`).
 */
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { EngineError } from '../errors';
import { accessError, canWrite } from './open-database';

/** Progress of a rebuild: bytes written to the WAL so far, and about how many it will write. */
export interface VacuumProgress {
  bytesWritten: number;
  bytesTotal: number;
}

/** What {@link vacuumDatabase} did. */
export interface VacuumResult {
  /** The file, absolute. */
  file: string;
  /** True when the file was rebuilt to INCREMENTAL; false when it was INCREMENTAL already (free pages given back). */
  converted: boolean;
  /** The file's size before (its WAL included) and after, bytes. */
  bytesBefore: number;
  bytesAfter: number;
  elapsedMs: number;
}

/** Options of {@link vacuumDatabase}. */
export interface VacuumOptions {
  /** Called about every `progressMs` while the rebuild writes, and once at the end. */
  onProgress?: (p: VacuumProgress) => void;
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
  db = new Database(workerData.file, { fileMustExist: true, ...(workerData.nativeBinding ? { nativeBinding: workerData.nativeBinding } : {}) });
  db.pragma('busy_timeout = 0');
  db.pragma('locking_mode = EXCLUSIVE');
  db.exec('BEGIN EXCLUSIVE');
  db.exec('COMMIT');
  const mode = db.pragma('auto_vacuum', { simple: true });
  let converted = false;
  if (mode === 2) {
    db.pragma('incremental_vacuum');
  } else {
    db.pragma('auto_vacuum = INCREMENTAL');
    db.exec('VACUUM');
    converted = true;
  }
  db.pragma('wal_checkpoint(TRUNCATE)');
  parentPort.postMessage({ ok: true, converted, mode: db.pragma('auto_vacuum', { simple: true }) });
} catch (err) {
  parentPort.postMessage({ ok: false, code: err && err.code, message: String(err && err.message || err) });
} finally {
  try { if (db) db.close(); } catch (e) { /* closing */ }
}
`;

const sizeOf = (p: string): number => fs.statSync(p, { throwIfNoEntry: false })?.size ?? 0;

/**
 * Converts the Runnel file `file` (existing; the caller probes it) to `auto_vacuum = INCREMENTAL`,
 * or gives an INCREMENTAL file's free pages back (see the module doc).
 *
 * @throws EngineError DATABASE_BUSY (another process has the file open: nothing changed),
 *   DATABASE_FULL (no room for the rebuild), DATABASE_READONLY (the file or its directory is not
 *   writable), DATABASE_CORRUPT, INTERNAL.
 */
export async function vacuumDatabase(file: string, options: VacuumOptions = {}): Promise<VacuumResult> {
  const started = Date.now();
  const resolved = path.resolve(file);
  const bytesBefore = sizeOf(resolved) + sizeOf(`${resolved}-wal`);
  // The rebuild writes the file, its WAL and its -shm: refused at once where it could not.
  for (const target of [resolved, path.dirname(resolved)]) {
    if (!canWrite(target)) {
      throw new EngineError('DATABASE_READONLY', `cannot vacuum ${resolved}: ${target === resolved ? 'the file' : `its directory ${target}`} is not writable; nothing was changed`, { kind: 'user', retryable: false });
    }
  }
  let bytesTotal: number;
  {
    let db: Database.Database | undefined;
    try {
      db = new Database(resolved, { readonly: true, fileMustExist: true, ...(options.nativeBinding === undefined ? {} : { nativeBinding: options.nativeBinding }) });
      const pages = db.pragma('page_count', { simple: true }) as number;
      const free = db.pragma('freelist_count', { simple: true }) as number;
      bytesTotal = Math.max(0, pages - free) * (db.pragma('page_size', { simple: true }) as number);
    } catch (err) {
      throw accessError(resolved, err) ?? err;
    } finally {
      db?.close();
    }
  }
  const report = (bytesWritten: number, total = bytesTotal) => options.onProgress?.({ bytesWritten: Math.min(bytesWritten, total), bytesTotal: total });
  const timer = setInterval(() => report(sizeOf(`${resolved}-wal`)), options.progressMs ?? 250);
  let outcome: { ok: boolean; converted?: boolean; code?: string; message?: string };
  try {
    outcome = await new Promise((resolve, reject) => {
      const worker = new Worker(THREAD_SOURCE, {
        eval: true,
        workerData: { file: resolved, module: createRequire(import.meta.url).resolve('better-sqlite3'), nativeBinding: options.nativeBinding },
      });
      let answer: typeof outcome | undefined;
      worker.once('message', (m: typeof outcome) => (answer = m));
      worker.once('error', reject);
      worker.once('exit', () => resolve(answer ?? { ok: false, message: 'the vacuum thread exited without an answer' }));
    });
  } catch (err) {
    outcome = { ok: false, message: (err as Error).message };
  } finally {
    clearInterval(timer);
  }
  if (!outcome.ok) {
    const code = outcome.code ?? '';
    if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') {
      throw new EngineError('DATABASE_BUSY', `${resolved} is open in another process (a worker, runnel serve, the desktop app): stop it, then run vacuum again; nothing was changed`, {
        kind: 'user',
        retryable: false,
      });
    }
    if (code === 'SQLITE_FULL') throw new EngineError('DATABASE_FULL', `the disk is full: ${resolved} could not be rebuilt (it is unchanged)`);
    if (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB') {
      throw new EngineError('DATABASE_CORRUPT', `${resolved} cannot be read to the end (SQLite: ${outcome.message ?? code}); run "runnel check" on it`, { kind: 'user', retryable: false });
    }
    throw new EngineError('INTERNAL', `vacuum of ${resolved} failed: ${outcome.message ?? 'unknown error'}`);
  }
  const bytesAfter = sizeOf(resolved) + sizeOf(`${resolved}-wal`);
  report(bytesTotal);
  return { file: resolved, converted: outcome.converted === true, bytesBefore, bytesAfter, elapsedMs: Date.now() - started };
}
