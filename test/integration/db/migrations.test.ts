/**
 * Every migration from every earlier schema (STYLE.md habit 6, Signal Desktop's migration tests):
 * a real file at schema k (the first k migrations, for each k up to the current one) holding
 * instances in several statuses, node states, schedule rows, history and dead letters in the
 * shapes the engine wrote (test/helpers/old-schema.ts), opened by today's engine. Its rows must
 * survive unchanged and keep their meaning, its schema must end up the one a fresh file gets, and
 * the engine must be able to work them on. k = the current version reopens without migrating
 * (it holds the rows the next migration will have to carry: `input_json` '' among them).
 *
 * Also: a file of a newer schema is refused (DATABASE_NEWER) and left as it was.
 */
import { everyOf } from '../../helpers/probe-nodes';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MIGRATIONS, SCHEMA_VERSION } from '../../../engine/db/migrations/index';
import { openDatabase } from '../../../engine/db/open-database';
import { EngineError } from '../../../engine/errors';
import { Engine } from '../../../engine/runtime/engine';
import { freshSchemaSnapshot, schemaSnapshot } from '../../../scripts/schema-snapshot';
import { createFileAtSchema, OLD } from '../../helpers/old-schema';
import { tempDir } from '../../helpers/temp-engine';

const TABLES = ['workflow', 'node', 'instance', 'node_state', 'schedule', 'history', 'dead_letter'] as const;

type Rows = Record<(typeof TABLES)[number], Record<string, unknown>[]>;

/** Every row of every table, in primary-key order, read on a connection of its own. */
function readRows(file: string): Rows {
  const db = new Database(file, { readonly: true });
  try {
    const order: Record<(typeof TABLES)[number], string> = {
      workflow: 'id',
      node: 'workflow_id, node_id',
      instance: 'id',
      node_state: 'instance_id, node_id',
      schedule: 'id',
      history: 'id',
      dead_letter: 'id',
    };
    return Object.fromEntries(
      TABLES.map((t) => [t, db.prepare(`SELECT * FROM ${t} ORDER BY ${order[t]}`).all() as Record<string, unknown>[]]),
    ) as Rows;
  } finally {
    db.close();
  }
}

