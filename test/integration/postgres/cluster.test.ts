/**
 * The test cluster and its helper (test/helpers/postgres.ts): each database is new and empty,
 * reachable by its URL, and gone once dropped.
 */
import pg from 'pg';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { pgAdminUrl, tempPostgres, tempPostgresSync } from '../../helpers/postgres';

async function query<T extends pg.QueryResultRow>(url: string, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

describe('test PostgreSQL', () => {
  const drops: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const drop of drops.splice(0)) await drop();
  });

  it.runIf(inject('pgClusterOwned'))('listens on 127.0.0.1 only, with fsync off (the run\'s own cluster)', async () => {
    const [row] = await query<{ listen: string; fsync: string }>(pgAdminUrl(), `SELECT current_setting('listen_addresses') AS listen, current_setting('fsync') AS fsync`);
    expect(row).toEqual({ listen: '127.0.0.1', fsync: 'off' });
  });

  it('gives each caller a new empty database, dropped by drop()', async () => {
    const a = await tempPostgres();
    const b = await tempPostgres();
    drops.push(a.drop, b.drop);
    expect(a.url).not.toBe(b.url);
    await query(a.url, 'CREATE TABLE t (x int)');
    const tables = await query<{ n: number }>(b.url, `SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'`);
    expect(tables[0]?.n).toBe(0);
    await a.drop();
    const left = await query<{ n: number }>(pgAdminUrl(), `SELECT count(*)::int AS n FROM pg_database WHERE datname = '${a.name}'`);
    expect(left[0]?.n).toBe(0);
  });

  it('creates one synchronously too (for tempEngine)', async () => {
    const c = tempPostgresSync();
    drops.push(c.drop);
    const [row] = await query<{ db: string }>(c.url, 'SELECT current_database() AS db');
    expect(row).toEqual({ db: c.name });
  });
});
