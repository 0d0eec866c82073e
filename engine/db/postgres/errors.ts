/**
 * PostgreSQL locations and errors: what a connection URL is, the form of it messages show (no
 * password, ever), and the driver's errors typed as the engine's codes.
 *
 * SQLSTATE classes from the PostgreSQL manual, appendix A "PostgreSQL Error Codes".
 */
import { EngineError } from '../../errors';

/** Whether `location` is a PostgreSQL connection URL (`postgres://…` or `postgresql://…`) rather than a file path. */
export function isPostgresUrl(location: string): boolean {
  return /^postgres(ql)?:\/\//i.test(location);
}

/**
 * `url` as messages show it: the password (in the userinfo or a `password` parameter) removed.
 * A URL that does not parse is shown as its scheme only (it might hold a password anywhere).
 */
/**
 * The refusal of a SQLite file operation (`backup`, `check`, `vacuum`) on the PostgreSQL database
 * `url`, naming what to use there instead (the CLI's and the API's answer alike).
 */
export function sqliteOnlyError(operation: 'backup' | 'check' | 'vacuum', url: string, details?: Record<string, unknown>): EngineError {
  const tools =
    operation === 'backup'
      ? "pg_dump, or the server's base backups"
      : operation === 'vacuum'
        ? "nothing: autovacuum gives deleted rows' space back by itself"
        : "pg_amcheck, and the server's own monitoring";
  return new EngineError('INVALID_INPUT', `${operation} works on a SQLite file; ${redactUrl(url)} is a PostgreSQL database: use ${tools} (or npx runnel copy --from it --to a file, then ${operation} that)`, {
    kind: 'user',
    ...(details === undefined ? {} : { details }),
  });
}

export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    u.password = '';
    u.searchParams.delete('password');
    return u.toString();
  } catch {
    return `${url.slice(0, url.indexOf('://') + 3)}…`;
  }
}

/** The database name of a connection URL (its path), or `postgres` when it names none. */
export function databaseName(url: string): string {
  try {
    return decodeURIComponent(new URL(url).pathname.slice(1)) || 'postgres';
  } catch {
    return 'postgres';
  }
}

/** The password in `url`, or undefined: scrubbed from any message built from a driver's text. */
function passwordOf(url: string): string | undefined {
  try {
    const u = new URL(url);
    const p = u.password ? decodeURIComponent(u.password) : (u.searchParams.get('password') ?? '');
    return p === '' ? undefined : p;
  } catch {
    return undefined;
  }
}

/** `text` with the password of `url` (raw and URL-encoded) replaced by `***`. */
export function scrub(text: string, url: string): string {
  const p = passwordOf(url);
  if (p === undefined) return text;
  return text.split(p).join('***').split(encodeURIComponent(p)).join('***');
}

/** The SQLSTATE (or Node errno code) of a driver error, or undefined. */
export function sqlState(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** Node errno codes of a server that cannot be reached (or dropped the connection). */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'ECONNABORTED']);

/** Whether `err` is the database being unreachable: network, connection, shutdown or too many connections. */
export function isUnavailable(err: unknown): boolean {
  if (err instanceof EngineError) return err.code === 'DATABASE_UNAVAILABLE';
  const code = sqlState(err);
  if (code === undefined) return /Connection terminated|not queryable|timeout expired/i.test((err as Error | null)?.message ?? '');
  return NETWORK_CODES.has(code) || code.startsWith('08') || code.startsWith('57P') || code === '53300' || code === '28P01' || code === '28000';
}

/**
 * Whether `err` asks for the whole transaction to run again: 40001 serialization_failure, 40P01
 * deadlock_detected, 23505 unique_violation raised by a race, 55P03 lock_not_available (the
 * session's lock_timeout: another transaction held an instance too long).
 */
export function isRetryableTx(err: unknown): boolean {
  const code = sqlState(err);
  return code === '40001' || code === '40P01' || code === '23505' || code === '55P03';
}

/**
 * Whether `err` dooms the transaction it happened in (no savepoint can contain it): the database
 * away, a conflict that needs the whole transaction again, resources exhausted (53…), operator
 * intervention (57…), a system error (58…) or damaged data (XX…).
 */
export function isStorageFailure(err: unknown): boolean {
  if (err instanceof EngineError) return ['DATABASE_UNAVAILABLE', 'DATABASE_FULL', 'DATABASE_BUSY', 'DATABASE_READONLY'].includes(err.code);
  if (isUnavailable(err)) return true;
  const code = sqlState(err);
  return code !== undefined && (code.startsWith('40') || code === '55P03' || /^(53|57|58|XX)/.test(code));
}

/**
 * The engine's error for a driver error met at `url` (a connection or a statement), or
 * undefined when it is none of the storage's own (a constraint a transition broke, a bug in a
 * statement: the caller keeps it as it is). Messages name the database by {@link redactUrl}.
 *
 * NOT_FOUND: the database does not exist (3D000). DATABASE_UNAVAILABLE: refused, unreachable, the
 * password or user refused (28…), too many connections, shut down. DATABASE_FULL: disk full
 * (53100). DATABASE_READONLY: a read-only server (25006, a hot standby). DATABASE_BUSY: the lock
 * wait ran out (55P03). DATABASE_CORRUPT: damaged data (XX001, XX002).
 */
export function postgresError(err: unknown, url: string): EngineError | undefined {
  if (err instanceof EngineError) return err;
  const where = redactUrl(url);
  const code = sqlState(err);
  const said = scrub((err as Error | null)?.message ?? String(err), url);
  const opts = { cause: err, details: { location: where, ...(code === undefined ? {} : { sqlState: code }) } };
  if (code === '3D000') {
    return new EngineError('NOT_FOUND', `database "${databaseName(url)}" does not exist on ${where} (create it first: createdb, or CREATE DATABASE)`, {
      ...opts,
      kind: 'user',
      retryable: false,
    });
  }
  if (code === '28P01' || code === '28000') {
    return new EngineError('DATABASE_UNAVAILABLE', `${where} refused the connection: ${said}`, { ...opts, retryable: false });
  }
  if (isUnavailable(err)) return new EngineError('DATABASE_UNAVAILABLE', `cannot reach the database ${where}: ${said}`, { ...opts, retryable: true });
  if (code === '53100') return new EngineError('DATABASE_FULL', `the database ${where} is out of disk space: ${said}`, opts);
  if (code === '25006') return new EngineError('DATABASE_READONLY', `the database ${where} is read-only: ${said}`, { ...opts, retryable: false });
  if (code === '55P03') return new EngineError('DATABASE_BUSY', `the database ${where} kept a lock taken past the lock timeout: ${said}`, opts);
  if (code === 'XX001' || code === 'XX002') {
    return new EngineError('DATABASE_CORRUPT', `the database ${where} reports damaged data: ${said}`, { ...opts, kind: 'user', retryable: false });
  }
  return undefined;
}
