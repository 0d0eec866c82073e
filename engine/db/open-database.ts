/**
 * Opening a Runnel database file, and the one serialized write path.
 *
 * Pragmas follow SQLite's WAL guidance (https://sqlite.org/wal.html, https://sqlite.org/pragma.html):
 * WAL journal, foreign keys on, a busy timeout, synchronous=FULL by default (NORMAL is selectable:
 * it may lose the last transactions on power loss, never corrupt the file), and a tunable
 * wal_autocheckpoint.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { EngineError } from '../errors';
import { migrate } from './migrations/index';

/** SQLite's `synchronous` levels that Runnel supports. */
export type SyncMode = 'FULL' | 'NORMAL';

/** Options of {@link openDatabase}. */
export interface OpenOptions {
  /** Default FULL. NORMAL may lose the last transactions on power loss (never corrupts). */
  synchronous?: SyncMode;
  /** How long SQLite waits for a lock before SQLITE_BUSY, in ms. Default 5000. */
  busyTimeoutMs?: number;
  /** WAL pages before an automatic checkpoint (SQLite's default is 1000). */
  walAutocheckpoint?: number;
  /** Refuse to create a missing file (`runnel show` on a typo'd path). Default false. */
  mustExist?: boolean;
  /** Run migrations (default true). */
  migrate?: boolean;
  /** Attempts of a write transaction that meets SQLITE_BUSY, default 12. */
  busyRetries?: number;
  /**
   * Path of a better-sqlite3 addon to load instead of the installed one. The desktop app in
   * development (`npm start`) passes its Electron-ABI build here, so the installed Node build
   * that tests and the CLI use stays untouched (electron/native-binding.ts).
   */
  nativeBinding?: string;
}

/** Result of a write transaction: what {@link RunnelDb.write} returns. */
export type WriteFn<T> = (db: Database.Database) => T;

/**
 * An open Runnel database: the raw handle for prepared reads, and `write` — the only way to
 * change the file.
 */
export interface RunnelDb {
  /** The better-sqlite3 handle. Prepare statements once; only call them inside `write` to change data. */
  readonly raw: Database.Database;
  readonly file: string;
  /**
   * Runs `fn` in one BEGIN IMMEDIATE transaction (DESIGN.md section 2).
   *
   * Each attempt waits for the write lock at most {@link WRITE_LOCK_WAIT_MS} on the thread;
   * SQLITE_BUSY / SQLITE_LOCKED is then retried with exponential backoff and full jitter (5 ms
   * doubling, capped at 1 s) that yields the event loop. It throws EngineError DATABASE_BUSY once
   * `busyRetries` attempts failed and `busyRetries` × busy_timeout passed (the patience of
   * `busyRetries` full busy_timeout waits). `fn` must be synchronous: nothing async inside a
   * transaction.
   */
  write<T>(fn: WriteFn<T>): Promise<T>;
  /** The same transaction, synchronously, for start-up work and short CLI commands (no backoff sleeps). */
  writeSync<T>(fn: WriteFn<T>): T;
  /** PRAGMA wal_checkpoint(mode); returns SQLite's [busy, log, checkpointed]. */
  checkpoint(mode?: 'PASSIVE' | 'FULL' | 'RESTART' | 'TRUNCATE'): { busy: number; log: number; checkpointed: number };
  close(): void;
}

/** True for SQLITE_BUSY* and SQLITE_LOCKED* errors. */
export function isBusyError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

/**
 * Delay before retry `n` (0-based) of a busy write, in ms: full jitter over min(1000, 5·2^n).
 *
 * "Exponential backoff and jitter" as in the AWS architecture blog's "full jitter".
 */
export function busyBackoffMs(n: number, random = Math.random): number {
  const cap = Math.min(1000, 5 * 2 ** Math.min(n, 20));
  return Math.max(1, Math.round(cap * random()));
}

/**
 * Longest time one attempt of {@link RunnelDb.write} waits for the write lock inside SQLite, ms.
 *
 * better-sqlite3 is synchronous, so SQLite's busy handler sleeps on the thread: with the full
 * busy_timeout (5 s) a worker waiting for the lock froze its event loop — its running handlers,
 * their timeouts and its heartbeats — for seconds while other processes kept the lock (measured:
 * 2.2 s with three workers on one file, and leases of 800 ms expiring under live handlers, so
 * steps ran twice). Short waits with async, jittered backoff in between keep every loop turning.
 */
