/**
 * Opening a Runnel database file, and the one serialized write path.
 *
 * Pragmas follow SQLite's WAL guidance (https://sqlite.org/wal.html, https://sqlite.org/pragma.html):
 * WAL journal, foreign keys on, a busy timeout, synchronous=FULL by default (NORMAL is selectable:
 * it may lose the last transactions on power loss, never corrupt the file), a tunable
 * wal_autocheckpoint, and journal_size_limit = {@link WAL_SIZE_LIMIT_BYTES}: a WAL that grew past it
 * (a reader holding old frames kept checkpoints from resetting it) is truncated back when it resets.
 * A new file is created with auto_vacuum = INCREMENTAL (retention gives pages back batch by batch).
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { EngineError } from '../errors';
import { migrate, SCHEMA_VERSION } from './migrations/index';
import { isPostgresUrl, redactUrl } from './postgres/errors';
import { damageFound, databaseError, recordDamage, recoveryAdvice } from './damage';

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
  /** Run migrations (default true; never in read-only mode). */
  migrate?: boolean;
  /**
   * Open read-only: reads work, every write fails with DATABASE_READONLY, and nothing (no
   * migration, no checkpoint) changes the file. Default: read-only exactly when
   * {@link databaseAccess} says the file cannot be written.
   */
  readonly?: boolean;
  /**
   * Size a WAL that grew past it (a reader held old frames) is truncated back to when it resets,
   * bytes; also the bound `health()` reports it against. Default {@link WAL_SIZE_LIMIT_BYTES}.
   */
  walLimitBytes?: number;
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
  /** Opened read-only ({@link OpenOptions.readonly}): `write` and `writeSync` throw DATABASE_READONLY. */
  readonly readonly: boolean;
  /**
   * The DATABASE_CORRUPT error of the damage found in the file (by a write, a read reported with
   * {@link markDamaged}, or any process before: see engine/db/damage.ts `recordDamage`), or
   * undefined: once set, every write throws it without touching the file.
   */
  readonly damaged: EngineError | undefined;
  /** Records damage a read found: from now on nothing is written to the file. */
  markDamaged(error: EngineError): void;
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

