/**
 * PostgreSQL schema (engine/db/postgres/migrations/): a fresh database gets SQLite's tables,
 * columns, indexes and views (migrations 1–4, final state); history is append-only in the
 * database itself; two processes migrating at once are safe; a newer schema is refused.
 */
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { migratePostgresAsync, PG_SCHEMA_VERSION } from '../../../engine/db/postgres/migrations/index';
import { openDatabase } from '../../../engine/db/open-database';
import { rejectionOf } from '../../helpers/engine-errors';
import { tempPostgres } from '../../helpers/postgres';
import { tempDir } from '../../helpers/temp-engine';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function freshClient(): Promise<{ client: pg.Client; url: string }> {
  const db = await tempPostgres();
  cleanups.push(db.drop);
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  cleanups.push(() => client.end());
  return { client, url: db.url };
}

/** SQLite's schema after every migration: table → column names, and the index and view names. */
function sqliteSchema(): { columns: Record<string, string[]>; indexes: string[]; views: Record<string, string[]> } {
  const { dir, cleanup } = tempDir();
  cleanups.push(cleanup);
  openDatabase(`${dir}/runnel.db`).close();
  const db = new Database(`${dir}/runnel.db`, { readonly: true });
  try {
    const objects = db.prepare(`SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\'`).all() as { type: string; name: string }[];
    const cols = (t: string) => (db.prepare(`SELECT name FROM pragma_table_info(?)`).all(t) as { name: string }[]).map((c) => c.name).sort();
    const columns: Record<string, string[]> = {};
    const views: Record<string, string[]> = {};
    for (const o of objects) {
      // SQLite's own: the highest deleted instance id (migration 14), which PostgreSQL's identity needs not.
      if (o.name === 'id_floor') continue;
      if (o.type === 'table') columns[o.name] = cols(o.name);
      if (o.type === 'view') views[o.name] = cols(o.name);
    }
    return { columns, views, indexes: objects.filter((o) => o.type === 'index').map((o) => o.name).sort() };
  } finally {
    db.close();
  }
}

async function pgColumns(client: pg.Client, kind: 'BASE TABLE' | 'VIEW'): Promise<Record<string, string[]>> {
  const { rows } = await client.query<{ table_name: string; column_name: string }>(
    `SELECT c.table_name, c.column_name FROM information_schema.columns c
       JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
      WHERE c.table_schema = 'public' AND t.table_type = $1 AND c.table_name <> 'runnel_schema'
      ORDER BY c.table_name, c.column_name COLLATE "C"`,
    [kind],
  );
  const out: Record<string, string[]> = {};
  for (const r of rows) (out[r.table_name] ??= []).push(r.column_name);
  return out;
}

