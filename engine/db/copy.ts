/**
 * `runnel copy`: moves a whole Runnel database between backends (a SQLite file and PostgreSQL,
 * either way, or file to file) losslessly: every row of every table with its id, so instance ids,
 * history ids (the change feed's cursor), versions and leases mean the same in the copy.
 *
 * The procedure:
 * 1. Both sides are opened at this build's schema (created and migrated when new). The target must
 *    hold no workflow and no instance (CONFLICT otherwise: a copy never merges).
 * 2. The source is held still for the whole copy: SQLite takes its write lock (BEGIN IMMEDIATE),
 *    PostgreSQL locks the tables against writes (LOCK TABLE … IN EXCLUSIVE MODE, reads still go
 *    on) inside one REPEATABLE READ transaction. Workers on it wait meanwhile, or give up with
 *    DATABASE_BUSY and retry — but a source whose leases are live (a worker is running steps, or
 *    one stopped less than a lease ago) is refused at once with DATABASE_BUSY: stop its workers
 *    first, as the issue asks ("refusing while workers run on the source").
 * 3. Tables are copied parent first (workflow, node, instance, node_state, schedule, history,
 *    dead_letter, change_consumer) in primary-key order, in pages of {@link PAGE_ROWS}, inside one transaction on
 *    the target, so a copy that fails leaves the target as it was. Identity sequences on
 *    PostgreSQL are moved past the copied ids; history's, on either side, past the source's feed
 *    head (the highest history id it ever handed out, which is above the copied rows when
 *    retention deleted the newest ones), so the copy never hands a change feed cursor out twice.
 * 4. Row counts per table are compared; a difference is an INTERNAL error (nothing is committed).
 *
 * Both schemas must have the same columns per table (they do at the same build: the PostgreSQL
 * migrations translate SQLite's, engine/db/postgres/migrations/); a difference is refused.
 */
import pg from 'pg';
import { EngineError } from '../errors';
import { clientConfig } from './postgres/connection';
import { isPostgresUrl, postgresError, redactUrl } from './postgres/errors';
import { migratePostgresAsync } from './postgres/migrations/index';
import { openDatabase, probeDatabase, type RunnelDb } from './open-database';
import { POSTGRES_HEAD } from './postgres/changes';
import { SQLITE_HEAD } from './queries/changes';

/** Rows read and written per statement. */
export const PAGE_ROWS = 500;

/** The tables copied, parents first, each with its primary key columns and whether its id is an identity. */
export const COPIED_TABLES: readonly { name: string; key: readonly string[]; identity: boolean }[] = [
  { name: 'workflow', key: ['id'], identity: true },
  { name: 'node', key: ['workflow_id', 'node_id'], identity: false },
  { name: 'instance', key: ['id'], identity: true },
  { name: 'node_state', key: ['instance_id', 'node_id'], identity: false },
  { name: 'child', key: ['instance_id', 'node_id', 'attempt', 'item_index'], identity: false },
  { name: 'event', key: ['id'], identity: true },
  { name: 'schedule', key: ['id'], identity: true },
  { name: 'history', key: ['id'], identity: true },
  { name: 'dead_letter', key: ['id'], identity: true },
  { name: 'change_consumer', key: ['name'], identity: false },
  { name: 'history_state', key: ['history_id'], identity: false },
  { name: 'workflow_schedule', key: ['workflow_name', 'schedule_id'], identity: false },
];

/** Key columns holding text (the others are integers). */
const TEXT_KEYS: ReadonlySet<string> = new Set(['node_id', 'name', 'workflow_name', 'schedule_id']);

type Row = Record<string, unknown>;

