/**
 * The database as the app's Database view sees it (issue 14): what the file holds and how big it
 * is, and the upkeep a person starts from there — a backup, a check, giving free pages back —
 * each reporting its progress as engine events (`operation.progress`) while it runs.
 *
 * The file operations are SQLite's (the CLI's `backup`, `check` and `vacuum`, engine/db/); on
 * PostgreSQL they are refused with what to use instead, as the CLI refuses them.
 */
import { EngineError } from '../errors';
import { backupDatabase, type BackupResult } from '../db/backup';
import { checkDatabase, type CheckReport } from '../db/check';
import { redactUrl, sqliteOnlyError } from '../db/postgres/errors';
import type { InstanceAgeRow, SqliteFileAccess, SqliteFileStats, StorageBackend, StorageHealth } from '../store/port';
import type { EngineEvent } from './events';
import { policyOf, type RetentionPolicy } from './retention';

/** What {@link databaseInfo} answers. */
export interface DatabaseInfo {
  backend: 'sqlite' | 'postgres';
  /** The file (absolute), or the server's URL without its password. */
  location: string;
  /** The SQLite file's sizes and pages (absent on PostgreSQL). */
  file?: SqliteFileStats;
  /** The WAL's bound and the checkpoints run off the loop's thread (what the status bar shows). */
  health: StorageHealth;
  /** Instances by age (see ReadModel.instanceAges). */
  ages: InstanceAgeRow[];
  /** The default policy this process applies (null days: for ever), and whether its worker applies any. */
  retention: {
    enabled: boolean;
    defaults: RetentionPolicy;
    /** Workflows whose latest version has a policy of its own, with the policy in force (over the defaults). */
    workflows: { name: string; policy: RetentionPolicy }[];
  };
  /** Registered change-feed consumers and the lowest cursor among them (retention keeps what they have not read). */
  consumers: { count: number; lowestCursor: number | null };
}

/** An `operation.progress` event: `done` of about `total` units of a running file operation. */
export type OperationProgress = Extract<EngineEvent, { type: 'operation.progress' }>;

/** Reads {@link DatabaseInfo} (a few reads; no write). */
export async function databaseInfo(storage: StorageBackend, o: { now: number; retention: RetentionPolicy; retentionEnabled: boolean }): Promise<DatabaseInfo> {
  const [ages, summaries, consumers] = await Promise.all([storage.read.instanceAges(o.now), storage.read.workflowSummaries(), storage.read.changeConsumers()]);
  const workflows: DatabaseInfo['retention']['workflows'] = [];
  for (const s of summaries) {
    const v = await storage.read.workflowVersion(s.name);
    if (!v) continue;
    let own: unknown;
    try {
      own = (JSON.parse(v.dslJson) as { retention?: unknown }).retention;
    } catch {
      own = undefined;
    }
    if (own !== undefined) workflows.push({ name: s.name, policy: policyOf(v.dslJson, o.retention) });
  }
  const cursors = consumers.map((c) => c.cursor);
  return {
    backend: storage.file ? 'sqlite' : 'postgres',
    location: storage.file ? storage.file.path : redactUrl(storage.location),
    ...(storage.file ? { file: storage.file.stats() } : {}),
    health: storage.health(),
    ages,
    retention: { enabled: o.retentionEnabled, defaults: o.retention, workflows },
    consumers: { count: consumers.length, lowestCursor: cursors.length === 0 ? null : Math.min(...cursors) },
  };
}

/** The SQLite file of `storage`. @throws EngineError INVALID_INPUT on PostgreSQL, saying what to use instead. */
function sqliteFile(storage: StorageBackend, operation: 'backup' | 'check' | 'vacuum'): SqliteFileAccess {
  if (storage.file) return storage.file;
  throw sqliteOnlyError(operation, storage.location);
}

/**
 * A consistent copy of the file at `dest` (a path on the host's machine) while the worker runs
 * (engine/db/backup.ts: VACUUM INTO on a thread of its own), reporting bytes written as it goes.
 *
 * @throws EngineError INVALID_INPUT (PostgreSQL; `dest` exists without `force`, or is the file itself), and backupDatabase's.
 */
