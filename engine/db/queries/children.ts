/**
 * SQLite: the children of `subworkflow` and `map` node attempts ({@link ChildQueries}) and the
 * events sent to instances ({@link EventQueries}), prepared once per connection.
 *
 * A child's start variables stay in `child.input_json` only until it starts (then the child
 * instance keeps them), so a map of 10,000 items holds its items once, not twice.
 */
import type Database from 'better-sqlite3';
import type { ChildGroup } from '../../api/contract';
import type { SerializedError } from '../../errors';
import type { ChildResult } from '../../store/port';
import type { ChildLink, ChildQueries, EventQueries } from '../../store/queries';
import { parseStored } from './stored-json';

/**
 * The statuses of a child that is not live any more, as an SQL list: ended (engine/vocabulary.ts
 * TERMINAL_STATUSES), or COMPENSATING (failing or cancelled already: it ends by itself).
 */
export const NOT_LIVE_SQL = `('COMPLETED', 'FAILED', 'CANCELLED', 'COMPENSATING')`;

/** Prepares {@link ChildQueries} on `db`. */
export function createChildQueries(db: Database.Database): ChildQueries {
  const insert = db.prepare<[number, string, number, number, string, string | null]>(
    `INSERT INTO child (instance_id, node_id, attempt, item_index, input_json, concurrency_key) VALUES (?, ?, ?, ?, ?, ?)`,
  );
  const input = db.prepare<[number, string, number, number], { j: string | null; k: string | null }>(
    `SELECT input_json AS j, concurrency_key AS k FROM child WHERE instance_id = ? AND node_id = ? AND attempt = ? AND item_index = ?`,
  );
  const started = db.prepare<[number, number, string, number, number]>(
    `UPDATE child SET child_id = ?, input_json = NULL WHERE instance_id = ? AND node_id = ? AND attempt = ? AND item_index = ?`,
  );
  const link = db.prepare<[number], ChildLink>(
    `SELECT instance_id AS instanceId, node_id AS nodeId, attempt, item_index AS "index" FROM child WHERE child_id = ?`,
  );
  const liveOfNode = db.prepare<[number, string], { id: number }>(
    `SELECT i.id FROM child c JOIN instance i ON i.id = c.child_id
      WHERE c.instance_id = ? AND c.node_id = ? AND i.status NOT IN ${NOT_LIVE_SQL} ORDER BY i.id`,
  );
  const live = db.prepare<[number], { id: number }>(
    `SELECT i.id FROM instance i WHERE i.parent_id = ? AND i.status NOT IN ${NOT_LIVE_SQL} ORDER BY i.id`,
  );
  return {
    insertItems: ({ instanceId, nodeId, attempt, inputs, concurrencyKeys }) => {
      for (let i = 0; i < inputs.length; i++) insert.run(instanceId, nodeId, attempt, i, inputs[i] as string, concurrencyKeys?.[i] ?? null);
    },
    input: ({ instanceId, nodeId, attempt, index }) => {
      const r = input.get(instanceId, nodeId, attempt, index);
      return r === undefined || r.j === null ? undefined : { json: r.j, concurrencyKey: r.k };
    },
    started: ({ instanceId, nodeId, attempt, index, childId }) => void started.run(childId, instanceId, nodeId, attempt, index),
    link: (childId) => link.get(childId),
    live: ({ instanceId, nodeId }) => (nodeId === undefined ? live.all(instanceId) : liveOfNode.all(instanceId, nodeId)).map((r) => r.id),
  };
}

/** Prepares {@link EventQueries} on `db`. */
export function createEventQueries(db: Database.Database): EventQueries {
  const insert = db.prepare<[number, string, string | null, string | null, string | null, number]>(
    `INSERT INTO event (instance_id, name, key, data_json, actor, sent_at) VALUES (?, ?, ?, ?, ?, ?)`,
  );
  const firstOpen = db.prepare<[{ instanceId: number; name: string; key: string | null }], { id: number; d: string | null }>(
    `SELECT id, data_json AS d FROM event
      WHERE instance_id = @instanceId AND name = @name AND consumed_at IS NULL AND (@key IS NULL OR key = @key) ORDER BY id LIMIT 1`,
  );
  const consume = db.prepare<[string, number, number]>(`UPDATE event SET consumed_node_id = ?, consumed_at = ? WHERE id = ?`);
  return {
    insert: ({ instanceId, name, key, data, actor, now }) =>
      Number(insert.run(instanceId, name, key, data === undefined ? null : JSON.stringify(data), actor, now).lastInsertRowid),
    firstOpen: ({ instanceId, name, key }) => {
      const r = firstOpen.get({ instanceId, name, key });
      return r === undefined ? undefined : { id: r.id, data: r.d === null ? null : parseStored<unknown>(r.d, instanceId, 'event.data_json') };
    },
    consume: ({ id, nodeId, now }) => void consume.run(nodeId, now, id),
  };
}

/** One count of a node attempt's children by status, as both backends' read models select it. */
export interface ChildCountRow {
  nodeId: string;
  attempt: number;
  /** The child's status, or `QUEUED` for an item not started. */
  status: string;
  n: number;
  workflow: string | null;
  workflowVersion: number | null;
}

/** Child counts by status folded into one {@link ChildGroup} per node, in node order of first appearance. */
export function toChildGroups(rows: readonly ChildCountRow[]): ChildGroup[] {
  const groups = new Map<string, ChildGroup>();
  for (const r of rows) {
    let g = groups.get(r.nodeId);
    if (!g) {
      g = { nodeId: r.nodeId, attempt: r.attempt, workflow: null, workflowVersion: null, total: 0, completed: 0, failed: 0, running: 0, waiting: 0, queued: 0 };
      groups.set(r.nodeId, g);
    }
    if (r.workflow !== null) {
      g.workflow = r.workflow;
      g.workflowVersion = r.workflowVersion;
    }
    const n = Number(r.n);
    g.total += n;
    if (r.status === 'COMPLETED') g.completed += n;
    else if (r.status === 'FAILED' || r.status === 'CANCELLED') g.failed += n;
    else if (r.status === 'WAITING' || r.status === 'SUSPENDED') g.waiting += n;
    else if (r.status === 'QUEUED') g.queued += n;
    else g.running += n;
  }
  return [...groups.values()];
}

/** A child row joined with its instance, as both backends select it for `childResults`. */
export interface RawChildResult {
  index: number;
  childId: number | null;
  status: string | null;
  variablesJson: string | null;
  /** Its start variables (resolved from `input_json`), or null. */
  inputJson: string | null;
  errorJson: string | null;
}

/** A selected child row as the executor reads it, its JSON parsed. */
export function toChildResult(r: RawChildResult): ChildResult {
  const where = r.childId ?? 0;
  return {
    index: r.index,
    childId: r.childId,
    status: r.status,
    variables: r.variablesJson === null ? null : parseStored<Record<string, unknown>>(r.variablesJson, where, 'variables_json'),
    input: r.inputJson === null ? null : parseStored<Record<string, unknown>>(r.inputJson, where, 'input_json'),
    error: r.errorJson === null ? null : parseStored<SerializedError>(r.errorJson, where, 'error_json'),
  };
}