/** One side of a copy: a database opened at this build's schema. */
interface Side {
  readonly location: string;
  columns(table: string): Promise<string[]>;
  count(table: string): Promise<number>;
  /** Rows after `after` (the key values of the last row read) in key order, at most `limit`. */
  page(table: string, key: readonly string[], columns: readonly string[], after: unknown[] | undefined, limit: number): Promise<Row[]>;
  insert(table: string, columns: readonly string[], rows: readonly Row[], identity: boolean): Promise<void>;
  /** Schedule rows whose lease is unexpired at `now` (epoch ms), and the latest expiry. */
  liveLeases(now: number): Promise<{ count: number; until: number | null }>;
  /** Holds the database still for reading (source) or opens the write transaction (target). */
  begin(role: 'source' | 'target'): Promise<void>;
  /**
   * The highest ids ever handed out: history's (the change feed's head, engine/db/queries/changes.ts)
   * and the instances' (deleted ones included: SQLite's id_floor, PostgreSQL's sequence).
   */
  heads(): Promise<Heads>;
  /** Target only: moves identity sequences past the copied ids, and history's and the instances' past `heads` too. */
  finishIdentities(tables: readonly string[], heads: Heads): Promise<void>;
  commit(): Promise<void>;
  rollback(): Promise<void>;
  close(): Promise<void>;
}

/** The highest ids ever handed out of the tables whose ids outlive their rows (see {@link Side.heads}). */
interface Heads {
  history: number;
  instance: number;
}

/** SQLite: the highest instance id ever handed out (the rows', and the deleted ones': migration 14). */
const SQLITE_INSTANCE_HEAD = `SELECT max(coalesce((SELECT max(id) FROM instance), 0), coalesce((SELECT id FROM id_floor WHERE name = 'instance'), 0)) AS head`;

/** PostgreSQL: the highest instance id its identity sequence handed out (or the rows', if higher). */
const POSTGRES_INSTANCE_HEAD = `SELECT greatest(
    coalesce(pg_sequence_last_value(pg_get_serial_sequence('instance', 'id')::regclass), 0),
    coalesce((SELECT max(id) FROM instance), 0))::int8 AS head`;

const quoteId = (name: string): string => `"${name.replace(/"/g, '""')}"`;

function sqliteSide(file: string, create: boolean): Side {
  probeDatabase(file, { mustExist: !create });
  const db: RunnelDb = openDatabase(file);
  const raw = db.raw;
  let inTx = false;
  return {
    location: db.file,
    columns: async (table) => (raw.prepare(`PRAGMA table_info(${quoteId(table)})`).all() as { name: string }[]).map((c) => c.name),
    count: async (table) => (raw.prepare(`SELECT count(*) AS n FROM ${quoteId(table)}`).get() as { n: number }).n,
    page: async (table, key, columns, after, limit) => {
      const keys = key.map(quoteId).join(', ');
      const where = after ? `WHERE (${keys}) > (${key.map(() => '?').join(', ')})` : '';
      return raw.prepare(`SELECT ${columns.map(quoteId).join(', ')} FROM ${quoteId(table)} ${where} ORDER BY ${keys} LIMIT ?`).all(...(after ?? []), limit) as Row[];
    },
    insert: async (table, columns, rows) => {
      const stmt = raw.prepare(`INSERT INTO ${quoteId(table)} (${columns.map(quoteId).join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`);
      for (const row of rows) stmt.run(...columns.map((c) => row[c] ?? null));
    },
    liveLeases: async (now) => {
      const r = raw.prepare(`SELECT count(*) AS n, max(lease_expires_at) AS until FROM schedule WHERE lease_owner IS NOT NULL AND lease_expires_at > ?`).get(now) as { n: number; until: number | null };
      return { count: r.n, until: r.until };
    },
    begin: async () => {
      // The write lock: nothing changes the file while it is read, and a failed copy into it leaves nothing.
      raw.exec('BEGIN IMMEDIATE');
      inTx = true;
    },
    heads: async () => ({
      history: (raw.prepare(SQLITE_HEAD).get() as { head: number }).head,
      instance: (raw.prepare(SQLITE_INSTANCE_HEAD).get() as { head: number }).head,
    }),
    // Inserting ids moved every AUTOINCREMENT sequence past them already; history's goes on to the
    // head, and the instances' floor to theirs.
    finishIdentities: async (_tables, heads) => {
      if (raw.prepare(`UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = 'history'`).run(heads.history).changes === 0) {
        raw.prepare(`INSERT INTO sqlite_sequence (name, seq) VALUES ('history', ?)`).run(heads.history);
      }
      raw.prepare(`UPDATE id_floor SET id = max(id, ?) WHERE name = 'instance'`).run(heads.instance);
    },
    commit: async () => {
      if (inTx) raw.exec('COMMIT');
      inTx = false;
    },
    rollback: async () => {
      if (inTx && raw.inTransaction) raw.exec('ROLLBACK');
      inTx = false;
    },
    close: async () => {
      if (inTx && raw.inTransaction) raw.exec('ROLLBACK');
      db.close();
    },
  };
}

