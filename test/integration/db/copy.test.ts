/**
 * `runnel copy`: the demo's real SQLite file copied into a real PostgreSQL database and back into
 * a new file is row for row, id for id, the file it started from; the PostgreSQL copy goes on
 * numbering after the copied ids; a target that holds anything, and a source whose leases are
 * live (a worker runs on it), are refused with typed errors and leave the target untouched.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createHandlers, dispatch } from '../../../engine/api/handlers';
import { COPIED_TABLES } from '../../../engine/db/copy';
import { Engine } from '../../../engine/runtime/engine';
import { parseJson, runCli } from '../../helpers/cli';
import { tempPostgres } from '../../helpers/postgres';
import { runToSettled, tempDir } from '../../helpers/temp-engine';

/** Every row of every copied table of a SQLite file, in key order. */
function sqliteRows(file: string): Record<string, unknown[]> {
  const db = new Database(file, { readonly: true });
  try {
    return Object.fromEntries(COPIED_TABLES.map((t) => [t.name, db.prepare(`SELECT * FROM ${t.name} ORDER BY ${t.key.join(', ')}`).all()]));
  } finally {
    db.close();
  }
}

async function onPg<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

describe('runnel copy', () => {
  let tmp: ReturnType<typeof tempDir>;
  let demo: string;
  const drops: (() => Promise<void>)[] = [];
  beforeAll(async () => {
    tmp = tempDir();
    demo = path.join(tmp.dir, 'demo.db');
    const r = await runCli('demo', '--db', demo, '--devices', '10', '--json');
    expect(r.code, r.stderr).toBe(0);
    // Schedules too (text keys, a time zone, a paused flag): yearly, so none fires.
    const scheduled = path.join(tmp.dir, 'scheduled.json');
    fs.writeFileSync(scheduled, JSON.stringify({ name: 'yearly', nodes: [{ id: 'p', type: 'pass' }], schedules: [{ id: 'new-year', cron: '0 0 1 1 *', timezone: 'Europe/Berlin' }, { id: 'paused', cron: '0 12 1 1 *', paused: true }] }));
    expect((await runCli('deploy', scheduled, '--db', demo)).code).toBe(0);
    return () => tmp.cleanup();
  }, 120_000);
  afterEach(async () => {
    for (const d of drops.splice(0)) await d();
  });

  it('round-trips the demo file through PostgreSQL: every row and id equal; the copy numbers on after them', async () => {
    const db = await tempPostgres();
    drops.push(db.drop);
    const there = await runCli('copy', '--from', demo, '--to', db.url, '--json');
    expect(there.code, there.stderr).toBe(0);
    const original = sqliteRows(demo);
    const counts = parseJson<{ rows: Record<string, number> }>(there).rows;
    expect(counts).toEqual(Object.fromEntries(COPIED_TABLES.map((t) => [t.name, original[t.name]!.length])));
    expect(counts.instance).toBe(13);
    expect(counts.workflow_schedule).toBe(2);
    expect(counts.history).toBeGreaterThan(100);

    const back = path.join(tmp.dir, 'back.db');
    const home = await runCli('copy', '--from', db.url, '--to', back);
    expect(home.code, home.stderr).toBe(0);
    expect(home.stdout).toMatch(/^copied .* → .*back\.db in [\d.]+ s: \d+ workflow, \d+ node, 13 instance,/);
    expect(sqliteRows(back)).toEqual(original);

    // PostgreSQL's identities were moved past the copied ids.
    const maxHistory = Math.max(...original.history!.map((r) => (r as { id: number }).id));
    const next = await onPg(db.url, async (c) =>
      Number((await c.query(`INSERT INTO history (instance_id, node_id, type, at) VALUES (NULL, NULL, 'test.marker', 1) RETURNING id`)).rows[0].id),
    );
    expect(next).toBe(maxHistory + 1);
  });

  it('refuses a target that is not empty (exit 2, CONFLICT) and leaves it as it was', async () => {
    const db = await tempPostgres();
    drops.push(db.drop);
    expect((await runCli('copy', '--from', demo, '--to', db.url)).code).toBe(0);
    const before = await onPg(db.url, async (c) => Number((await c.query('SELECT count(*) AS n FROM history')).rows[0].n));
    const again = await runCli('copy', '--from', demo, '--to', db.url, '--json');
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('CONFLICT');
    expect(again.stderr).toContain('is not empty');
    expect(await onPg(db.url, async (c) => Number((await c.query('SELECT count(*) AS n FROM history')).rows[0].n))).toBe(before);

    const file = path.join(tmp.dir, 'full.db');
    fs.copyFileSync(demo, file);
    const intoFile = await runCli('copy', '--from', db.url, '--to', file);
    expect(intoFile.code).toBe(2);
    expect(intoFile.stderr).toContain('is not empty');
  });

  it('refuses a source whose steps are leased to a live worker (DATABASE_BUSY), naming what to do; the target stays empty', async () => {
    const busy = path.join(tmp.dir, 'busy.db');
    fs.copyFileSync(demo, busy);
    const raw = new Database(busy);
    const row = raw.prepare(`SELECT id FROM schedule LIMIT 1`).get() as { id: number } | undefined;
    expect(row).toBeDefined();
    raw.prepare(`UPDATE schedule SET lease_owner = 'host:1:abc', lease_expires_at = ? WHERE id = ?`).run(Date.now() + 60_000, row!.id);
    raw.close();
    const db = await tempPostgres();
    drops.push(db.drop);
    const r = await runCli('copy', '--from', busy, '--to', db.url);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('DATABASE_BUSY');
    expect(r.stderr).toContain('1 step(s) leased to a worker');
    expect(r.stderr).toContain('stop the workers on it');
    expect(await onPg(db.url, async (c) => Number((await c.query('SELECT count(*) AS n FROM instance')).rows[0].n))).toBe(0);
  });

  it("carries the change feed's head: after the newest instance was deleted, neither copy hands a cursor out twice", async () => {
    // given: a file whose newest instance (the feed's last ids) was deleted, with a consumer at the head
    const file = path.join(tmp.dir, 'pruned.db');
    const engine = Engine.open(file, { pollIntervalMs: 10 });
    await engine.deploy({ name: 'w', nodes: [{ id: 'a', type: 'pass', config: {} }], edges: [] });
    await runToSettled(engine, await engine.start('w'));
    const newest = await engine.start('w');
    await runToSettled(engine, newest);
    const { head } = await engine.storage.read.changes({ after: 0, limit: 1 });
    await engine.deleteInstance(newest);
    const handlers = createHandlers(engine);
    expect(await dispatch(handlers, 'changes:ack', { consumer: 'exporter', cursor: head })).toMatchObject({ ok: true });
    await engine.close();

    // when: it is copied into PostgreSQL, and from there into a new file
    const db = await tempPostgres();
    drops.push(db.drop);
    expect((await runCli('copy', '--from', file, '--to', db.url)).code).toBe(0);
    const back = path.join(tmp.dir, 'pruned-back.db');
    expect((await runCli('copy', '--from', db.url, '--to', back)).code).toBe(0);

    // then: on each copy the head is the source's, the consumer's cursor acknowledges, and new ids come above it
    for (const location of [db.url, back]) {
      const copy = Engine.open(location, { pollIntervalMs: 10 });
      try {
        expect((await copy.storage.read.changes({ after: 0, limit: 1 })).head, location).toBe(head);
        expect(await dispatch(createHandlers(copy), 'changes:ack', { consumer: 'exporter', cursor: head })).toMatchObject({ ok: true, value: { cursor: head } });
        const id = await copy.start('w');
        await runToSettled(copy, id);
        const ids = (await copy.history(id, 0, 100)).map((e) => e.id);
        expect(ids.length).toBeGreaterThan(0);
        expect(Math.min(...ids), location).toBeGreaterThan(head);
      } finally {
        await copy.close();
      }
    }
  });

  it('copies every table of the schema (a migration that adds one must add it to the copy)', () => {
    const db = new Database(demo, { readonly: true });
    const tables = (db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`).all() as { name: string }[]).map((r) => r.name);
    db.close();
    // id_floor (SQLite's highest deleted instance id) is carried as the instances' head, not as rows
    expect(tables).toEqual([...COPIED_TABLES.map((t) => t.name), 'id_floor'].sort());
  });

  it('names a missing source file (NOT_FOUND, exit 2) and creates no file for it', async () => {
    const missing = path.join(tmp.dir, 'nope.db');
    const r = await runCli('copy', '--from', missing, '--to', path.join(tmp.dir, 'x.db'));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('NOT_FOUND');
    expect(fs.existsSync(missing)).toBe(false);
  });
});
