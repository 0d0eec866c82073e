/**
 * SQLite: instance and history queries ({@link InstanceQueries}, {@link HistoryQueries}),
 * prepared once per connection.
 *
 * Encoding kept here and nowhere else: `instance.input_json` is `''` while the variables are still
 * the start variables (stored once, not twice: most of an instance row's bytes); the first change
 * of the variables copies them there. `''` is not valid JSON, so it cannot be a real input.
 * Readers resolve it ({@link START_INPUT_SQL}).
 */
import type Database from 'better-sqlite3';
import type { SerializedError } from '../../errors';
import type { InstanceStatus } from '../../vocabulary';
import type { HistoryQueries, InstanceHead, InstanceQueries, InstanceRow, Pins, Suspension } from '../../store/queries';
import { parseStored } from './stored-json';

/** The start variables of `i` as SQL: `input_json`, or the variables while it is `''` (see the module doc). */
export const START_INPUT_SQL = `CASE WHEN i.input_json = '' THEN i.variables_json ELSE i.input_json END`;

/** An `instance` row as both backends select it for `get` (columns aliased to these names). */
export interface RawInstance {
  id: number;
  workflowId: number;
  status: InstanceStatus;
  variablesJson: string;
  version: number;
  suspensionJson: string | null;
  endStatus: 'FAILED' | 'CANCELLED' | null;
  startedAt: number | null;
  deadlineAt: number | null;
  errorJson: string | null;
  parentId: number | null;
  pausedAt: number | null;
  concurrencyKey: string | null;
  /** `instance.test`: 1 for a test run, else 0 (an INTEGER on both backends). */
  test: number;
  pinsJson: string | null;
}

/** An {@link InstanceHead} as both backends select it: `test` is the column's 0 or 1. */
export type RawHead = Omit<InstanceHead, 'test'> & { test: number };

/** A selected head, `test` as a boolean. */
export function toInstanceHead(r: RawHead): InstanceHead {
  return { id: r.id, status: r.status, deadlineAt: r.deadlineAt, parentId: r.parentId, pausedAt: r.pausedAt, concurrencyKey: r.concurrencyKey, test: r.test === 1 };
}

/** A selected instance row as the state machine reads it, its JSON parsed (engine/db/queries/stored-json.ts). */
export function toInstanceRow(r: RawInstance): InstanceRow {
  const id = r.id;
  return {
    id,
    workflowId: r.workflowId,
    status: r.status,
    variables: parseStored<Record<string, unknown>>(r.variablesJson, id, 'variables_json'),
    version: r.version,
    suspension: r.suspensionJson === null ? null : parseStored<Suspension>(r.suspensionJson, id, 'suspension_json'),
    endStatus: r.endStatus,
    startedAt: r.startedAt,
    deadlineAt: r.deadlineAt,
    error: r.errorJson === null ? null : parseStored<SerializedError>(r.errorJson, id, 'error_json'),
    parentId: r.parentId,
    pausedAt: r.pausedAt,
    concurrencyKey: r.concurrencyKey,
    test: r.test === 1,
    pins: r.pinsJson === null ? null : parseStored<Pins>(r.pinsJson, id, 'pins_json'),
  };
}

