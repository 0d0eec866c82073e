/**
 * The PostgreSQL read model (engine/db/postgres/read-model.ts) answers exactly what the SQLite one
 * answers for the same rows. One SQLite file holds the migration tests' rows (every status, node
 * states, timers, leases, dead letters, a deleted workflow: test/helpers/old-schema.ts) plus rows
 * for the translations that could differ — names and keys whose order or case differs bytewise
 * and by locale (`Zeta`, `alpha`, `Ärger`), `%` and `_` in searched text, many durations for the
 * percentiles, buckets of the series, a retrying node, an approval without a start time —; the
 * same rows (ids included) are copied into a fresh PostgreSQL database, and every read is asked
 * of both with many inputs.
 */
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCHEMA_VERSION } from '../../../engine/db/migrations/index';
import { migratePostgresAsync } from '../../../engine/db/postgres/migrations/index';
import { createPostgresReadModel } from '../../../engine/db/postgres/read-model';
import { openSqliteStorage, type SqliteStorage } from '../../../engine/db/sqlite-storage';
import type { FeedReads, InstanceFilter, ReadModel, ScheduleReads, TimeTravelReads } from '../../../engine/store/port';
import { createFileAtSchema } from '../../helpers/old-schema';
import { tempPostgres } from '../../helpers/postgres';
import { tempDir } from '../../helpers/temp-engine';

const TABLES = ['workflow', 'node', 'instance', 'node_state', 'schedule', 'history', 'dead_letter'] as const;
const NOW = 1_767_225_600_000; // 2026-01-01, fixed so both databases hold the very same numbers
const T0 = NOW - 3_600_000;

type Row = Record<string, string | number | null>;

function insert(db: Database.Database, table: string, row: Row): number {
  const cols = Object.keys(row);
  return Number(db.prepare(`INSERT INTO ${table} (${cols.join(', ')}) VALUES (${cols.map((c) => `@${c}`).join(', ')})`).run(row).lastInsertRowid);
}

/** The rows whose translation could differ between the backends (see the module doc). */
function addEdgeRows(db: Database.Database): void {
  const workflow = (name: string, version: number, createdAt: number, deletedAt: number | null = null) =>
    insert(db, 'workflow', { name, version, dsl_json: `{"name":${JSON.stringify(name)},"nodes":[{"id":"n","type":"pass"}],"edges":[]}`, definition_hash: `h-${name}-${version}`, created_at: createdAt, deleted_at: deletedAt });
  const wf: Record<string, number> = {};
  for (const [name, versions] of [['Zeta', 2], ['alpha', 3], ['Ärger', 1], ['b_x', 1], ['B', 1]] as const) {
    for (let v = 1; v <= versions; v++) wf[`${name}@${v}`] = workflow(name, v, T0 + v * 7);
  }
  for (const id of Object.values(wf)) {
    insert(db, 'node', { workflow_id: id, node_id: 'n', type: 'pass', name: id % 2 === 0 ? 'Step N' : null, retry_json: '{}', timeout_ms: null, scope_json: '{"input":null,"output":null}', on_failure: 'fail', incoming: 0 });
  }
  const instance = (workflowId: number, status: string, extra: Row = {}) =>
    insert(db, 'instance', {
      workflow_id: workflowId,
      status,
      variables_json: '{"k":1}',
      input_json: '',
      version: 2,
      created_at: T0,
      updated_at: T0 + 1,
      ...extra,
    });
  // Durations for the percentiles and the series: 40 completed, some failed and cancelled, in 3 buckets of 10 min.
  for (let k = 0; k < 40; k++) {
    const created = T0 + k * 61_000;
    instance(wf[k % 3 === 0 ? 'alpha@1' : k % 3 === 1 ? 'alpha@3' : 'Zeta@2']!, 'COMPLETED', { created_at: created, started_at: created + 1, ended_at: created + 100 + ((k * 7919) % 1000), end_status: null });
  }
  for (let k = 0; k < 6; k++) {
    instance(wf['Zeta@1']!, k % 2 === 0 ? 'FAILED' : 'CANCELLED', {
      created_at: T0 + k * 500_000,
      ended_at: T0 + k * 500_000 + 2_000,
      end_status: k % 2 === 0 ? 'FAILED' : 'CANCELLED',
      error_json: k % 2 === 0 ? JSON.stringify({ code: 'SCRIPT_ERROR', message: `Quota_Exceeded 100% of ${k}` }) : null,
    });
  }
  // Text search: case, `%` and `_` taken literally, non-ASCII letters (SQLite's LIKE folds ASCII only).
  for (const key of ['Order-100%', 'order_200', 'orderX200', 'ÄBC', 'äbc', 'ABC']) {
    instance(wf['B@1']!, 'RUNNING', { business_key: key, created_at: T0 + 5 });
  }
  // A retrying node, an approval without a start time, two approvals at the same time, a handled failure.
  const retrying = instance(wf['alpha@2']!, 'RUNNING');
  insert(db, 'node_state', { instance_id: retrying, node_id: 'n', status: 'RETRYING', attempt: 2, attempt_limit: 5, pending_in: 0, wait_json: JSON.stringify({ kind: 'retry', until: NOW + 5_000 }), started_at: NOW - 10 });
  insert(db, 'schedule', { instance_id: retrying, node_id: 'n', kind: 'run', next_run_at: NOW + 5_000, created_at: T0 });
  for (const [startedAt, key] of [[null, 'no-start'], [NOW - 50, 'same-a'], [NOW - 50, 'same-b']] as const) {
    const id = instance(wf['Ärger@1']!, 'WAITING', { business_key: key });
    insert(db, 'node_state', { instance_id: id, node_id: 'n', status: 'WAITING', attempt: 1, attempt_limit: 1, pending_in: 0, wait_json: JSON.stringify({ kind: 'approval', prompt: `ok ${key}?` }), started_at: startedAt });
  }
  const handled = instance(wf['b_x@1']!, 'RUNNING');
  insert(db, 'node_state', { instance_id: handled, node_id: 'n', status: 'FAILED', attempt: 1, attempt_limit: 1, pending_in: 0, error_json: '{"message":"x"}', wait_json: '{"kind":"handled"}', started_at: NOW - 5, ended_at: NOW - 4 });
  insert(db, 'node_state', { instance_id: handled, node_id: 'Ω', status: 'READY', attempt: 0, attempt_limit: 1, pending_in: 0 });
  insert(db, 'node_state', { instance_id: handled, node_id: 'Z', status: 'RUNNING', attempt: 1, attempt_limit: 1, pending_in: 0, started_at: NOW - 3 });
  for (let k = 0; k < 60; k++) insert(db, 'dead_letter', { instance_id: handled, node_id: 'n', kind: 'node', attempts: k, error_json: `{"n":${k}}`, created_at: NOW + k });
  for (let k = 0; k < 30; k++) insert(db, 'history', { instance_id: handled, node_id: k % 2 ? 'n' : null, type: 'node.started', at: NOW + k, attempt: k % 3 ? 1 : null, actor: k % 5 ? null : 'ann', data_json: k % 4 ? `{"k":${k}}` : null });
}