async function postgresSide(url: string): Promise<Side> {
  const location = redactUrl(url);
  const client = new pg.Client(clientConfig(url));
  const typed = (err: unknown): unknown => postgresError(err, url) ?? err;
  try {
    await client.connect();
    await migratePostgresAsync(client, location);
  } catch (err) {
    await client.end().catch(() => undefined);
    throw typed(err);
  }
  const q = async (sql: string, params: unknown[] = []): Promise<Row[]> => {
    try {
      return (await client.query(sql, params)).rows as Row[];
    } catch (err) {
      throw typed(err);
    }
  };
  return {
    location,
    columns: async (table) =>
      (await q(`SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`, [table])).map(
        (r) => String(r.column_name),
      ),
    count: async (table) => Number((await q(`SELECT count(*)::int8 AS n FROM ${quoteId(table)}`))[0]?.n ?? 0),
    page: async (table, key, columns, after, limit) => {
      // Text keys in bytewise order, whatever the database's collation (SQLite's BINARY order).
      const keys = key.map((k) => (TEXT_KEYS.has(k) ? `${quoteId(k)} COLLATE "C"` : quoteId(k)));
      const params: unknown[] = [...(after ?? []), limit];
      const where = after ? `WHERE (${keys.join(', ')}) > (${key.map((_, i) => `$${i + 1}`).join(', ')})` : '';
      return q(`SELECT ${columns.map(quoteId).join(', ')} FROM ${quoteId(table)} ${where} ORDER BY ${keys.join(', ')} LIMIT $${params.length}`, params);
    },
    insert: async (table, columns, rows, identity) => {
      if (rows.length === 0) return;
      const params: unknown[] = [];
      const values = rows.map((row) => `(${columns.map((c) => (params.push(row[c] ?? null), `$${params.length}`)).join(', ')})`);
      await q(
        `INSERT INTO ${quoteId(table)} (${columns.map(quoteId).join(', ')}) ${identity ? 'OVERRIDING SYSTEM VALUE ' : ''}VALUES ${values.join(', ')}`,
        params,
      );
    },
    liveLeases: async (now) => {
      const r = (await q(`SELECT count(*)::int8 AS n, max(lease_expires_at) AS until FROM schedule WHERE lease_owner IS NOT NULL AND lease_expires_at > $1`, [now]))[0];
      return { count: Number(r?.n ?? 0), until: r?.until == null ? null : Number(r.until) };
    },
    begin: async (role) => {
      if (role === 'source') {
        await q('BEGIN ISOLATION LEVEL REPEATABLE READ');
        // Writers wait (readers do not) until the copy ends: the snapshot is the whole database.
        await q(`LOCK TABLE ${COPIED_TABLES.map((t) => quoteId(t.name)).join(', ')} IN EXCLUSIVE MODE`);
      } else await q('BEGIN');
    },
    heads: async () => ({
      history: Number((await q(POSTGRES_HEAD))[0]?.head ?? 0),
      instance: Number((await q(POSTGRES_INSTANCE_HEAD))[0]?.head ?? 0),
    }),
    finishIdentities: async (tables, heads) => {
      for (const t of tables) {
        const floor = t === 'history' ? heads.history : t === 'instance' ? heads.instance : 0;
        // Called at the highest id (the next is one above), so the feed's head reads it at once.
        await q(
          `SELECT setval(pg_get_serial_sequence($1, 'id'), greatest(m, 1), m > 0)
             FROM (SELECT greatest(coalesce((SELECT max(id) FROM ${quoteId(t)}), 0), $2::int8) AS m) x`,
          [t, floor],
        );
      }
    },
    commit: async () => void (await q('COMMIT')),
    rollback: async () => void (await q('ROLLBACK').catch(() => undefined)),
    close: async () => {
      await client.end().catch(() => undefined);
    },
  };
}

/** Opens a location: a PostgreSQL URL or a SQLite file (created only for a target). */
async function openSide(location: string, role: 'source' | 'target'): Promise<Side> {
  return isPostgresUrl(location) ? postgresSide(location) : sqliteSide(location, role === 'target');
}