/** Prepares {@link InstanceQueries} on `db`. */
export function createInstanceQueries(db: Database.Database): InstanceQueries {
  const insert = db.prepare<[number, string, string, number, number | null, number, number | null, string | null, number | null, string | null, string | null, number, number | null, number | null, number | null, number | null, string | null]>(
    // The id: above every row there and every id deleted (id_floor, migration 14): never one handed out before.
    `INSERT INTO instance (id, workflow_id, status, variables_json, input_json, created_at, started_at, updated_at, deadline_at, business_key, parent_id, parent_node_id,
                           concurrency_key, held, priority, test, pins_json)
     VALUES (max(coalesce((SELECT max(id) FROM instance), 0), coalesce((SELECT id FROM id_floor WHERE name = 'instance'), 0)) + 1,
             ?, ?, ?, '', ?, ?, ?, ?, ?, ?, ?, ?, ?, coalesce(?, (SELECT p.priority FROM instance p WHERE p.id = ?), 0),
             coalesce(?, (SELECT p.test FROM instance p WHERE p.id = ?), 0), ?)`,
  );
  const get = db.prepare<[number], RawInstance>(
    `SELECT id, workflow_id AS workflowId, status, variables_json AS variablesJson, version, suspension_json AS suspensionJson,
            end_status AS endStatus, started_at AS startedAt, deadline_at AS deadlineAt, error_json AS errorJson,
            parent_id AS parentId, paused_at AS pausedAt, concurrency_key AS concurrencyKey, test, pins_json AS pinsJson
       FROM instance WHERE id = ?`,
  );
  const head = db.prepare<[number], RawHead>(
    `SELECT id, status, deadline_at AS deadlineAt, parent_id AS parentId, paused_at AS pausedAt, concurrency_key AS concurrencyKey, test FROM instance WHERE id = ?`,
  );
  const variables = db.prepare<[number], { v: string; status: InstanceStatus; pausedAt: number | null; test: number; pinsJson: string | null }>(
    `SELECT status, paused_at AS pausedAt, test, variables_json AS v, pins_json AS pinsJson FROM instance WHERE id = ?`,
  );
  const pause = db.prepare<[number, number, number]>(`UPDATE instance SET paused_at = ?, updated_at = ?, version = version + 1 WHERE id = ?`);
  const unpause = db.prepare<[{ now: number; id: number }]>(
    `UPDATE instance SET deadline_at = deadline_at + (@now - paused_at), paused_at = NULL, updated_at = @now, version = version + 1
      WHERE id = @id AND paused_at IS NOT NULL`,
  );
  const touch = db.prepare<[string, number, number, number]>(
    `UPDATE instance SET status = ?, started_at = coalesce(started_at, ?), updated_at = ?, version = version + 1 WHERE id = ?`,
  );
  const setVariables = db.prepare<[string, number, number]>(
    `UPDATE instance SET input_json = CASE WHEN input_json = '' THEN variables_json ELSE input_json END,
            variables_json = ?, updated_at = ?, version = version + 1 WHERE id = ?`,
  );
  const setStatus = db.prepare<[string, number, number]>(`UPDATE instance SET status = ?, updated_at = ?, version = version + 1 WHERE id = ?`);
  const end = db.prepare<[string, string | null, number, number, number]>(
    `UPDATE instance SET status = ?, error_json = coalesce(?, error_json), ended_at = ?, updated_at = ?,
            suspension_json = NULL, paused_at = NULL, version = version + 1 WHERE id = ?`,
  );
  const suspend = db.prepare<[string, number, number]>(
    `UPDATE instance SET status = 'SUSPENDED',
            suspension_json = CASE WHEN status = 'SUSPENDED' AND suspension_json IS NOT NULL THEN suspension_json ELSE ? END,
            updated_at = ?, version = version + 1 WHERE id = ?`,
  );
  const startCompensating = db.prepare<[string, string | null, number, number]>(
    `UPDATE instance SET status = 'COMPENSATING', end_status = ?, error_json = coalesce(?, error_json),
            suspension_json = NULL, updated_at = ?, version = version + 1 WHERE id = ?`,
  );
  const clearSuspension = db.prepare<[string, number, number]>(
    `UPDATE instance SET status = ?, suspension_json = NULL, updated_at = ?, version = version + 1 WHERE id = ?`,
  );
  const reopen = db.prepare<[number | null, number, number]>(
    `UPDATE instance SET status = 'RUNNING', ended_at = NULL, error_json = NULL, end_status = NULL, deadline_at = ?,
            updated_at = ?, version = version + 1 WHERE id = ?`,
  );
  const countAdmitted = db.prepare<[string], { n: number }>(
    `SELECT count(*) AS n FROM instance WHERE concurrency_key = ? AND held = 0 AND status NOT IN ('COMPLETED', 'FAILED', 'CANCELLED')`,
  );
  const oldestHeld = db.prepare<[string], { id: number; workflowId: number; pausedAt: number | null; test: number }>(
    `SELECT id, workflow_id AS workflowId, paused_at AS pausedAt, test FROM instance
      WHERE concurrency_key = ? AND held = 1 AND status NOT IN ('COMPLETED', 'FAILED', 'CANCELLED') ORDER BY priority DESC, id LIMIT 1`,
  );
  const admit = db.prepare<[number, number]>(`UPDATE instance SET held = 0, updated_at = ?, version = version + 1 WHERE id = ?`);
  const hold = db.prepare<[number, number]>(`UPDATE instance SET held = 1, status = 'PENDING', updated_at = ?, version = version + 1 WHERE id = ?`);
  const json = (v: unknown): string | null => (v === undefined ? null : JSON.stringify(v));

  return {
    insert: ({ workflowId, status, variablesJson, now, deadlineAt, businessKey, parentId, parentNodeId, concurrencyKey, held, priority, test, pinsJson }) =>
      Number(
        insert.run(
          workflowId, status, variablesJson, now, status === 'RUNNING' ? now : null, now, deadlineAt, businessKey,
          parentId ?? null, parentNodeId ?? null, concurrencyKey ?? null, held === true ? 1 : 0, priority ?? null, parentId ?? null,
          test === undefined ? null : test ? 1 : 0, parentId ?? null, pinsJson ?? null,
        ).lastInsertRowid,
      ),
    // SQLite's writers take turns (BEGIN IMMEDIATE): a count inside the transaction is exact already.
    lockConcurrency: () => undefined,
    countAdmitted: (key) => countAdmitted.get(key)?.n ?? 0,
    oldestHeld: (key) => {
      const r = oldestHeld.get(key);
      return r === undefined ? undefined : { id: r.id, workflowId: r.workflowId, pausedAt: r.pausedAt, test: r.test === 1 };
    },
    admit: ({ id, now }) => void admit.run(now, id),
    hold: ({ id, now }) => void hold.run(now, id),
    get: (id): InstanceRow | undefined => {
      const r = get.get(id);
      if (r === undefined) return undefined;
      return toInstanceRow(r);
    },
    head: (id) => {
      const r = head.get(id);
      return r === undefined ? undefined : toInstanceHead(r);
    },
    variables: (id) => {
      const r = variables.get(id);
      if (r === undefined) return undefined;
      const pins = r.pinsJson === null ? null : parseStored<Pins>(r.pinsJson, id, 'pins_json');
      return { status: r.status, pausedAt: r.pausedAt, test: r.test === 1, variables: parseStored<Record<string, unknown>>(r.v, id, 'variables_json'), pins };
    },
    pause: ({ id, now }) => void pause.run(now, now, id),
    unpause: ({ id, now }) => void unpause.run({ now, id }),
    touch: ({ id, status, now }) => void touch.run(status, now, now, id),
    setVariables: ({ id, variables: vars, now }) => void setVariables.run(JSON.stringify(vars), now, id),
    mergeVariables: ({ id, patch, now }) => {
      const cur = variables.get(id);
      if (!cur) return;
      setVariables.run(JSON.stringify({ ...parseStored<Record<string, unknown>>(cur.v, id, 'variables_json'), ...patch }), now, id);
    },
    setStatus: ({ id, status, now }) => void setStatus.run(status, now, id),
    end: ({ id, status, error, now }) => void end.run(status, json(error), now, now, id),
    suspend: ({ id, suspension, now }) => void suspend.run(JSON.stringify(suspension), now, id),
    startCompensating: ({ id, endStatus, error, now }) => void startCompensating.run(endStatus, json(error), now, id),
    clearSuspension: ({ id, status, now }) => void clearSuspension.run(status, now, id),
    reopen: ({ id, deadlineAt, now }) => void reopen.run(deadlineAt, now, id),
  };
}

/** Prepares {@link HistoryQueries} on `db`. */
export function createHistoryQueries(db: Database.Database): HistoryQueries {
  const append = db.prepare<[number | null, string | null, string, number, number | null, string | null, string | null]>(
    `INSERT INTO history (instance_id, node_id, type, at, attempt, actor, data_json) VALUES (?, ?, ?, ?, ?, ?, ?)`,
  );
  const deadLetter = db.prepare<[number, string | null, string, number, string, number]>(
    `INSERT INTO dead_letter (instance_id, node_id, kind, attempts, error_json, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
  );
  return {
    append: ({ instanceId, nodeId, type, at, attempt, actor, data }) =>
      Number(append.run(instanceId, nodeId, type, at, attempt ?? null, actor ?? null, data === undefined ? null : JSON.stringify(data)).lastInsertRowid),
    deadLetter: ({ instanceId, nodeId, kind, attempts, error, now }) => void deadLetter.run(instanceId, nodeId, kind, attempts, JSON.stringify(error), now),
  };
}
