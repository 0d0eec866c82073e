/**
 * The backend switch of test/helpers/temp-engine.ts: in the `integration-pg` project
 * (RUNNEL_TEST_BACKEND=postgres) `tempEngine()` gives an engine on a fresh PostgreSQL database,
 * elsewhere on a SQLite file; `tempSqliteEngine()` is SQLite everywhere. Listed in both projects,
 * so a conformance run that silently fell back to SQLite fails here.
 */
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteEngine } from '../../../engine/runtime/engine';
import { runToSettled, TEST_BACKEND, tempEngine, tempSqliteEngine, type TempEngine } from '../../helpers/temp-engine';

const opened: TempEngine[] = [];
afterEach(async () => {
  for (const t of opened.splice(0)) await t.close();
});

describe('tempEngine()', () => {
  it(`opens the run's backend (${TEST_BACKEND}) and runs an instance on it`, async () => {
    const t = tempEngine();
    opened.push(t);
    await t.engine.deploy({ name: 'one', nodes: [{ id: 'p', type: 'pass' }], edges: [] });
    const id = await t.engine.start('one');
    expect((await runToSettled(t.engine, id)).status).toBe('COMPLETED');
    if (process.env.RUNNEL_TEST_BACKEND === 'postgres') {
      expect(TEST_BACKEND).toBe('postgres');
      expect(t.file).toMatch(/^postgres:\/\//);
      expect(t.engine).not.toBeInstanceOf(SqliteEngine);
      // The instance is in that database's tables.
      const client = new pg.Client({ connectionString: t.file });
      await client.connect();
      try {
        expect((await client.query(`SELECT status FROM instance WHERE id = $1`, [id])).rows).toEqual([{ status: 'COMPLETED' }]);
      } finally {
        await client.end();
      }
    } else {
      expect(TEST_BACKEND).toBe('sqlite');
      expect(t.engine).toBeInstanceOf(SqliteEngine);
    }
  });

  it('drops its PostgreSQL database at close (a SQLite file goes with its dir)', async () => {
    const t = tempEngine();
    await t.close();
    if (TEST_BACKEND === 'postgres') {
      const admin = new pg.Client({ connectionString: t.file.replace(/\/[^/]+$/, '/postgres') });
      await admin.connect();
      try {
        const name = new URL(t.file).pathname.slice(1);
        expect((await admin.query(`SELECT 1 FROM pg_database WHERE datname = $1`, [name])).rows).toEqual([]);
      } finally {
        await admin.end();
      }
    }
  });

  it('tempSqliteEngine() is SQLite whatever the backend', async () => {
    const t = tempSqliteEngine();
    opened.push(t);
    expect(t.engine).toBeInstanceOf(SqliteEngine);
    expect(t.engine.db.raw.prepare('SELECT 1 AS x').get()).toEqual({ x: 1 });
  });
});