describe('PostgreSQL migrations', () => {
  it("give a fresh database SQLite's tables, columns, indexes and views", async () => {
    const { client, url } = await freshClient();
    await migratePostgresAsync(client, url);
    const want = sqliteSchema();
    expect(await pgColumns(client, 'BASE TABLE')).toEqual(want.columns);
    expect(await pgColumns(client, 'VIEW')).toEqual(want.views);
    const { rows } = await client.query<{ indexname: string }>(
      `SELECT indexname FROM pg_indexes WHERE schemaname = 'public' AND indexname NOT LIKE '%\\_pkey' AND indexname NOT LIKE '%\\_key'
        ORDER BY indexname COLLATE "C"`,
    );
    expect(rows.map((r) => r.indexname)).toEqual(want.indexes);
    // Epoch ms and ids do not fit 32 bits; JSON stays text (the row mappers parse it as on SQLite).
    const types = await client.query<{ column_name: string; data_type: string }>(
      `SELECT DISTINCT column_name, data_type FROM information_schema.columns c JOIN information_schema.tables t USING (table_schema, table_name)
        WHERE table_schema = 'public' AND t.table_type = 'BASE TABLE' AND (column_name LIKE '%\\_at' OR column_name LIKE '%id' OR column_name LIKE '%\\_json')`,
    );
    for (const t of types.rows) {
      // Text ids: a DSL node's and a schedule's (ids the definition gives), like JSON.
      const want = t.column_name.endsWith('_json') || t.column_name.endsWith('node_id') || t.column_name === 'schedule_id' ? 'text' : 'bigint';
      expect(`${t.column_name} ${t.data_type}`).toBe(`${t.column_name} ${want}`);
    }
    const version = await client.query(`SELECT max(version) AS v FROM runnel_schema`);
    expect(version.rows[0]).toEqual({ v: PG_SCHEMA_VERSION });
  });

  it('refuse UPDATE, DELETE and TRUNCATE of history (append-only in the database)', async () => {
    const { client, url } = await freshClient();
    await migratePostgresAsync(client, url);
    await client.query(`INSERT INTO history (type, at) VALUES ('test', 1)`);
    for (const sql of ['UPDATE history SET at = 2', 'DELETE FROM history', 'TRUNCATE history']) {
      await expect(client.query(sql), sql).rejects.toThrow('history is append-only');
    }
    expect((await client.query(`SELECT count(*)::int AS n FROM history`)).rows[0]).toEqual({ n: 1 });
  });

  it('keep the CHECKs (a status outside the vocabulary is refused)', async () => {
    const { client, url } = await freshClient();
    await migratePostgresAsync(client, url);
    await client.query(`INSERT INTO workflow (name, version, dsl_json, definition_hash, created_at) VALUES ('w', 1, '{}', 'h', 1)`);
    await expect(
      client.query(`INSERT INTO instance (workflow_id, status, variables_json, input_json, created_at, updated_at) VALUES (1, 'LOST', '{}', '{}', 1, 1)`),
    ).rejects.toThrow(/instance_status_check/);
    await expect(client.query(`INSERT INTO workflow (name, version, dsl_json, definition_hash, created_at) VALUES ('w', 0, '{}', 'h', 1)`)).rejects.toThrow(/check/);
  });

  it('are safe when several connections migrate one new database at once, and a current one is left as it is', async () => {
    const { client, url } = await freshClient();
    const others = await Promise.all(
      [1, 2, 3].map(async () => {
        const c = new pg.Client({ connectionString: url });
        await c.connect();
        cleanups.push(() => c.end());
        return c;
      }),
    );
    await Promise.all([client, ...others].map((c) => migratePostgresAsync(c, url)));
    // Each migration applied once, in order, whoever got there first.
    const applied = Array.from({ length: PG_SCHEMA_VERSION }, (_, i) => ({ version: i + 1 }));
    expect((await client.query(`SELECT version FROM runnel_schema ORDER BY version`)).rows).toEqual(applied);
    await migratePostgresAsync(client, url);
    expect((await client.query(`SELECT count(*)::int AS n FROM runnel_schema`)).rows[0]).toEqual({ n: PG_SCHEMA_VERSION });
  });

  it('refuse a database of a newer schema with DATABASE_NEWER, changing nothing', async () => {
    const { client, url } = await freshClient();
    await migratePostgresAsync(client, url);
    await client.query(`INSERT INTO runnel_schema (version, applied_at) VALUES ($1, 1)`, [PG_SCHEMA_VERSION + 1]);
    const err = await rejectionOf(migratePostgresAsync(client, 'postgres://runnel@host/db'));
    expect(err.code).toBe('DATABASE_NEWER');
    expect(err.message).toContain(`postgres://runnel@host/db has schema version ${PG_SCHEMA_VERSION + 1}`);
    // The connection is usable (no transaction left open) and the rows are as they were.
    expect((await client.query(`SELECT count(*)::int AS n FROM runnel_schema`)).rows[0]).toEqual({ n: PG_SCHEMA_VERSION + 1 });
  });

  it('roll back every step when one fails (a database holding a table of that name already)', async () => {
    const { client, url } = await freshClient();
    await client.query(`CREATE TABLE dead_letter (x int)`);
    await expect(migratePostgresAsync(client, url)).rejects.toThrow(/already exists/);
    const { rows } = await client.query(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'`);
    expect(rows).toEqual([{ table_name: 'dead_letter' }]);
  });
});
