/**
 * PostgreSQL: numbered schema migrations, tracked in the `runnel_schema` table (one row per
 * applied migration, `version` and `applied_at` epoch ms; the database's version is the highest).
 * SQLite tracks the same with `PRAGMA user_version` (engine/db/migrations/index.ts).
 *
 * Every pending migration is applied in ONE transaction under a transaction-scoped advisory lock
 * ({@link MIGRATION_LOCK_KEY}), so two processes opening a new database at once are safe: the
 * second waits, then finds the schema current. A database at the build's version is recognized
 * without a transaction or a lock (one query). A shipped migration is never edited; a fix is a
 * new number.
 *
 * The procedure is written once ({@link migrationSteps}) and driven either through a synchronous
 * query function (the write bridge's, engine/db/postgres/bridge.ts: {@link migratePostgres}) or an
 * async `pg` client ({@link migratePostgresAsync}).
 */
import type pg from 'pg';
import { EngineError } from '../../../errors';
import { sql as m0001 } from './0001-initial';
import { sql as m0002 } from './0002-control-flow';
import { sql as m0003 } from './0003-concurrency';
import { sql as m0004 } from './0004-priority';
import { sql as m0005 } from './0005-retention';
import { sql as m0006 } from './0006-change-feed';
import { sql as m0007 } from './0007-history-state';
import { sql as m0008 } from './0008-workflow-schedules';
import { sql as m0009 } from './0009-test-runs';
import { sql as m0010 } from './0010-history-state-start';
import { sql as m0011 } from './0011-history-state-by-entry';
import { sql as m0012 } from './0012-instance-business-key';
import { sql as m0013 } from './0013-schedule-instant';
import { sql as m0014 } from './0014-schedule-instant-steps';

/** One migration: the SQL (several statements; run it without parameters) that brings a database to `version`. */
export interface PgMigration {
  version: number;
  sql: string;
}

/** The migrations in order. */
export const PG_MIGRATIONS: readonly PgMigration[] = [
  { version: 1, sql: m0001 },
  { version: 2, sql: m0002 },
  { version: 3, sql: m0003 },
  { version: 4, sql: m0004 },
  { version: 5, sql: m0005 },
  { version: 6, sql: m0006 },
  { version: 7, sql: m0007 },
  { version: 8, sql: m0008 },
  { version: 9, sql: m0009 },
  { version: 10, sql: m0010 },
  { version: 11, sql: m0011 },
  { version: 12, sql: m0012 },
  { version: 13, sql: m0013 },
  { version: 14, sql: m0014 },
];

/** The schema version this build writes. */
export const PG_SCHEMA_VERSION = PG_MIGRATIONS.length;

/**
 * The advisory lock migrations run under: the single-bigint key space (`pg_advisory_xact_lock(bigint)`),
 * which does not overlap the two-int keys of instance and workflow locks (queries/context.ts).
 * 0x52554E4E454C is "RUNNEL".
 */
export const MIGRATION_LOCK_KEY = 0x52554e4e454c;

/** One statement of the procedure: parameters only where the SQL has `$n` (migration SQL has none). */
export interface PgStep {
  sql: string;
  params?: unknown[];
}

type Rows = Record<string, unknown>[];

const READ_VERSION = 'SELECT coalesce(max(version), 0) AS version FROM runnel_schema';

function newer(location: string, current: number): EngineError {
  return new EngineError(
    'DATABASE_NEWER',
    `${location} has schema version ${current}; this Runnel knows up to ${PG_SCHEMA_VERSION}. Upgrade Runnel.`,
    { details: { location, version: current, known: PG_SCHEMA_VERSION } },
  );
}

/**
 * The migration procedure as statements: the caller runs each yielded step and resumes the
 * generator with its rows (or throws the step's error into it, after which it yields a ROLLBACK
 * and rethrows). Runs outside any transaction of the caller's.
 */
export function* migrationSteps(location: string, now: () => number = Date.now): Generator<PgStep, void, Rows> {
  // A database Runnel never touched has no runnel_schema yet.
  const present = (yield { sql: `SELECT to_regclass('runnel_schema') IS NOT NULL AS present` })[0]?.present === true;
  if (present) {
    const before = Number((yield { sql: READ_VERSION })[0]?.version ?? 0);
    if (before > PG_SCHEMA_VERSION) throw newer(location, before);
    if (before === PG_SCHEMA_VERSION) return;
  }
  yield { sql: 'BEGIN' };
  try {
    yield { sql: `SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})` };
    yield { sql: 'CREATE TABLE IF NOT EXISTS runnel_schema (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)' };
    // Another process may have migrated between the first read and the lock.
    const current = Number((yield { sql: READ_VERSION })[0]?.version ?? 0);
    if (current > PG_SCHEMA_VERSION) throw newer(location, current);
    for (const m of PG_MIGRATIONS) {
      if (m.version <= current) continue;
      yield { sql: m.sql };
      yield { sql: 'INSERT INTO runnel_schema (version, applied_at) VALUES ($1, $2)', params: [m.version, now()] };
    }
    yield { sql: 'COMMIT' };
  } catch (err) {
    try {
      yield { sql: 'ROLLBACK' };
    } catch {
      // The connection is gone: the server rolls back by itself; the first error is the one to report.
    }
    throw err;
  }
}

/** A synchronous query function: runs `sql` (with `params` when given) and answers its rows. */
export type SyncQuery = (sql: string, params?: unknown[]) => { rows: Rows };

/**
 * Brings the database to {@link PG_SCHEMA_VERSION} through a synchronous query function on a
 * connection outside any transaction (the bridge's). It begins, locks and commits by itself and
 * rolls back when a step fails.
 *
 * @param location the database for messages (its URL without the password).
 * @throws EngineError DATABASE_NEWER when the database was written by a newer Runnel (nothing is
 *   changed); whatever `q` throws otherwise (after the rollback).
 */
export function migratePostgres(q: SyncQuery, location: string): void {
  const steps = migrationSteps(location);
  let step = steps.next();
  while (!step.done) {
    let rows: Rows;
    try {
      rows = q(step.value.sql, step.value.params).rows;
    } catch (err) {
      step = steps.throw(err);
      continue;
    }
    step = steps.next(rows);
  }
}

/**
 * {@link migratePostgres} over an async `pg` client (tests, tools) that is not inside a transaction.
 *
 * @throws EngineError DATABASE_NEWER; the driver's errors otherwise (after the rollback).
 */
export async function migratePostgresAsync(client: pg.ClientBase, location: string): Promise<void> {
  const steps = migrationSteps(location);
  let step = steps.next();
  while (!step.done) {
    let rows: Rows;
    try {
      const { sql, params } = step.value;
      rows = (params === undefined ? await client.query(sql) : await client.query(sql, params)).rows as Rows;
    } catch (err) {
      step = steps.throw(err);
      continue;
    }
    step = steps.next(rows);
  }
}
