/**
 * Test helpers: rows read straight from a test's database, whichever backend it is on (a SQLite
 * file's path or a PostgreSQL URL, as `tempEngine().file` gives), on a connection of their own —
 * for assertions about what is stored (schedule rows, history rows) that the engine's API does not
 * show. Write the SQL in the dialect both share, with `?` placeholders; BIGINT and NUMERIC come
 * back as numbers on PostgreSQL as on SQLite.
 */
import Database from 'better-sqlite3';
import pg from 'pg';

const NUMBERS: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === 20 || oid === 1700 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format ?? 'text')) as pg.CustomTypesConfig['getTypeParser'],
};

/** Whether `location` is a PostgreSQL URL. */
export function isPostgresLocation(location: string): boolean {
  return /^postgres(ql)?:\/\//.test(location);
}

/** The rows `sql` (with `?` placeholders bound to `params`) reads from the database at `location`. */
export async function rowsIn<R = Record<string, unknown>>(location: string, sql: string, params: readonly unknown[] = []): Promise<R[]> {
  if (!isPostgresLocation(location)) {
    const db = new Database(location, { readonly: true, fileMustExist: true });
    try {
      return db.prepare(sql).all(...params) as R[];
    } finally {
      db.close();
    }
  }
  let n = 0;
  const text = sql.replace(/\?/g, () => `$${++n}`);
  const client = new pg.Client({ connectionString: location });
  await client.connect();
  try {
    return (await client.query({ text, values: params as unknown[], types: NUMBERS })).rows as R[];
  } finally {
    await client.end();
  }
}

/** A schedule row as {@link scheduleRowsIn} gives it. */
export interface ScheduleRowView {
  kind: string;
  node_id: string | null;
  next_run_at: number;
  lease_owner: string | null;
}

/** Schedule rows of an instance (`kind` and due time), in the order they were made. */
export function scheduleRowsIn(location: string, instanceId: number): Promise<ScheduleRowView[]> {
  return rowsIn<ScheduleRowView>(location, 'SELECT kind, node_id, next_run_at, lease_owner FROM schedule WHERE instance_id = ? ORDER BY id', [instanceId]);
}
