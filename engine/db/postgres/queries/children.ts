/**
 * PostgreSQL: the children of `subworkflow` and `map` node attempts ({@link ChildQueries}) and the
 * events sent to instances ({@link EventQueries}), the statements of engine/db/queries/children.ts
 * translated. A node attempt's items go in one statement (`unnest … WITH ORDINALITY`), not one
 * round trip each. Statements take the lock of the instance they name (the parent, for children)
 * first (./context.ts).
 */
import type { ChildLink, ChildQueries, EventQueries } from '../../../store/queries';
import { NOT_LIVE_SQL } from '../../queries/children';
import { parseStored } from '../../queries/stored-json';
import type { PgTx } from './context';

const INSERT_ITEMS = `INSERT INTO child (instance_id, node_id, attempt, item_index, input_json, concurrency_key)
  SELECT $1, $2, $3, t.i - 1, t.j, t.k FROM unnest($4::text[], $5::text[]) WITH ORDINALITY AS t(j, k, i)`;
const INPUT = `SELECT input_json AS j, concurrency_key AS k FROM child WHERE instance_id = $1 AND node_id = $2 AND attempt = $3 AND item_index = $4`;
const STARTED = `UPDATE child SET child_id = $1, input_json = NULL WHERE instance_id = $2 AND node_id = $3 AND attempt = $4 AND item_index = $5`;
const LINK = `SELECT instance_id AS "instanceId", node_id AS "nodeId", attempt, item_index AS "index" FROM child WHERE child_id = $1`;
const LIVE_OF_NODE = `SELECT i.id FROM child c JOIN instance i ON i.id = c.child_id
  WHERE c.instance_id = $1 AND c.node_id = $2 AND i.status NOT IN ${NOT_LIVE_SQL} ORDER BY i.id`;
const LIVE = `SELECT i.id FROM instance i WHERE i.parent_id = $1 AND i.status NOT IN ${NOT_LIVE_SQL} ORDER BY i.id`;

const EVENT_INSERT = `INSERT INTO event (instance_id, name, key, data_json, actor, sent_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`;
const EVENT_FIRST_OPEN = `SELECT id, data_json AS d FROM event
  WHERE instance_id = $1 AND name = $2 AND consumed_at IS NULL AND ($3::text IS NULL OR key = $3) ORDER BY id LIMIT 1`;
const EVENT_CONSUME = `UPDATE event SET consumed_node_id = $1, consumed_at = $2 WHERE id = $3`;

/** {@link ChildQueries} over the transaction `tx`. */
export function createChildQueries(tx: PgTx): ChildQueries {
  return {
    insertItems: ({ instanceId, nodeId, attempt, inputs, concurrencyKeys }) => {
      tx.lockInstance(instanceId);
      tx.exec(INSERT_ITEMS, [instanceId, nodeId, attempt, inputs, inputs.map((_, i) => concurrencyKeys?.[i] ?? null)]);
    },
    input: ({ instanceId, nodeId, attempt, index }) => {
      tx.lockInstance(instanceId);
      const r = tx.run<{ j: string | null; k: string | null }>(INPUT, [instanceId, nodeId, attempt, index]).rows[0];
      return r === undefined || r.j === null ? undefined : { json: r.j, concurrencyKey: r.k };
    },
    started: ({ instanceId, nodeId, attempt, index, childId }) => {
      tx.lockInstance(instanceId);
      tx.exec(STARTED, [childId, instanceId, nodeId, attempt, index]);
    },
    link: (childId) => tx.run<ChildLink>(LINK, [childId]).rows[0],
    live: ({ instanceId, nodeId }) => {
      tx.lockInstance(instanceId);
      const r = nodeId === undefined ? tx.run<{ id: number }>(LIVE, [instanceId]) : tx.run<{ id: number }>(LIVE_OF_NODE, [instanceId, nodeId]);
      return r.rows.map((x) => x.id);
    },
  };
}

/** {@link EventQueries} over the transaction `tx`. */
export function createEventQueries(tx: PgTx): EventQueries {
  return {
    insert: ({ instanceId, name, key, data, actor, now }) => {
      tx.lockInstance(instanceId);
      const params = [instanceId, name, key, data === undefined ? null : JSON.stringify(data), actor, now];
      return (tx.run<{ id: number }>(EVENT_INSERT, params).rows[0] as { id: number }).id;
    },
    firstOpen: ({ instanceId, name, key }) => {
      tx.lockInstance(instanceId);
      const r = tx.run<{ id: number; d: string | null }>(EVENT_FIRST_OPEN, [instanceId, name, key]).rows[0];
      return r === undefined ? undefined : { id: r.id, data: r.d === null ? null : parseStored<unknown>(r.d, instanceId, 'event.data_json') };
    },
    consume: ({ id, nodeId, now }) => tx.exec(EVENT_CONSUME, [nodeId, now, id]),
  };
}
