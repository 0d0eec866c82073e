/**
 * `runnel check` (issue 14): a clean demo file passes; copies of it damaged by hand with SQL, one
 * invariant each, are named violation by violation — typed, listed by `--json`, exit 1.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkDatabase, type CheckReport } from '../../../engine/db/check';
import { parseJson, runCli } from '../../helpers/cli';
import { runToSettled, tempDir, tempSqliteEngine } from '../../helpers/temp-engine';

let tmp: ReturnType<typeof tempDir>;
let demo: string;
let copies = 0;

beforeAll(async () => {
  tmp = tempDir('runnel-check-');
  demo = path.join(tmp.dir, 'demo.db');
  const r = await runCli('demo', '--db', demo, '--devices', '10', '--json');
  expect(r.code, r.stderr).toBe(0);
}, 60_000);
afterAll(() => tmp.cleanup());

/** A copy of the demo file (its WAL folded in), changed by `damage` on a connection with foreign keys off. */
function damagedCopy(damage: (db: Database.Database) => void): string {
  const file = path.join(tmp.dir, `copy-${++copies}.db`);
  fs.copyFileSync(demo, file);
  if (fs.existsSync(`${demo}-wal`)) fs.copyFileSync(`${demo}-wal`, `${file}-wal`);
  const db = new Database(file);
  db.pragma('foreign_keys = OFF');
  damage(db);
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return file;
}

const one = <T>(db: Database.Database, sql: string): T => db.prepare(sql).get() as T;
const kinds = (r: CheckReport) => r.violations.map((v) => v.kind);