function onConnection<T>(file: string, read: (db: Database.Database) => T): T {
  const db = new Database(file, { readonly: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

/** Rows keeping only `columns`. */
function project(rows: Record<string, unknown>[], columns: string[]): Record<string, unknown>[] {
  return rows.map((r) => Object.fromEntries(columns.map((c) => [c, r[c]])));
}

let tmp: ReturnType<typeof tempDir>;
let engine: Engine | undefined;
beforeEach(() => {
  tmp = tempDir('runnel-migrations-');
});
afterEach(async () => {
  await engine?.close();
  engine = undefined;
  tmp.cleanup();
});

const VERSIONS = Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1);

describe.each(VERSIONS)('a file at schema %i', (k) => {
  const migrates = k < SCHEMA_VERSION;

  it(`${migrates ? `migrates to ${SCHEMA_VERSION}` : 'reopens'}: the schema a fresh file gets, every row kept as it was`, () => {
    // given a file at schema k with representative rows
    const file = path.join(tmp.dir, `schema-${k}.db`);
    createFileAtSchema(file, k, Date.now());
    const before = readRows(file);
    expect(onConnection(file, (db) => db.pragma('user_version', { simple: true }))).toBe(k);

    // when today's openDatabase opens it
    openDatabase(file).close();

    // then it is at the current version with exactly a fresh file's schema
    const schema = onConnection(file, (db) => schemaSnapshot(db));
    expect(schema).toBe(freshSchemaSnapshot());
    // and every row is what it was; columns added since hold their defaults (NULL)
    const after = readRows(file);
    for (const table of TABLES) {
      const oldColumns = Object.keys(before[table][0] ?? {});
      expect(before[table].length, `${table} rows in the fixture`).toBeGreaterThan(0);
      expect(project(after[table], oldColumns), table).toEqual(before[table]);
    }
    if (k < 3) expect(after.workflow.map((w) => w.deleted_at)).toEqual(after.workflow.map(() => null));
  });

  it('keeps the rows’ meaning: statuses, variables and input, waits, errors, history, lists and metrics', async () => {
    const file = path.join(tmp.dir, `schema-${k}.db`);
    const { lastHistoryId } = createFileAtSchema(file, k, Date.now());
    engine = Engine.open(file, { pollIntervalMs: 5 });

    // statuses as written
    const statuses = Object.fromEntries(
      await Promise.all(
        Object.entries(OLD)
          .filter(([, id]) => k >= 3 || id !== OLD.ofDeletedWorkflow)
          .map(async ([name, id]) => [name, (await engine!.getInstance(id)).status] as const),
      ),
    );
    expect(statuses).toEqual({
      waitingDelay: 'WAITING',
      waitingApproval: 'WAITING',
      suspended: 'SUSPENDED',
      failed: 'FAILED',
      cancelled: 'CANCELLED',
      completed: 'COMPLETED',
      lostLease: 'RUNNING',
      pending: 'PENDING',
      ...(k >= 3 ? { ofDeletedWorkflow: 'COMPLETED' } : {}),
    });

    // variables and start input: kept apart where the variables changed, equal where not
    const completed = (await engine.getInstance(OLD.completed));
    expect(completed.variables).toEqual({ n: 6, done: true });
    expect(completed.input).toEqual({ n: 6 });
    const approval = (await engine.getInstance(OLD.waitingApproval));
    expect(approval.input).toEqual({ who: 'x' });
    expect(approval.variables).toEqual({ who: 'x' });
    expect(approval.businessKey).toBe('bk-1');
    expect(approval.deadlineAt).toBeGreaterThan(Date.now());

    // waits, errors and the suspension read back parsed
    expect((await engine.getInstance(OLD.waitingDelay)).nodes.find((n) => n.id === 'wait')?.wait).toMatchObject({ kind: 'timer' });
    expect((await engine.getInstance(OLD.failed)).error).toMatchObject({ code: 'SCRIPT_ERROR', message: 'script threw Error: bad' });
    expect((await engine.getInstance(OLD.suspended)).suspension).toMatchObject({ kind: 'incident', nodeId: 'x', attempts: 1 });
    const inbox = (await engine.listApprovals());
    expect(inbox.items.map((a) => [a.instanceId, a.nodeId, a.prompt])).toEqual([[OLD.waitingApproval, 'ask', 'ok?']]);
    expect((await engine.history(OLD.failed)).map((h) => h.type)).toEqual(['instance.created', 'node.failed', 'instance.failing', 'instance.failed']);

    // lists, the dashboard's views and workflows (a deleted one gone from the lists, its instance readable)
    expect((await engine.listInstances({ status: ['WAITING'] })).map((i) => i.id)).toEqual([OLD.waitingApproval, OLD.waitingDelay]);
    expect((await engine.listInstances({ text: 'bk-1' })).map((i) => i.id)).toEqual([OLD.waitingApproval]);
    const metrics = (await engine.metrics());
    expect(metrics.counts).toEqual({
      WAITING: 2,
      SUSPENDED: 1,
      FAILED: 1,
      CANCELLED: 1,
      COMPLETED: k >= 3 ? 2 : 1,
      RUNNING: 1,
      PENDING: 1,
    });
    expect(metrics.deadLetters.map((d) => [d.instance_id, d.workflow, d.node_id])).toEqual([[OLD.failed, 'fail', 'y'], [OLD.suspended, 'boom', 'x']]);
    expect((await engine.listWorkflows()).map((w) => w.name).sort()).toEqual(['ask', 'boom', 'crashy', 'fail', 'fresh', 'orders']);
    if (k >= 3) expect((await engine.getInstance(OLD.ofDeletedWorkflow)).workflow).toBe('retired');
    // a definition stored by the old build is recognized: deploying it again makes no version
    const orders = await engine.deploy((await engine.getWorkflow('orders')).definition);
    expect(orders).toMatchObject({ name: 'orders', version: 1, created: false });
    expect(lastHistoryId).toBe(onConnection(file, (db) => (db.prepare('SELECT max(id) AS m FROM history').get() as { m: number }).m));
  });

  it('works the old rows on: an overdue delay fires, a lost lease is reclaimed, pending work runs, an approval and a resume complete', async () => {
    // given a file at schema k, opened by today's engine
    const file = path.join(tmp.dir, `schema-${k}.db`);
    const { lastHistoryId } = createFileAtSchema(file, k, Date.now());
    engine = Engine.open(file, { pollIntervalMs: 5 });
    const e = engine;

    // when the worker runs
    await e.runUntil(() => everyOf([OLD.waitingDelay, OLD.lostLease, OLD.pending], (id) => e.isSettled(id)), 20_000);

    // then the overdue delay fired once and its successor ran
    const delayed = (await e.getInstance(OLD.waitingDelay));
    expect(delayed.status).toBe('COMPLETED');
    expect(delayed.nodes.map((n) => [n.id, n.status])).toEqual([
      ['a', 'COMPLETED'],
      ['b', 'COMPLETED'],
      ['wait', 'COMPLETED'],
    ]);
    expect((await e.history(OLD.waitingDelay)).filter((h) => h.nodeId === 'wait' && h.type === 'node.completed')).toHaveLength(1);
    // and the dead worker's claim was taken over: the lost attempt counted, the next one ran
    const reclaimed = (await e.getInstance(OLD.lostLease));
    expect(reclaimed.status).toBe('COMPLETED');
    expect(reclaimed.nodes.find((n) => n.id === 's')).toMatchObject({ status: 'COMPLETED', attempt: 2, output: { v: 42 } });
    // and the never-claimed step ran
    expect((await e.getInstance(OLD.pending)).status).toBe('COMPLETED');

    // when a person approves the old approval, and resumes the old incident with fixed variables
    await e.approve(OLD.waitingApproval, 'ask', { approved: true, actor: 'migrator' });
    await e.resume(OLD.suspended, { action: 'retry', variables: { ok: true }, actor: 'migrator' });
    await e.runUntil(async () => (await e.isSettled(OLD.waitingApproval)) && (await e.isSettled(OLD.suspended)), 20_000);

    // then both complete; the approval's timeout and deadline rows are gone with it
    expect((await e.getInstance(OLD.waitingApproval)).status).toBe('COMPLETED');
    const resumed = (await e.getInstance(OLD.suspended));
    expect(resumed.status).toBe('COMPLETED');
    expect(resumed.variables).toEqual({ ok: true });
    expect(resumed.input).toEqual({});
    expect(onConnection(file, (db) => db.prepare('SELECT count(*) AS n FROM schedule').get())).toEqual({ n: 0 });
    // and the ended ones stayed as they were
    expect((await e.getInstance(OLD.failed)).status).toBe('FAILED');
    expect((await e.getInstance(OLD.cancelled)).status).toBe('CANCELLED');
    // and history went on after the old rows, never over them
    const newIds = onConnection(file, (db) => db.prepare('SELECT id FROM history WHERE id > ? ORDER BY id').all(lastHistoryId) as { id: number }[]);
    expect(newIds.length).toBeGreaterThan(5);
  });
});

describe('migration 10 (history ids AUTOINCREMENT)', () => {
  it('keeps every history row and trigger, and seeds the sequence past every id handed out, a consumer\'s cursor included', () => {
    // given: a file at schema 9 whose consumer has read past the newest history row left
    // (rows above it were deleted by retention before the upgrade)
    const file = path.join(tmp.dir, 'schema-9.db');
    const { lastHistoryId } = createFileAtSchema(file, 9, Date.now());
    const raw = new Database(file);
    raw.prepare('INSERT INTO change_consumer (name, cursor, created_at, updated_at) VALUES (?, ?, 0, 0)').run('exporter', lastHistoryId + 5);
    raw.close();
    const before = readRows(file).history;

    // when: today's openDatabase migrates it
    openDatabase(file).close();

    // then: the rows are as they were, the sequence stands at the cursor, and the next id is above it
    const db = new Database(file);
    try {
      expect(db.prepare('SELECT * FROM history ORDER BY id').all()).toEqual(before);
      expect(db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'history'").pluck().get()).toBe(lastHistoryId + 5);
      const id = db.prepare("INSERT INTO history (instance_id, type, at) VALUES (?, 'probe', 0) RETURNING id").pluck().get(OLD.completed);
      expect(id).toBe(lastHistoryId + 6);
      // and: history is still append-only outside a purge
      expect(() => db.prepare('UPDATE history SET type = ? WHERE id = ?').run('x', id)).toThrow('history is append-only');
      expect(() => db.prepare('DELETE FROM history WHERE id = ?').run(id)).toThrow('history is append-only');
    } finally {
      db.close();
    }
  });
});

describe('migration 16 (time travel\'s record keyed by the history entry)', () => {
  it('keeps every patch: an entry\'s under the entry\'s id, a pending one under minus its instance\'s id', () => {
    // given: a file at schema 15 with a patch keyed by a history entry and a pending one
    const file = path.join(tmp.dir, 'schema-15.db');
    createFileAtSchema(file, 15, Date.now());
    const raw = new Database(file);
    const entry = raw.prepare('SELECT id FROM history WHERE instance_id = ? ORDER BY id LIMIT 1').pluck().get(OLD.completed) as number;
    raw.prepare('INSERT INTO history_state (instance_id, history_id, patch_json) VALUES (?, ?, ?)').run(OLD.completed, entry, '{"i":{"s":"C"}}');
    raw.prepare('INSERT INTO history_state (instance_id, history_id, patch_json) VALUES (?, 0, ?)').run(OLD.completed, '{"n":{"a":{"s":"R"}}}');
    raw.close();

    // when: today's openDatabase migrates it
    openDatabase(file).close();

    // then: both patches are there, keyed anew, and the table is the fresh file's
    const rows = onConnection(file, (db) => db.prepare('SELECT history_id, patch_json FROM history_state ORDER BY history_id').all());
    expect(rows).toEqual([
      { history_id: -OLD.completed, patch_json: '{"n":{"a":{"s":"R"}}}' },
      { history_id: entry, patch_json: '{"i":{"s":"C"}}' },
    ]);
  });
});

describe('a file of a newer schema', () => {
  it('is refused with DATABASE_NEWER by openDatabase, Engine.open and a read-only open, and left as it was', () => {
    // given a file one version ahead of this build
    const file = path.join(tmp.dir, 'newer.db');
    createFileAtSchema(file, SCHEMA_VERSION, Date.now());
    const raw = new Database(file);
    raw.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    raw.close();
    const before = readRows(file);
    const schemaBefore = onConnection(file, (db) => schemaSnapshot(db));

    // when each way of opening it is tried, then each refuses it, naming both versions
    const refusals = [
      () => openDatabase(file),
      () => Engine.open(file),
      () => openDatabase(file, { readonly: true }),
    ].map((open) => {
      try {
        open();
      } catch (err) {
        return err;
      }
      throw new Error('opened a newer file');
    });
    for (const err of refusals) {
      expect(err).toBeInstanceOf(EngineError);
      expect((err as EngineError).code).toBe('DATABASE_NEWER');
      expect((err as EngineError).message).toContain(`schema version ${SCHEMA_VERSION + 1}; this Runnel knows up to ${SCHEMA_VERSION}`);
    }
    // and nothing was written
    expect(onConnection(file, (db) => schemaSnapshot(db))).toBe(schemaBefore);
    expect(readRows(file)).toEqual(before);
  });
});

describe('the migration list', () => {
  it('is numbered without gaps: one file per version, named NNNN-name.ts', () => {
    const dir = fileURLToPath(new URL('../../../engine/db/migrations/', import.meta.url));
    const files = fs.readdirSync(dir).filter((f) => /^\d{4}-/.test(f)).sort();
    expect(files.map((f) => Number(f.slice(0, 4)))).toEqual(MIGRATIONS.map((_, i) => i + 1));
    expect(files.every((f) => /^\d{4}-[a-z0-9]+(?:-[a-z0-9]+)*\.ts$/.test(f))).toBe(true);
  });
});