/** Copies every row of the SQLite file into the PostgreSQL database, ids included. */
async function copyRows(file: string, client: pg.Client): Promise<void> {
  const db = new Database(file, { readonly: true });
  try {
    for (const table of TABLES) {
      for (const row of db.prepare(`SELECT * FROM ${table}`).all() as Row[]) {
        const cols = Object.keys(row);
        const identity = 'id' in row ? 'OVERRIDING SYSTEM VALUE' : '';
        await client.query(`INSERT INTO ${table} (${cols.join(', ')}) ${identity} VALUES (${cols.map((_, i) => `$${i + 1}`).join(', ')})`, Object.values(row));
      }
    }
  } finally {
    db.close();
  }
}

let sqlite: SqliteStorage;
let postgres: Omit<ReadModel, FeedReads | TimeTravelReads | ScheduleReads>;
let sqliteRead: ReadModel;
const cleanups: (() => Promise<void> | void)[] = [];

beforeAll(async () => {
  const { dir, cleanup } = tempDir();
  cleanups.push(cleanup);
  const file = `${dir}/runnel.db`;
  createFileAtSchema(file, SCHEMA_VERSION, NOW);
  const raw = new Database(file);
  raw.pragma('foreign_keys = ON');
  raw.transaction(() => addEdgeRows(raw))();
  raw.close();
  // A linguistic collation, as production databases mostly have: bytewise order must be asked for.
  const database = await tempPostgres({ icuLocale: 'en-US' });
  cleanups.push(database.drop);
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  await migratePostgresAsync(client, database.url);
  await copyRows(file, client);
  await client.end();
  const pool = new pg.Pool({ connectionString: database.url, max: 4 });
  cleanups.push(() => pool.end());
  postgres = createPostgresReadModel(pool);
  sqlite = openSqliteStorage(file);
  cleanups.push(() => sqlite.close());
  sqliteRead = sqlite.read;
});

afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Asks both read models the same question; they must answer the same (values, types, order). */
async function same<K extends Exclude<keyof ReadModel, FeedReads | TimeTravelReads | ScheduleReads>>(method: K, ...args: Parameters<ReadModel[K]>): Promise<Awaited<ReturnType<ReadModel[K]>>> {
  const call = (m: Omit<ReadModel, FeedReads | TimeTravelReads | ScheduleReads>) => (m[method] as (...a: unknown[]) => Promise<unknown>)(...args);
  const [want, got] = await Promise.all([call(sqliteRead), call(postgres)]);
  expect(got, `${method}(${JSON.stringify(args)})`).toStrictEqual(want);
  // Key order too (what a CLI prints as JSON).
  expect(JSON.stringify(got), `${method}(${JSON.stringify(args)}) as JSON`).toBe(JSON.stringify(want));
  return want as Awaited<ReturnType<ReadModel[K]>>;
}

