/**
 * PostgreSQL: how the read model runs its statements — through a `pg.Pool` on the engine's
 * thread (reads never go through the write bridge), with BIGINT and NUMERIC answered as JS
 * numbers whatever the pool's own type parsers say (ids and epoch ms stay below 2^53; counts,
 * sums and percentiles are BIGINT or NUMERIC in PostgreSQL, INTEGER in SQLite).
 */
import pg from 'pg';

const INT8 = 20;
const NUMERIC = 1700;

const toNumber = (text: string): number => Number(text);

/** The type parsers of every read: int8 and numeric as numbers, the driver's defaults otherwise. */
export const READ_TYPES: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8 || oid === NUMERIC ? toNumber : pg.types.getTypeParser(oid, format ?? 'text')) as pg.CustomTypesConfig['getTypeParser'],
};

/** What the read model queries: a pool (or, in tests and tools, one client). */
export type PgQueryable = Pick<pg.Pool, 'query'> | Pick<pg.ClientBase, 'query'>;

/** The rows of `text` with `values` as `$1…`, typed by {@link READ_TYPES}. */
export async function rowsOf<R extends pg.QueryResultRow>(db: PgQueryable, text: string, values: readonly unknown[] = []): Promise<R[]> {
  const result = await (db as Pick<pg.Pool, 'query'>).query<R>({ text, values: values as unknown[], types: READ_TYPES });
  return result.rows;
}

/** The first row of `text`, or undefined. */
export async function rowOf<R extends pg.QueryResultRow>(db: PgQueryable, text: string, values: readonly unknown[] = []): Promise<R | undefined> {
  return (await rowsOf<R>(db, text, values))[0];
}
