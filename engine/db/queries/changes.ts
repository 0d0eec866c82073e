/**
 * SQLite: the change feed (history read by id across instances) and its named consumers
 * (`change_consumer`, migration 9).
 *
 * Cursor safety: SQLite has one writer at a time (BEGIN IMMEDIATE), and a history id is assigned
 * inside that writer's transaction, so ids increase in commit order and every id at or below the
 * highest committed one is final. The safe head is therefore the highest history id ever handed
 * out, which `sqlite_sequence` keeps (history is AUTOINCREMENT since migration 10): it stays put
 * when retention deletes the newest rows, and no later row takes an id at or below it.
 */
import type Database from 'better-sqlite3';
import type { ChangeConsumer, ChangeEntry } from '../../api/contract';
import type { ChangePage, ConsumerQueries, ReadModel } from '../../store/port';

/** A feed row as stored, with its workflow (its instance's, or a schedule entry's). */
export interface ChangeRow {
  id: number;
  instance_id: number | null;
  workflow: string | null;
  workflow_version: number | null;
  node_id: string | null;
  type: string;
  at: number;
  attempt: number | null;
  actor: string | null;
  data_json: string | null;
}

/** A consumer row as stored. */
export interface ConsumerRow {
  name: string;
  cursor: number;
  created_at: number;
  updated_at: number;
}

/** The API shape of a feed row (shared with PostgreSQL's read). */
export function toChangeEntry(r: ChangeRow): ChangeEntry {
  const e: ChangeEntry = {
    cursor: r.id,
    instanceId: r.instance_id,
    workflow: r.workflow,
    workflowVersion: r.workflow_version,
    nodeId: r.node_id,
    type: r.type,
    at: r.at,
    attempt: r.attempt,
    actor: r.actor,
  };
  if (r.data_json !== null) e.data = JSON.parse(r.data_json);
  return e;
}

/** The API shape of a consumer row (shared with PostgreSQL's). */
export function toChangeConsumer(r: ConsumerRow): ChangeConsumer {
  return { name: r.name, cursor: r.cursor, createdAt: r.created_at, updatedAt: r.updated_at };
}

/**
 * The page a read answers: `rows` read with id in (after, head], at most `limit`. A full page
 * resumes after its last row; a short one has seen everything up to the head.
 */
export function toChangePage(rows: ChangeRow[], o: { after: number; limit: number }, head: number): ChangePage {
  const last = rows[rows.length - 1];
  const cursor = rows.length === o.limit && last !== undefined ? last.id : Math.max(o.after, head);
  return { entries: rows.map(toChangeEntry), cursor, head: Math.max(o.after, head) };
}

/**
 * The feed's head on SQLite: the highest history id ever handed out (0: none yet). Not
 * `max(history.id)`, which falls back when the newest rows are deleted.
 */
export const SQLITE_HEAD = `SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'history'), 0), coalesce((SELECT max(id) FROM history), 0)) AS head`;

/**
 * A feed row's workflow: its instance's, or for a schedule's entry (`schedule.skipped`,
 * `schedule.paused`, `schedule.resumed`: no instance) the one its data names, so that a reader
 * following one workflow sees its schedule's skipped due times too. `dataWorkflow` is the
 * dialect's read of `data_json`'s `workflow` member.
 */
function workflowOfRow(dataWorkflow: string): string {
  return `coalesce(w.name, CASE WHEN h.instance_id IS NULL AND h.type LIKE 'schedule.%' THEN ${dataWorkflow} END)`;
}

/**
 * The SELECT list and joins of a feed read, and the expression its workflow filter compares
 * (`workflow`), in each backend's dialect.
 */
export const CHANGE_SELECT = {
  sqlite: changeSelect(workflowOfRow(`CASE WHEN json_valid(h.data_json) THEN json_extract(h.data_json, '$.workflow') END`)),
  postgres: changeSelect(workflowOfRow(`(h.data_json::json ->> 'workflow')`)),
};

function changeSelect(workflow: string): { columns: string; workflow: string } {
  return {
    columns: `h.id, h.instance_id, ${workflow} AS workflow, w.version AS workflow_version, h.node_id, h.type, h.at, h.attempt, h.actor, h.data_json
  FROM history h LEFT JOIN instance i ON i.id = h.instance_id LEFT JOIN workflow w ON w.id = i.workflow_id`,
    workflow,
  };
}

/** The feed's reads over `db` (part of the read model). */
export function createChangeReads(db: Database.Database): Pick<ReadModel, 'changes' | 'changeConsumers'> {
  const head = db.prepare<[], { head: number }>(SQLITE_HEAD);
  const { columns, workflow } = CHANGE_SELECT.sqlite;
  const page = db.prepare<[number, number, number], ChangeRow>(`SELECT ${columns} WHERE h.id > ? AND h.id <= ? ORDER BY h.id LIMIT ?`);
  const pageOf = db.prepare<[number, number, string, number], ChangeRow>(
    `SELECT ${columns} WHERE h.id > ? AND h.id <= ? AND ${workflow} = ? ORDER BY h.id LIMIT ?`,
  );
  const consumers = db.prepare<[], ConsumerRow>('SELECT name, cursor, created_at, updated_at FROM change_consumer ORDER BY name');
  // One read transaction: the head and the rows come from the same snapshot.
  const read = db.transaction((o: { after: number; limit: number; workflow?: string }): ChangePage => {
    const h = head.get()?.head ?? 0;
    const rows = o.workflow === undefined ? page.all(o.after, h, o.limit) : pageOf.all(o.after, h, o.workflow, o.limit);
    return toChangePage(rows, o, h);
  });
  return {
    changes: async (o) => read.deferred(o),
    changeConsumers: async () => consumers.all().map(toChangeConsumer),
  };
}

/** {@link ConsumerQueries} over `db`, for write transactions. */
export function createConsumerQueries(db: Database.Database): ConsumerQueries {
  const get = db.prepare<[string], ConsumerRow>('SELECT name, cursor, created_at, updated_at FROM change_consumer WHERE name = ?');
  const ack = db.prepare<[{ name: string; cursor: number; now: number }], ConsumerRow>(
    `INSERT INTO change_consumer (name, cursor, created_at, updated_at) VALUES (@name, @cursor, @now, @now)
     ON CONFLICT (name) DO UPDATE SET cursor = max(cursor, excluded.cursor), updated_at = excluded.updated_at
     RETURNING name, cursor, created_at, updated_at`,
  );
  const remove = db.prepare<[string]>('DELETE FROM change_consumer WHERE name = ?');
  const lowest = db.prepare<[], { lowest: number | null }>('SELECT min(cursor) AS lowest FROM change_consumer');
  const head = db.prepare<[], { head: number }>(SQLITE_HEAD);
  return {
    get: (name) => {
      const r = get.get(name);
      return r === undefined ? undefined : toChangeConsumer(r);
    },
    ack: ({ name, cursor, now }) => toChangeConsumer(ack.get({ name, cursor, now }) as ConsumerRow),
    remove: (name) => remove.run(name).changes > 0,
    lowestConsumerCursor: () => lowest.get()?.lowest ?? undefined,
    head: () => head.get()?.head ?? 0,
  };
}