export const WRITE_LOCK_WAIT_MS = 50;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function describeOpenError(file: string, err: unknown): EngineError {
  const code = (err as { code?: string }).code ?? '';
  if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT') {
    return new EngineError('DATABASE_CORRUPT', `${file} is not a Runnel database (SQLite says: ${(err as Error).message})`, {
      cause: err,
      kind: 'user',
      retryable: false,
    });
  }
  if (err instanceof EngineError) return err;
  return new EngineError('INTERNAL', `cannot open ${file}: ${(err as Error).message}`, { cause: err });
}

/**
 * Opens (creating if needed) a Runnel database file and brings its schema up to date.
 *
 * @throws EngineError NOT_FOUND when `mustExist` and the file is missing; DATABASE_CORRUPT when the
 * file is not a SQLite database; DATABASE_NEWER when its schema is newer than this build.
 */
export function openDatabase(file: string, options: OpenOptions = {}): RunnelDb {
  const resolved = file === ':memory:' ? file : path.resolve(file);
  if (options.mustExist && resolved !== ':memory:' && !fs.existsSync(resolved)) {
    throw new EngineError('NOT_FOUND', `database file ${resolved} does not exist (run "runnel init" or pass --db)`);
  }
  const busyTimeoutMs = Math.max(0, Math.floor(options.busyTimeoutMs ?? 5000));
  let raw: Database.Database;
  try {
    raw = new Database(resolved, options.nativeBinding === undefined ? {} : { nativeBinding: options.nativeBinding });
  } catch (err) {
    throw describeOpenError(resolved, err);
  }
  try {
    raw.pragma(`busy_timeout = ${busyTimeoutMs}`);
    // Reading the schema first surfaces SQLITE_NOTADB before any write touches the file.
    raw.pragma('schema_version');
    raw.pragma('journal_mode = WAL');
    raw.pragma(`synchronous = ${options.synchronous ?? 'FULL'}`);
    raw.pragma('foreign_keys = ON');
    raw.pragma(`wal_autocheckpoint = ${Math.max(0, Math.floor(options.walAutocheckpoint ?? 1000))}`);
    raw.pragma('temp_store = MEMORY');
    if (options.migrate !== false) migrate(raw);
  } catch (err) {
    raw.close();
    throw describeOpenError(resolved, err);
  }
  const retries = options.busyRetries ?? 12;

  const runImmediate = <T>(fn: WriteFn<T>): T => raw.transaction(() => fn(raw)).immediate();
  const lockWaitMs = Math.min(busyTimeoutMs, WRITE_LOCK_WAIT_MS);
  /** runImmediate with SQLite's lock wait cut to `lockWaitMs` (reads and writeSync keep the full one). */
  const runImmediateBriefly = <T>(fn: WriteFn<T>): T => {
    raw.pragma(`busy_timeout = ${lockWaitMs}`);
    try {
      return runImmediate(fn);
    } finally {
      raw.pragma(`busy_timeout = ${busyTimeoutMs}`);
    }
  };

  return {
    raw,
    file: resolved,
    async write<T>(fn: WriteFn<T>): Promise<T> {
      const giveUpAt = Date.now() + retries * busyTimeoutMs;
      for (let n = 0; ; n++) {
        try {
          return runImmediateBriefly(fn);
        } catch (err) {
          if (!isBusyError(err) || raw.inTransaction) throw err;
          if (n + 1 >= retries && Date.now() >= giveUpAt) {
            throw new EngineError('DATABASE_BUSY', `database ${resolved} stayed locked after ${n + 1} attempts`, { cause: err });
          }
          await sleep(busyBackoffMs(n));
        }
      }
    },
    writeSync<T>(fn: WriteFn<T>): T {
      for (let n = 0; ; n++) {
        try {
          return runImmediate(fn);
        } catch (err) {
          if (!isBusyError(err) || raw.inTransaction || n + 1 >= retries) {
            if (isBusyError(err)) {
              throw new EngineError('DATABASE_BUSY', `database ${resolved} stayed locked after ${n + 1} attempts`, { cause: err });
            }
            throw err;
          }
          // A synchronous caller cannot yield; SQLite's busy_timeout already waited, so retry at once.
        }
      }
    },
    checkpoint(mode = 'PASSIVE') {
      const row = raw.pragma(`wal_checkpoint(${mode})`) as Array<{ busy: number; log: number; checkpointed: number }>;
      return row[0] ?? { busy: 0, log: 0, checkpointed: 0 };
    },
    close() {
      if (raw.open) raw.close();
    },
  };
}