describe('runnel check', () => {
  it('passes the demo file: exit 0, ok, what it looked at counted', async () => {
    const db = new Database(demo, { readonly: true });
    const counts = one<{ instances: number; live: number; suspended: number; schedule: number; history: number }>(
      db,
      `SELECT count(*) AS instances, sum(status IN ('PENDING', 'RUNNING', 'WAITING', 'COMPENSATING')) AS live,
              sum(status = 'SUSPENDED') AS suspended, (SELECT count(*) FROM schedule) AS schedule,
              (SELECT count(*) FROM history) AS history FROM instance`,
    );
    db.close();
    expect(counts).toMatchObject({ instances: 13, suspended: 1 });
    const r = await runCli('check', '--db', demo);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    // (one row is "1 schedule row", not "1 schedule rows")
    const rows = counts.schedule === 1 ? '1 schedule row' : `${counts.schedule} schedule rows`;
    // (a SUSPENDED instance is counted apart: it waits for a person, no worker moves it)
    expect(r.stdout).toContain(`: ok — 13 instances (${counts.live} live, 1 SUSPENDED), ${rows}, ${counts.history} history rows, WAL `);
    const report = parseJson<CheckReport>(await runCli('check', '--db', demo, '--json'));
    expect(report.ok).toBe(true);
    expect(report.violations).toEqual([]);
    expect(report.counts).toMatchObject({ instances: 13, live: counts.live, suspended: 1, schedule: counts.schedule, history: counts.history });
  });

  it('names a RUNNING node no schedule row holds (instance and node), exit 1', async () => {
    let target = { id: 0, node: '' };
    const file = damagedCopy((db) => {
      target = one(db, `SELECT n.instance_id AS id, n.node_id AS node FROM node_state n JOIN instance i ON i.id = n.instance_id WHERE i.status = 'SUSPENDED' AND n.status = 'COMPLETED' ORDER BY n.node_id LIMIT 1`);
      db.prepare(`UPDATE node_state SET status = 'RUNNING' WHERE instance_id = ? AND node_id = ?`).run(target.id, target.node);
    });
    const r = await runCli('check', '--db', file, '--json');
    expect(r.code).toBe(1);
    const report = parseJson<CheckReport>(r);
    expect(report.ok).toBe(false);
    expect(report.violations).toEqual([
      {
        kind: 'RUNNING_WITHOUT_LEASE',
        instanceId: target.id,
        nodeId: target.node,
        message: `instance ${target.id} node ${target.node} is RUNNING but no schedule row holds it: nothing will finish or retry it`,
      },
    ]);
    const text = await runCli('check', '--db', file);
    expect(text.code).toBe(1);
    expect(text.stdout).toContain(`RUNNING_WITHOUT_LEASE: instance ${target.id} node ${target.node} is RUNNING`);
    expect(text.stdout).toMatch(/: 1 violation — /);
  });

  it('names orphan schedule rows: of an ended instance, of a missing one, of a node the instance lacks', () => {
    let ended = 0;
    let live = 0;
    const file = damagedCopy((db) => {
      ended = one<{ id: number }>(db, `SELECT id FROM instance WHERE status = 'COMPLETED' ORDER BY id LIMIT 1`).id;
      live = one<{ id: number }>(db, `SELECT id FROM instance WHERE status = 'SUSPENDED' LIMIT 1`).id;
      const ins = db.prepare(`INSERT INTO schedule (instance_id, node_id, kind, next_run_at, created_at) VALUES (?, ?, ?, 1, 1)`);
      ins.run(ended, null, 'deadline');
      ins.run(99_999, 'x', 'run');
      ins.run(live, 'no-such-node', 'timer');
    });
    const report = checkDatabase(file);
    // The row of the missing instance breaks its foreign key too, which SQLite's own check names.
    expect(kinds(report)).toEqual(['FOREIGN_KEY', 'ORPHAN_SCHEDULE_ROW', 'ORPHAN_SCHEDULE_ROW', 'ORPHAN_SCHEDULE_ROW']);
    expect(report.violations[0]?.message).toMatch(/^schedule row \d+ refers to a missing instance row$/);
    expect(report.violations.slice(1).map((v) => [v.instanceId, v.message.replace(/^schedule row \d+ /, '')])).toEqual([
      [ended, `(deadline) belongs to instance ${ended}, which has ended (COMPLETED)`],
      [99_999, '(run) belongs to instance 99999, which does not exist'],
      [live, `(timer) names node no-such-node, which instance ${live} does not have`],
    ]);
  });

  it('names a live instance with no work queued and no person awaited (a deadline row alone is no work)', () => {
    let id = 0;
    const file = damagedCopy((db) => {
      id = one<{ id: number }>(db, `SELECT id FROM instance WHERE status = 'COMPLETED' ORDER BY id DESC LIMIT 1`).id;
      db.prepare(`UPDATE instance SET status = 'WAITING', ended_at = NULL WHERE id = ?`).run(id);
      db.prepare(`INSERT INTO schedule (instance_id, node_id, kind, next_run_at, created_at) VALUES (?, NULL, 'deadline', 1, 1)`).run(id);
    });
    const report = checkDatabase(file);
    expect(report.violations).toEqual([
      { kind: 'STUCK_INSTANCE', instanceId: id, message: `instance ${id} is WAITING but has no work queued and waits for no person: it will never move` },
    ]);
  });

  it('does not call a paused instance stuck: its map waits for the unpause to start the next item', async () => {
    const { engine, close } = tempSqliteEngine();
    try {
      await engine.deploy({ name: 'kid', nodes: [{ id: 'ok', type: 'approval' }] });
      await engine.deploy({ name: 'parent', nodes: [{ id: 'fan', type: 'map', config: { items: '[1,2,3]', workflow: 'kid', maxConcurrency: 1 } }] });
      const id = await engine.start('parent');
      const kids = async () => (await engine.listInstances({ parentId: id })).map((k) => k.id);
      await engine.runUntil(async () => (await kids()).length === 1 && (await engine.getInstance((await kids())[0]!)).status === 'WAITING', 10_000);
      // Given the parent paused while its one running item waits, and that item then ending
      await engine.pause(id);
      const [first] = await kids();
      await engine.approve(first!, 'ok', { approved: true });
      expect((await runToSettled(engine, first!)).status).toBe('COMPLETED');
      // Then the parent is WAITING with nothing queued (the next item starts at the unpause), and check is ok
      expect(await engine.getInstance(id)).toMatchObject({ status: 'WAITING', pausedAt: expect.any(Number) });
      expect(await kids()).toHaveLength(1);
      expect(engine.checkDatabase().violations).toEqual([]);
      // And once unpaused it runs the other items to the end
      await engine.unpause(id);
      for (let n = 2; n <= 3; n++) {
        // (each next item starts once the one before ended, and waits for its approval)
        await engine.runUntil(async () => (await kids()).length === n, 10_000);
        for (const k of await kids()) if ((await engine.getInstance(k)).status === 'WAITING') await engine.approve(k, 'ok', { approved: true });
      }
      expect((await runToSettled(engine, id)).status).toBe('COMPLETED');
    } finally {
      await close();
    }
  });

  it('names an instance held for a concurrency slot that has room', () => {
    let id = 0;
    const file = damagedCopy((db) => {
      const row = one<{ id: number; workflowId: number; name: string }>(
        db,
        `SELECT i.id, i.workflow_id AS workflowId, w.name FROM instance i JOIN workflow w ON w.id = i.workflow_id WHERE i.status = 'COMPLETED' ORDER BY i.id DESC LIMIT 1`,
      );
      id = row.id;
      db.prepare(`UPDATE workflow SET dsl_json = json_set(dsl_json, '$.concurrency', json('{"limit":1}')) WHERE id = ?`).run(row.workflowId);
      db.prepare(`UPDATE instance SET status = 'PENDING', ended_at = NULL, held = 1, concurrency_key = ? WHERE id = ?`).run(row.name, id);
      const node = one<{ nodeId: string }>(db, `SELECT node_id AS nodeId FROM node_state WHERE instance_id = ${id} LIMIT 1`).nodeId;
      db.prepare(`UPDATE node_state SET status = 'READY' WHERE instance_id = ? AND node_id = ?`).run(id, node);
      db.prepare(`INSERT INTO schedule (instance_id, node_id, kind, next_run_at, created_at) VALUES (?, ?, 'run', ?, 1)`).run(id, node, Number.MAX_SAFE_INTEGER);
    });
    const report = checkDatabase(file);
    expect(report.violations).toEqual([
      { kind: 'HELD_WITH_ROOM', instanceId: id, message: `instance ${id} is held for a concurrency slot with room (0 of 1 in progress): nothing will admit it` },
    ]);
  });

  it('names history out of order: an event before the instance was created, and one dated before its predecessor', () => {
    let first = 0;
    let second = 0;
    let lowId = 0;
    let highId = 0;
    const file = damagedCopy((db) => {
      const ids = db.prepare(`SELECT id FROM instance ORDER BY id LIMIT 2`).all() as { id: number }[];
      first = ids[0]?.id ?? 0;
      second = ids[1]?.id ?? 0;
      lowId = one<{ id: number }>(db, `SELECT min(id) - 1000 AS id FROM history`).id;
      const createdAt = one<{ at: number }>(db, `SELECT min(at) AS at FROM history WHERE instance_id = ${first}`).at;
      db.prepare(`INSERT INTO history (id, instance_id, type, at) VALUES (?, ?, 'node.log', ?)`).run(lowId, first, createdAt);
      highId = Number(db.prepare(`INSERT INTO history (instance_id, type, at) VALUES (?, 'node.log', 5000)`).run(second).lastInsertRowid);
    });
    const report = checkDatabase(file);
    expect(report.violations.map((v) => [v.kind, v.instanceId, v.historyId])).toEqual([
      ['HISTORY_ORDER', first, lowId],
      ['HISTORY_ORDER', second, highId],
    ]);
    expect(report.violations[0]?.message).toBe(`history row ${lowId} (node.log) of instance ${first} comes before the instance was created`);
    expect(report.violations[1]?.message).toMatch(new RegExp(`^history row ${highId} of instance ${second} is dated 1970-01-01T00:00:05.000Z, \\d+ ms before the event before it, with no clock jump recorded$`));
  });

  it('reports a write-ahead log above its bound while a connection holds it', () => {
    const file = damagedCopy(() => undefined);
    const holder = new Database(file);
    try {
      holder.pragma('wal_autocheckpoint = 0');
      holder.exec(`CREATE TABLE scratch (x TEXT); INSERT INTO scratch VALUES (hex(randomblob(20000))); DROP TABLE scratch;`);
      const wal = fs.statSync(`${file}-wal`).size;
      expect(wal).toBeGreaterThan(20_000);
      const report = checkDatabase(file, { walLimitBytes: 16_384 });
      expect(report.violations).toEqual([
        {
          kind: 'WAL_OVER_BOUND',
          message: `the write-ahead log is ${wal} bytes, above its bound of 16384: a reader holds old frames (a long read transaction, often in another process)`,
        },
      ]);
      expect(checkDatabase(file).ok).toBe(true);
    } finally {
      holder.close();
    }
  });

  it("reports SQLite's integrity_check on damaged pages as INTEGRITY violations, exit 1", async () => {
    const file = damagedCopy((db) => db.pragma('journal_mode = DELETE'));
    const db = new Database(file, { readonly: true });
    const pages = db.prepare(`SELECT pageno FROM dbstat WHERE name = 'history_instance' AND pagetype = 'leaf' ORDER BY pageno`).all() as { pageno: number }[];
    const size = db.pragma('page_size', { simple: true }) as number;
    db.close();
    expect(pages.length).toBeGreaterThan(0);
    const fd = fs.openSync(file, 'r+');
    // The cell content of the index's first leaf page: zeros where keys were.
    fs.writeSync(fd, Buffer.alloc(size - 200), 0, size - 200, ((pages[0]?.pageno ?? 1) - 1) * size + 100);
    fs.closeSync(fd);
    const r = await runCli('check', '--db', file, '--json');
    expect(r.code).toBe(1);
    const report = parseJson<CheckReport>(r);
    expect(report.violations.length).toBeGreaterThan(0);
    expect(new Set(kinds(report))).toEqual(new Set(['INTEGRITY']));
    expect(report.violations[0]?.message).toMatch(/^SQLite (integrity_check|cannot read it): /);

    // and: the damage is recorded as a read that meets it records it, so nothing writes into the file after
    expect(report.damageMarker).toBe(`${file}-damaged`);
    expect(fs.existsSync(`${file}-damaged`)).toBe(true);
    const before = fs.readFileSync(file);
    const wf = path.join(tmp.dir, 'after-check.workflow.json');
    fs.writeFileSync(wf, JSON.stringify({ name: 'after-check', nodes: [{ id: 'a', type: 'pass' }] }));
    const run = await runCli('run', wf, '--db', file);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/DATABASE_CORRUPT: .* was found damaged at .*\(SQLite: runnel check found \d+ INTEGRITY violations?, the first: SQLite (integrity_check|cannot read it)[^\n]*\); Runnel does not write to it/);
    expect(fs.readFileSync(file).equals(before)).toBe(true);
    const text = await runCli('check', '--db', file);
    expect(text.code).toBe(1);
    expect(text.stderr).toContain(`the damage is recorded in ${file}-damaged: no Runnel process writes to the file until it is deleted`);
  });

  it('records nothing for a file whose only violations are the engine\'s invariants', async () => {
    const file = damagedCopy((db) => db.prepare(`INSERT INTO schedule (instance_id, node_id, kind, next_run_at, created_at) VALUES (999999, NULL, 'deadline', 1, 1)`).run());
    const r = await runCli('check', '--db', file, '--json');
    expect(r.code).toBe(1);
    expect(parseJson<CheckReport>(r).damageMarker).toBeNull();
    expect(fs.existsSync(`${file}-damaged`)).toBe(false);
  });

  it('refuses a missing file (NOT_FOUND, exit 2) and creates nothing', async () => {
    const missing = path.join(tmp.dir, 'missing.db');
    const r = await runCli('check', '--db', missing);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error: NOT_FOUND: /);
    expect(fs.existsSync(missing)).toBe(false);
  });

  it('check and backup name the server\'s tools for a PostgreSQL URL (exit 2, no stack, no password)', async () => {
    for (const args of [['check'], ['backup', path.join(tmp.dir, 'b.db')]]) {
      const r = await runCli(...args, '--db', 'postgres://runnel:s3cret@127.0.0.1:1/runnel');
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(new RegExp(`^error: INVALID_INPUT: ${args[0]} works on a SQLite file; postgres://runnel@127.0.0.1:1/runnel is a PostgreSQL database: use pg_`));
      expect(r.stderr).not.toMatch(/s3cret|\n\s+at /);
    }
  });
});