export async function backupFile(storage: StorageBackend, dest: string, o: { force: boolean; progress: (p: OperationProgress) => void }): Promise<BackupResult> {
  const file = sqliteFile(storage, 'backup');
  return backupDatabase(file.path, dest, {
    force: o.force,
    ...(file.nativeBinding === undefined ? {} : { nativeBinding: file.nativeBinding }),
    onProgress: (p) => o.progress({ type: 'operation.progress', operation: 'backup', done: p.bytesWritten, total: p.bytesTotal, unit: 'bytes' }),
  });
}

/**
 * `runnel check` on the open file: SQLite's integrity check and the engine's invariants, on a
 * connection of its own (engine/db/check.ts). It runs on the caller's thread: the worker loop
 * waits for it (about a second per 100 MB).
 *
 * @throws EngineError INVALID_INPUT on PostgreSQL.
 */
export function checkFile(storage: StorageBackend): CheckReport {
  const file = sqliteFile(storage, 'check');
  const limit = storage.health().wal?.limitBytes;
  return checkDatabase(file.path, {
    ...(limit === undefined ? {} : { walLimitBytes: limit }),
    ...(file.nativeBinding === undefined ? {} : { nativeBinding: file.nativeBinding }),
  });
}

/** Pages an in-app vacuum gives back per write transaction (about 4 MiB of 4 KiB pages: a short lock each). */
export const VACUUM_STEP_PAGES = 1000;

/** What {@link vacuumFile} did. */
export interface FreePagesResult {
  /**
   * Pages given back to the file system, and the database's size before and after (page count ×
   * page size, bytes: the file itself shrinks to it at the WAL's next checkpoint).
   */
  pagesFreed: number;
  bytesBefore: number;
  bytesAfter: number;
  elapsedMs: number;
}

/**
 * Gives the file's free pages back to the file system while the engine runs, in write
 * transactions of {@link VACUUM_STEP_PAGES} pages (PRAGMA incremental_vacuum), reporting pages
 * freed against the free pages there were.
 *
 * A file made before `auto_vacuum = INCREMENTAL` became the default cannot: converting it
 * rewrites the whole file and needs it to itself (`runnel vacuum` with every process closed).
 *
 * @throws EngineError INVALID_INPUT (PostgreSQL), INVALID_STATE (auto_vacuum is not incremental:
 *   the message says how to convert it), DATABASE_READONLY.
 */
export async function vacuumFile(storage: StorageBackend, progress: (p: OperationProgress) => void): Promise<FreePagesResult> {
  const file = sqliteFile(storage, 'vacuum');
  const started = Date.now();
  const before = file.stats();
  if (before.autoVacuum !== 'incremental') {
    throw new EngineError(
      'INVALID_STATE',
      `${file.path} has auto_vacuum=${before.autoVacuum.toUpperCase()}: converting it to INCREMENTAL rewrites the whole file and needs it to itself — close the app and every worker, then run: npx runnel vacuum --db ${JSON.stringify(file.path)}`,
      { kind: 'user' },
    );
  }
  const total = before.freePages;
  let free = total;
  progress({ type: 'operation.progress', operation: 'vacuum', done: 0, total, unit: 'pages' });
  while (free > 0) {
    const left = await file.incrementalVacuum(VACUUM_STEP_PAGES);
    // Pages another transaction freed meanwhile are given back too; progress never runs backwards.
    if (left >= free) break;
    free = left;
    progress({ type: 'operation.progress', operation: 'vacuum', done: Math.min(total, total - free), total, unit: 'pages' });
  }
  const after = file.stats();
  progress({ type: 'operation.progress', operation: 'vacuum', done: total, total, unit: 'pages' });
  return {
    pagesFreed: Math.max(0, before.pageCount - after.pageCount),
    bytesBefore: before.pageCount * before.pageSize,
    bytesAfter: after.pageCount * after.pageSize,
    elapsedMs: Date.now() - started,
  };
}