/** Size the WAL file is truncated back to when it resets, bytes (64 MiB; SQLite's default keeps it as large as it grew). */
export const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Whether `target` may be written by this process (`access(W_OK)`; root may write anything). */
export function canWrite(target: string): boolean {
  try {
    fs.accessSync(target, fs.constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** {@link canWrite}, under a name the parameters called `canWrite` do not shadow. */
const canWriteSelf = canWrite;

/**
 * Whether a database file can be opened for writing, or only for reading.
 *
 * SQLite writes the file itself and, in WAL mode, its `-wal` and `-shm` files beside it, which
 * it creates (and on the last close deletes) in the file's directory. So a file is writable when
 * the file is, and either its directory is or both companions already exist and are writable.
 * A missing file is `read-write`: creating it is the caller's business (and fails clearly).
 * `canWrite` is the check of one path (default `access(W_OK)`), replaceable in tests.
 */
export function databaseAccess(
  file: string,
  canWrite: (target: string) => boolean = canWriteSelf,
): 'read-write' | 'read-only' {
  if (file === ':memory:' || !fs.existsSync(file)) return 'read-write';
  if (!canWrite(file)) return 'read-only';
  if (canWrite(path.dirname(file))) return 'read-write';
  const companions = [`${file}-wal`, `${file}-shm`];
  return companions.every((c) => fs.existsSync(c) && canWrite(c)) ? 'read-write' : 'read-only';
}

/** What a path is, without throwing: its stat, `missing`, or the errno that stopped the look (EACCES, ENOTDIR, …). */
function statOf(target: string): fs.Stats | 'missing' | { errno: string } {
  try {
    return fs.statSync(target, { throwIfNoEntry: false }) ?? 'missing';
  } catch (err) {
    const code = (err as { code?: string }).code ?? 'EIO';
    return code === 'ENOENT' ? 'missing' : { errno: code };
  }
}

/** The error of a path that cannot be looked at (`errno` from stat): EACCES → DATABASE_READONLY, else NOT_FOUND. */
function unreachable(file: string, errno: string): EngineError {
  if (errno === 'EACCES' || errno === 'EPERM') {
    return new EngineError('DATABASE_READONLY', `cannot use ${file}: no permission to enter ${path.dirname(file)} (or a directory above it)`, { retryable: false });
  }
  const why = errno === 'ENOTDIR' ? 'a part of the path above it is a file, not a directory' : `the path cannot be looked at (${errno})`;
  return new EngineError('NOT_FOUND', `cannot use ${file}: ${why}`, { kind: 'user', retryable: false });
}

/**
 * Why a new database file cannot be created at `file` (absolute), or undefined when it may be:
 * its directory is missing or not a directory (NOT_FOUND), or this process may not write there
 * (DATABASE_READONLY). SQLite said only "unable to open database file" (as INTERNAL, exit 1).
 */
export function creationError(file: string, canWrite: (target: string) => boolean = canWriteSelf): EngineError | undefined {
  const dir = path.dirname(file);
  const stat = statOf(dir);
  if (stat === 'missing') return new EngineError('NOT_FOUND', `cannot create ${file}: directory ${dir} does not exist`, { kind: 'user', retryable: false });
  if ('errno' in stat) return unreachable(file, stat.errno);
  if (!stat.isDirectory()) return new EngineError('NOT_FOUND', `cannot create ${file}: ${dir} is ${describeFileKind(stat)}, not a directory`, { kind: 'user', retryable: false });
  if (!canWrite(dir)) {
    return new EngineError('DATABASE_READONLY', `cannot create ${file}: directory ${dir} is not writable by this user. Make it writable, or pass --db with a path in a writable directory`, { retryable: false });
  }
  return undefined;
}

/**
 * Why SQLite could not create a missing `file` in a directory that looks writable (a file system
 * that refuses new files, such as /proc, or one mounted read-only): the errno of trying to create
 * it ourselves (and removing it again), as DATABASE_READONLY or NOT_FOUND.
 */
function creationFailure(file: string, err: unknown): EngineError {
  const said = (err as Error).message;
  try {
    fs.closeSync(fs.openSync(file, 'wx'));
    fs.rmSync(file, { force: true });
  } catch (probe) {
    const errno = (probe as { code?: string }).code ?? 'EIO';
    if (errno === 'EACCES' || errno === 'EPERM' || errno === 'EROFS') {
      return new EngineError('DATABASE_READONLY', `cannot create ${file}: ${path.dirname(file)} does not accept new files (${errno}${errno === 'EROFS' ? ': a read-only file system' : ''})`, { cause: err, retryable: false });
    }
    return new EngineError('NOT_FOUND', `cannot create ${file}: ${path.dirname(file)} does not accept new files (${errno}; SQLite: ${said})`, { cause: err, kind: 'user', retryable: false });
  }
  return new EngineError('INTERNAL', `cannot create ${file}: ${said}`, { cause: err });
}

/** The error of a write asked of a read-only database. */
function readonlyError(file: string, cause?: unknown): EngineError {
  return new EngineError(
    'DATABASE_READONLY',
    `database ${file} is read-only (the file or its directory is not writable); this needs to change it. Reading still works.`,
    { cause, retryable: false },
  );
}

function isReadonlyError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_READONLY');
}

/**
 * The typed error of a helper connection (check, backup, vacuum) that could not read or write
 * the existing file `file` — its directory not writable for the WAL's `-shm`, the file read-only —
 * or undefined when `err` is not about access (the caller keeps its own handling).
 */
export function accessError(file: string, err: unknown): EngineError | undefined {
  if (err instanceof EngineError) return undefined;
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return undefined;
  if (code === 'SQLITE_READONLY_DIRECTORY' || code === 'SQLITE_READONLY_CANTINIT' || code.startsWith('SQLITE_CANTOPEN')) return describeOpenError(file, err, true);
  if (code.startsWith('SQLITE_READONLY')) return readonlyError(file, err);
  return undefined;
}

function describeOpenError(file: string, err: unknown, readonly = false, created = false): EngineError {
  const code = (err as { code?: string }).code ?? '';
  if (created && code.startsWith('SQLITE_CANTOPEN')) return creationError(file) ?? creationFailure(file, err);
  if (code === 'SQLITE_READONLY_DIRECTORY' || code === 'SQLITE_READONLY_CANTINIT' || (readonly && code.startsWith('SQLITE_CANTOPEN'))) {
    // A WAL database is read through its -shm index, which SQLite must create beside the file.
    return new EngineError(
      'DATABASE_READONLY',
      `cannot read ${file}: it is a WAL database, and SQLite needs to create ${path.basename(file)}-shm beside it, but ${path.dirname(file)} is not writable. Make the directory writable, or copy the file to a writable place.`,
      { cause: err, retryable: false },
    );
  }
  if (code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT')) {
    return new EngineError('DATABASE_CORRUPT', `${file} is not a Runnel database, or is damaged (SQLite says: ${(err as Error).message}). If it is one: ${recoveryAdvice(file)}`, {
      cause: err,
      kind: 'user',
      retryable: false,
    });
  }
  if (code === 'SQLITE_ERROR' && /already exists|duplicate column|no such (table|column)/.test((err as Error).message)) {
    // Migrations ran against tables that are not the schema `user_version` says (rolled back by hand?).
    const version = (err as { userVersion?: number }).userVersion;
    return new EngineError(
      'DATABASE_CORRUPT',
      `${file}: its schema version${version === undefined ? '' : ` (${version})`} does not match its tables (${(err as Error).message}): was PRAGMA user_version changed by hand? Nothing was migrated. To recover: ${recoveryAdvice(file)}`,
      { cause: err, kind: 'user', retryable: false },
    );
  }
  if (err instanceof EngineError) return err;
  return new EngineError('INTERNAL', `cannot open ${file}: ${(err as Error).message}`, { cause: err });
}

/**
 * The schema checks of a read-only open, which cannot migrate: the file must already be a
 * Runnel database of this build's schema version.
 *
 * @throws EngineError DATABASE_CORRUPT (no Runnel schema: an empty file, or another
 *   application's), DATABASE_NEWER, DATABASE_READONLY (an older schema that needs migrating).
 */
function checkReadableSchema(raw: Database.Database, file: string): void {
  const version = raw.pragma('user_version', { simple: true }) as number;
  if (version === 0) {
    const empty = fs.existsSync(file) && fs.statSync(file).size === 0;
    throw new EngineError(
      'DATABASE_CORRUPT',
      `${file} is not a Runnel database (${empty ? 'empty file' : 'no Runnel schema'}); opened read-only, nothing was written`,
      { kind: 'user', retryable: false },
    );
  }
  if (version > SCHEMA_VERSION) migrate(raw); // throws DATABASE_NEWER without writing
  if (version < SCHEMA_VERSION) {
    throw new EngineError(
      'DATABASE_READONLY',
      `${file} has schema version ${version} and must be migrated to ${SCHEMA_VERSION} before this Runnel can read it, but it is read-only (the file or its directory is not writable)`,
      { retryable: false },
    );
  }
}

/** What {@link probeDatabase} found at a database path. */
export interface DatabaseProbe {
  /** The absolute path. */
  file: string;
  /** Whether a file is there (false: opening it for writing creates it). */
  exists: boolean;
}

/** What a path that is not a regular file is, for messages: "a directory", "a FIFO (named pipe)", … */
export function describeFileKind(stat: fs.Stats): string {
  if (stat.isDirectory()) return 'a directory';
  if (stat.isFIFO()) return 'a FIFO (named pipe)';
  if (stat.isCharacterDevice()) return 'a character device';
  if (stat.isBlockDevice()) return 'a block device';
  if (stat.isSocket()) return 'a socket';
  return stat.isFile() ? 'a regular file' : 'not a regular file';
}

/**
 * Checks a database path before anything opens it for writing, so that a typo, a directory, an
 * empty file or another application's file is refused with a clear error instead of becoming a
 * new, migrated or damaged file. The check opens an existing file read-only and writes nothing.
 *
 * Refused: a missing file when `mustExist` (commands that read or act on instances), a missing
 * directory, a path that is not a regular file, an empty file when `mustExist` (it may become a
 * database, but a command that needs one must not write the schema into it), a file SQLite cannot
 * read, and a SQLite file with tables but no Runnel schema (`user_version` 0). A file SQLite can
 * only read by writing beside it (a WAL file in a read-only directory) passes: {@link openDatabase}
 * then says what is wrong in full.
 *
 * A PostgreSQL URL (`postgres://…`) is no path: it is not probed here (connecting checks it,
 * engine/db/postgres/storage.ts) and answers `{ file: <the URL without its password>, exists: true }`
 * (Runnel never creates a database on a server).
 *
 * @throws EngineError NOT_FOUND (missing file or directory, a file where a directory should be),
 *   DATABASE_READONLY (a missing file in a directory this user may not write or enter), INVALID_INPUT (not a regular file),
 *   DATABASE_CORRUPT (empty when it must exist, not SQLite, or not a Runnel database), all of
 *   kind `user`.
 */
export function probeDatabase(file: string, options: { mustExist?: boolean; nativeBinding?: string } = {}): DatabaseProbe {
  if (isPostgresUrl(file)) return { file: redactUrl(file), exists: true };
  const resolved = path.resolve(file);
  const found = statOf(resolved);
  if (typeof found === 'object' && 'errno' in found) throw unreachable(resolved, found.errno);
  if (found === 'missing') {
    if (options.mustExist) {
      throw new EngineError('NOT_FOUND', `database file ${resolved} does not exist (run "npx runnel init" or pass --db)`);
    }
    const refused = creationError(resolved);
    if (refused) throw refused;
    return { file: resolved, exists: false };
  }
  const stat = found;
  if (!stat.isFile()) {
    throw new EngineError('INVALID_INPUT', `database path ${resolved} is ${describeFileKind(stat)}, not a database file`, {
      details: { file: resolved },
    });
  }
  if (stat.size === 0) {
    if (options.mustExist) {
      throw new EngineError('DATABASE_CORRUPT', `${resolved} is not a Runnel database (empty file); nothing was written`, {
        kind: 'user',
        retryable: false,
      });
    }
    return { file: resolved, exists: true };
  }
  let db: Database.Database | undefined;
  try {
    db = new Database(resolved, {
      readonly: true,
      fileMustExist: true,
      ...(options.nativeBinding === undefined ? {} : { nativeBinding: options.nativeBinding }),
    });
    const version = db.pragma('user_version', { simple: true }) as number;
    const tables = (db.prepare(`SELECT count(*) AS n FROM sqlite_master WHERE type = 'table'`).get() as { n: number }).n;
    if (version === 0 && tables > 0) {
      throw new EngineError(
        'DATABASE_CORRUPT',
        `${resolved} is a SQLite database but not a Runnel one (it has ${tables} other tables); refusing to touch it`,
        { kind: 'user', retryable: false },
      );
    }
  } catch (err) {
    if (err instanceof EngineError) throw err;
    const code = (err as { code?: string }).code ?? '';
    if (code.startsWith('SQLITE_READONLY') || code.startsWith('SQLITE_CANTOPEN')) return { file: resolved, exists: true };
    if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT') {
      throw new EngineError(
        'DATABASE_CORRUPT',
        `${resolved} is not a Runnel database: the file is not SQLite or is damaged (${(err as Error).message}); nothing was written`,
        { cause: err, kind: 'user', retryable: false },
      );
    }
    throw err;
  } finally {
    db?.close();
  }
  return { file: resolved, exists: true };
}

/**
 * Opens (creating if needed) a Runnel database file and brings its schema up to date.
 *
 * Read-only when {@link OpenOptions.readonly} says so, or (by default) when the file cannot be
 * written ({@link databaseAccess}): no migration, no journal-mode change, no checkpoint.
 *
 * @throws EngineError NOT_FOUND when `mustExist` and the file is missing, or a missing file's
 * directory is missing or not a directory; DATABASE_READONLY when a missing file cannot be created
 * (its directory is not writable, or does not accept new files); DATABASE_CORRUPT when the
 * file is not a SQLite database; DATABASE_NEWER when its schema is newer than this build;
 * DATABASE_READONLY when a read-only file cannot be read (a WAL file whose -shm cannot be created)
 * or needs a migration.
 */
export function openDatabase(file: string, options: OpenOptions = {}): RunnelDb {
  const resolved = file === ':memory:' ? file : path.resolve(file);
  if (options.mustExist && resolved !== ':memory:' && !fs.existsSync(resolved)) {
    throw new EngineError('NOT_FOUND', `database file ${resolved} does not exist (run "npx runnel init" or pass --db)`);
  }
  const readonly = resolved !== ':memory:' && (options.readonly ?? databaseAccess(resolved) === 'read-only');
  const created = resolved !== ':memory:' && !fs.existsSync(resolved);
  if (readonly && created) {
    throw new EngineError('NOT_FOUND', `database file ${resolved} does not exist (a read-only open cannot create it)`);
  }
  if (created) {
    const refused = creationError(resolved);
    if (refused) throw refused;
  }
  const busyTimeoutMs = Math.max(0, Math.floor(options.busyTimeoutMs ?? 5000));
  // A file noted damaged is not written at all, from the open on: no journal-mode change (it
  // rewrites the header of a file in rollback mode) and no migration.
  const noted = readonly ? undefined : damageFound(resolved);
  let raw: Database.Database;
  try {
    raw = new Database(resolved, {
      ...(options.nativeBinding === undefined ? {} : { nativeBinding: options.nativeBinding }),
      ...(readonly ? { readonly: true, fileMustExist: true } : {}),
    });
  } catch (err) {
    throw describeOpenError(resolved, err, readonly, created);
  }
  try {
    raw.pragma(`busy_timeout = ${busyTimeoutMs}`);
    // Reading the schema first surfaces SQLITE_NOTADB before any write touches the file.
    raw.pragma('schema_version');
    // A new (empty) file gives deleted pages back to the file system: retention runs an
    // incremental vacuum after each batch. Only possible before the first table exists; an older
    // file is converted once by `runnel vacuum` (./vacuum.ts).
    if (!readonly && !noted && resolved !== ':memory:' && (raw.prepare('SELECT count(*) FROM sqlite_schema').pluck().get() as number) === 0) {
      raw.pragma('auto_vacuum = INCREMENTAL');
    }
    if (!readonly && !noted) raw.pragma('journal_mode = WAL');
    raw.pragma(`synchronous = ${options.synchronous ?? 'FULL'}`);
    raw.pragma('foreign_keys = ON');
    raw.pragma(`wal_autocheckpoint = ${Math.max(0, Math.floor(options.walAutocheckpoint ?? 1000))}`);
    raw.pragma('temp_store = MEMORY');
    if (!readonly) raw.pragma(`journal_size_limit = ${Math.max(0, Math.floor(options.walLimitBytes ?? WAL_SIZE_LIMIT_BYTES))}`);
    if (readonly) checkReadableSchema(raw, resolved);
    else if (options.migrate !== false && !noted) {
      const was = raw.pragma('user_version', { simple: true }) as number;
      migrate(raw);
      // Migrations (a new file's whole schema) write more than a WAL bound of a few hundred KiB:
      // folded in at once, the file starts with a WAL that is not already past its bound.
      if ((raw.pragma('user_version', { simple: true }) as number) !== was) raw.pragma('wal_checkpoint(TRUNCATE)');
    }
  } catch (err) {
    if (err instanceof Error && (err as { code?: unknown }).code === 'SQLITE_ERROR') {
      try {
        (err as { userVersion?: number }).userVersion = raw.pragma('user_version', { simple: true }) as number;
      } catch {
        // the version stays unsaid
      }
    }
    raw.close();
    throw describeOpenError(resolved, err, readonly);
  }
  const retries = options.busyRetries ?? 12;

  const runImmediate = <T>(fn: WriteFn<T>): T => raw.transaction(() => fn(raw)).immediate();
  const lockWaitMs = Math.min(busyTimeoutMs, WRITE_LOCK_WAIT_MS);
  /** runImmediate with SQLite's lock wait cut to `lockWaitMs` (reads and writeSync keep the full one). */
  // Prepared once: `raw.pragma()` compiles its statement at every call, twice a transaction here.
  const waitBriefly = raw.prepare(`PRAGMA busy_timeout = ${lockWaitMs}`);
  const waitFully = raw.prepare(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
  const runImmediateBriefly = <T>(fn: WriteFn<T>): T => {
    waitBriefly.get();
    try {
      return runImmediate(fn);
    } finally {
      waitFully.get();
    }
  };

  let damaged: EngineError | undefined = noted;
  const markDamaged = (error: EngineError): void => {
    if (damaged) return;
    damaged = error;
    recordDamage(resolved, error);
  };
  /** The typed form of a database error (and the file marked damaged when it is), else `err`. */
  const typed = (err: unknown): unknown => {
    const d = databaseError(err, resolved);
    if (!d) return err;
    if (d.damaged) markDamaged(d.error);
    return d.error;
  };

  return {
    raw,
    file: resolved,
    readonly,
    get damaged() {
      return damaged;
    },
    markDamaged,
    async write<T>(fn: WriteFn<T>): Promise<T> {
      if (readonly) throw readonlyError(resolved);
      if (damaged) throw damaged;
      const giveUpAt = Date.now() + retries * busyTimeoutMs;
      for (let n = 0; ; n++) {
        try {
          return runImmediateBriefly(fn);
        } catch (err) {
          if (isReadonlyError(err)) throw readonlyError(resolved, err);
          if (!isBusyError(err) || raw.inTransaction) throw typed(err);
          if (n + 1 >= retries && Date.now() >= giveUpAt) {
            throw new EngineError('DATABASE_BUSY', `database ${resolved} stayed locked after ${n + 1} attempts`, { cause: err });
          }
          await sleep(busyBackoffMs(n));
        }
      }
    },
    writeSync<T>(fn: WriteFn<T>): T {
      if (readonly) throw readonlyError(resolved);
      if (damaged) throw damaged;
      for (let n = 0; ; n++) {
        try {
          return runImmediate(fn);
        } catch (err) {
          if (isReadonlyError(err)) throw readonlyError(resolved, err);
          if (!isBusyError(err) || raw.inTransaction || n + 1 >= retries) {
            if (isBusyError(err)) {
              throw new EngineError('DATABASE_BUSY', `database ${resolved} stayed locked after ${n + 1} attempts`, { cause: err });
            }
            throw typed(err);
          }
          // A synchronous caller cannot yield; SQLite's busy_timeout already waited, so retry at once.
        }
      }
    },
    checkpoint(mode = 'PASSIVE') {
      // A checkpoint writes the database file: a read-only connection leaves it as it is.
      if (readonly) return { busy: 0, log: 0, checkpointed: 0 };
      const row = raw.pragma(`wal_checkpoint(${mode})`) as Array<{ busy: number; log: number; checkpointed: number }>;
      return row[0] ?? { busy: 0, log: 0, checkpointed: 0 };
    },
    close() {
      if (raw.open) raw.close();
    },
  };
}