/** What {@link copyDatabase} did. */
export interface CopyResult {
  /** Where from and where to (URLs without their password). */
  from: string;
  to: string;
  /** Rows copied per table. */
  rows: Record<string, number>;
  elapsedMs: number;
}

/** Options of {@link copyDatabase}. */
export interface CopyOptions {
  /** Progress after each page: table, rows copied of it so far, its total. */
  progress?: (table: string, done: number, total: number) => void;
  /** Now, epoch ms (tests); default the wall clock. */
  now?: () => number;
}

/**
 * Copies every row of the database at `from` into the empty database at `to` (see the module
 * doc). Each is a SQLite file path or a `postgres://` / `postgresql://` URL.
 *
 * @throws EngineError NOT_FOUND (no source file or database), CONFLICT (the target holds workflows
 * or instances, or is the source), DATABASE_BUSY (the source's leases are live: workers run on
 * it), DATABASE_UNAVAILABLE / DATABASE_NEWER / DATABASE_CORRUPT as opening either side does,
 * INTERNAL (the two schemas differ, or the counts after copying do).
 */
export async function copyDatabase(from: string, to: string, options: CopyOptions = {}): Promise<CopyResult> {
  const t0 = Date.now();
  const now = options.now ?? Date.now;
  if (from === to) throw new EngineError('CONFLICT', 'copy: the source and the target are the same database', { details: { from, to } });
  const source = await openSide(from, 'source');
  let target: Side | undefined;
  try {
    target = await openSide(to, 'target');
    if (source.location === target.location) throw new EngineError('CONFLICT', `copy: the source and the target are the same database (${source.location})`);
    const held = (await target.count('workflow')) + (await target.count('instance'));
    if (held > 0) {
      throw new EngineError('CONFLICT', `copy: ${target.location} is not empty (it holds workflows or instances); copy into a new database`, {
        details: { to: target.location },
      });
    }
    const columns = new Map<string, string[]>();
    for (const t of COPIED_TABLES) {
      const a = await source.columns(t.name);
      const b = await target.columns(t.name);
      if (a.slice().sort().join(',') !== b.slice().sort().join(',')) {
        throw new EngineError('INTERNAL', `copy: table ${t.name} differs between the two schemas (${a.join(', ')} / ${b.join(', ')})`);
      }
      columns.set(t.name, a);
    }
    await source.begin('source');
    const leases = await source.liveLeases(now());
    if (leases.count > 0) {
      const until = leases.until === null ? '' : ` until ${new Date(leases.until).toISOString()}`;
      throw new EngineError(
        'DATABASE_BUSY',
        `copy: ${source.location} has ${leases.count} step(s) leased to a worker${until}: stop the workers on it (a worker stopped with Ctrl-C hands its leases back), then copy`,
        { details: { from: source.location, leases: leases.count } },
      );
    }
    await target.begin('target');
    const rows: Record<string, number> = {};
    for (const t of COPIED_TABLES) {
      const cols = columns.get(t.name) ?? [];
      const total = await source.count(t.name);
      let done = 0;
      let after: unknown[] | undefined;
      for (;;) {
        const page = await source.page(t.name, t.key, cols, after, PAGE_ROWS);
        if (page.length === 0) break;
        await target.insert(t.name, cols, page, t.identity);
        done += page.length;
        const last = page[page.length - 1] as Row;
        after = t.key.map((k) => last[k]);
        options.progress?.(t.name, done, total);
        if (page.length < PAGE_ROWS) break;
      }
      rows[t.name] = done;
    }
    await target.finishIdentities(
      COPIED_TABLES.filter((t) => t.identity).map((t) => t.name),
      await source.heads(),
    );
    for (const t of COPIED_TABLES) {
      const [a, b] = [await source.count(t.name), await target.count(t.name)];
      if (a !== b || a !== rows[t.name]) throw new EngineError('INTERNAL', `copy: table ${t.name} has ${a} rows in the source and ${b} in the copy; nothing was kept`);
    }
    await target.commit();
    await source.rollback();
    return { from: source.location, to: target.location, rows, elapsedMs: Date.now() - t0 };
  } catch (err) {
    await target?.rollback();
    await source.rollback();
    throw err;
  } finally {
    await target?.close();
    await source.close();
  }
}