const FILTERS: InstanceFilter[] = [
  {},
  { limit: 1000 },
  { limit: 3 },
  { status: ['RUNNING'] },
  { status: ['COMPLETED', 'FAILED'], limit: 7 },
  { workflow: 'alpha' },
  { workflow: 'alpha', workflowVersion: 3 },
  { workflow: 'nope' },
  { createdFrom: T0 + 600_000, createdTo: T0 + 1_200_000 },
  { text: 'order' },
  { text: 'ORDER' },
  { text: '100%' },
  { text: 'order_2' },
  { text: '_' },
  { text: '%' },
  { text: 'äbc' },
  { text: 'ÄBC' },
  { text: 'abc' },
  { text: 'quota_exceeded' },
  { text: 'SCRIPT' },
  { text: '3' },
  { text: 'incident' },
  { text: "o'k" },
  { text: '\\' },
  { waitingFor: 'timer' },
  { waitingFor: 'approval' },
  { waitingFor: 'retry' },
  { waitingFor: 'person' },
  { node: 'n' },
  { node: 'x' },
  { node: 'y' },
  { node: 'Ω' },
  { ids: [] },
  { ids: [1, 2, 3, 50, 10_000] },
  { beforeId: 30 },
  { afterId: 40 },
  { afterId: 10, beforeId: 40, limit: 5 },
  { upToId: 12, status: ['WAITING', 'RUNNING'] },
];

describe('PostgreSQL read model: the same answers as SQLite', () => {
  it('lists, counts and matches instances under every kind of filter', async () => {
    const all = await same('listInstances', { limit: 1000 });
    expect(all.length).toBeGreaterThan(60);
    for (const f of FILTERS) {
      await same('listInstances', f);
      await same('countByStatus', f);
      await same('matchInstances', f, ['RUNNING', 'WAITING', 'SUSPENDED'], 5);
      await same('matchInstances', f, ['COMPLETED'], 1000);
    }
  });

  it('reads each instance with its nodes, its state and its history', async () => {
    const max = await same('maxInstanceId');
    for (let id = 0; id <= max + 1; id++) {
      await same('instance', id);
      await same('instanceState', id);
      await same('history', id, 0, 1000);
    }
    for (const [after, limit] of [[0, 1], [5, 3], [10_000, 10]] as const) await same('history', max, after, limit);
  });

  it('answers approvals, the oldest waiting, the queue and the workflows with work', async () => {
    for (const o of [{}, { limit: 1 }, { limit: 2 }, { workflow: 'Ärger' }, { workflow: 'ask' }, { workflow: 'none' }]) await same('approvals', o);
    expect((await same('approvals', {})).rows[0]?.since).toBeNull();
    await same('oldestWaiting');
    await same('nextDue');
    // The versions with work, found one at a time as an idle check does: the same set on both backends
    const withWork = async (m: Pick<ReadModel, 'workflowWithWork'>, now: number) => {
      const found: number[] = [];
      for (let id = await m.workflowWithWork(now, found); id !== undefined; id = await m.workflowWithWork(now, found)) found.push(id);
      return found.sort((a, b) => a - b);
    };
    for (const now of [0, NOW, NOW + 10_000_000]) expect(await withWork(postgres, now), `workflowWithWork at ${now}`).toEqual(await withWork(sqliteRead, now));
    expect((await withWork(sqliteRead, NOW + 10_000_000)).length).toBeGreaterThan(0);
  });

  it('gives the dashboard the same metrics and series', async () => {
    const m = await same('metrics');
    expect(m.deadLetters).toHaveLength(50);
    expect(m.durations.length).toBeGreaterThan(2);
    for (const [from, to, bucket] of [
      [T0, T0 + 3_600_000, 600_000],
      [T0 - 7, T0 + 3_600_000, 60_000],
      [T0 + 1, T0 + 7_200_000, 3_600_000],
      [0, NOW * 2, 1_000_000_000],
    ] as const) {
      await same('series', from, to, bucket);
      await same('series', from, to, bucket, 'alpha');
      await same('series', from, to, bucket, 'none');
    }
    expect((await same('series', T0, T0 + 3_600_000, 600_000)).some((r) => r.p50Ms !== null && r.p99Ms !== null)).toBe(true);
  });

  it('reads workflows: the list, versions by name, by number and by id (deleted ones by id only)', async () => {
    const list = await same('workflowSummaries');
    expect(list.map((w) => w.name)).toEqual([...list.map((w) => w.name)].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))));
    for (const name of ['alpha', 'Zeta', 'Ärger', 'retired', 'none']) {
      await same('workflowVersion', name);
      await same('workflowVersions', name);
      for (const v of [1, 2, 3, 4]) await same('workflowVersion', name, v);
    }
    for (let id = 0; id < 25; id++) await same('workflowById', id);
  });
});
