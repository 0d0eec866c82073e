/**
 * PostgreSQL: finding ended instances and deleting them with everything they own
 * ({@link RetentionQueries}), the statements of engine/db/queries/retention.ts translated (id
 * lists as one `bigint[]` parameter).
 *
 * Retention never waits for an instance: `tryLock` takes instance locks with
 * `pg_try_advisory_xact_lock` (./context.ts) and answers the ones it got, so an instance another
 * transaction is changing (a retry reopening it, a parent's wake) is left for a later batch. The
 * caller reads the locked instances' statuses again after the locks (each READ COMMITTED
 * statement then sees their latest commit) before it purges them.
 */
import type { PurgeCounts, RetentionQueries, TreeMember } from '../../../store/queries';
import { ENDED_SQL } from '../../queries/retention';
import { instanceLockKeys, type PgTx } from './context';

const CANDIDATES_ALL = `SELECT i.id FROM instance i
  WHERE i.status = $1 AND i.id > $2 AND i.id <= $5 AND i.parent_id IS NULL AND i.ended_at < $3 ORDER BY i.id LIMIT $4`;
const CANDIDATES_OF = `SELECT i.id FROM instance i
  WHERE i.status = $1 AND i.id > $2 AND i.id <= $5 AND i.parent_id IS NULL AND i.ended_at < $3
    AND i.workflow_id IN (SELECT w.id FROM workflow w WHERE w.name = $6)
  ORDER BY i.id LIMIT $4`;
/**
 * The newest instance of a status ended before a time: max over instance_ended's range of the old
 * enough. OFFSET 0 keeps the planner from turning max(id) into a backward walk of instance_pkey
 * filtered by the rest, which passed every instance ended since (all the instances kept: 117,594
 * rows, 18.7 ms at 125,000 instances, where the range read 6,936 entries in 2.0 ms).
 */
const NEWEST_ENDED = `SELECT max(id) AS id FROM (SELECT id FROM instance WHERE ended_at IS NOT NULL AND ended_at < $1 AND status = $2 OFFSET 0) o`;
// Each member's parent and status are carried through the recursion, not joined back after it:
// the planner estimates a recursive CTE at hundreds of thousands of rows, and joined back it hashed
// the whole instance table for every batch (a Seq Scan growing with the table).
const TREES = `WITH RECURSIVE t(id, root, parent_id, status) AS (
    SELECT i.id, i.id, i.parent_id, i.status FROM instance i WHERE i.id = ANY($1::bigint[])
    UNION ALL
    SELECT c.id, t.root, c.parent_id, c.status FROM instance c JOIN t ON c.parent_id = t.id
  )
  SELECT t.id, t.root AS "rootId", t.parent_id AS "parentId", t.status,
         (SELECT max(h.id) FROM history h WHERE h.instance_id = t.id) AS "lastHistoryId"
  FROM t`;
const TRY_LOCK = `SELECT x.id FROM unnest($1::bigint[]) AS x(id) WHERE pg_try_advisory_xact_lock(${instanceLockKeys('x.id')})`;
const ENDED = `SELECT id FROM instance WHERE id = ANY($1::bigint[]) AND status IN ${ENDED_SQL}`;
const MARKED = `SELECT id FROM instance WHERE id = ANY($1::bigint[]) AND purging = 1`;
const MARK = `UPDATE instance SET purging = 1 WHERE id = ANY($1::bigint[]) AND status IN ${ENDED_SQL}`;
const DELETES = {
  history: `DELETE FROM history WHERE instance_id IN (${MARKED})`,
  // Time travel's record goes with the history it is keyed by (not counted apart: it is part of
  // it), before it; and the instance's pending patch, keyed by minus its id (migration 11).
  historyState: `DELETE FROM history_state WHERE history_id IN (SELECT h.id FROM history h WHERE h.instance_id IN (${MARKED}))`,
  pendingState: `DELETE FROM history_state WHERE history_id IN (SELECT -m.id FROM (${MARKED}) m)`,
  schedule: `DELETE FROM schedule WHERE instance_id IN (${MARKED})`,
  deadLetters: `DELETE FROM dead_letter WHERE instance_id IN (${MARKED})`,
  nodeStates: `DELETE FROM node_state WHERE instance_id IN (${MARKED})`,
  events: `DELETE FROM event WHERE instance_id IN (${MARKED})`,
  children: `DELETE FROM child WHERE instance_id IN (${MARKED}) OR child_id IN (${MARKED})`,
  instances: `DELETE FROM instance WHERE id IN (${MARKED})`,
};
const MEASURE = `SELECT
    (SELECT count(*) FROM (${ENDED}) e)::int AS instances,
    (SELECT count(*) FROM node_state WHERE instance_id IN (${ENDED}))::int AS "nodeStates",
    (SELECT count(*) FROM schedule WHERE instance_id IN (${ENDED}))::int AS schedule,
    (SELECT count(*) FROM dead_letter WHERE instance_id IN (${ENDED}))::int AS "deadLetters",
    (SELECT count(*) FROM history WHERE instance_id IN (${ENDED}))::int AS history,
    (SELECT count(*) FROM event WHERE instance_id IN (${ENDED}))::int AS events,
    (SELECT count(*) FROM child WHERE instance_id IN (${ENDED}) OR child_id IN (${ENDED}))::int AS children`;
const DEFINITIONS = `SELECT DISTINCT ON (name) name, dsl_json AS "dslJson" FROM workflow ORDER BY name, version DESC`;

const NONE: PurgeCounts = { instances: 0, nodeStates: 0, schedule: 0, deadLetters: 0, history: 0, events: 0, children: 0 };

/** {@link RetentionQueries} over the transaction `tx`. */
export function createRetentionQueries(tx: PgTx): RetentionQueries {
  return {
    newestEnded: ({ status, endedBefore }) => tx.run<{ id: number | null }>(NEWEST_ENDED, [endedBefore, status]).rows[0]?.id ?? null,
    candidates: ({ status, endedBefore, workflow, afterId, upToId, limit }) =>
      upToId <= afterId
        ? []
        : (workflow === undefined
            ? tx.run<{ id: number }>(CANDIDATES_ALL, [status, afterId, endedBefore, limit, upToId])
            : tx.run<{ id: number }>(CANDIDATES_OF, [status, afterId, endedBefore, limit, upToId, workflow])
          ).rows.map((r) => r.id),
    trees: (rootIds) => (rootIds.length === 0 ? [] : tx.run<TreeMember>(TREES, [rootIds]).rows),
    tryLock: (ids) => {
      if (ids.length === 0) return [];
      const got = tx.run<{ id: number }>(TRY_LOCK, [ids]).rows.map((r) => r.id);
      for (const id of got) tx.holdsInstance(id);
      return got;
    },
    measure: (ids) => (ids.length === 0 ? { ...NONE } : (tx.run<PurgeCounts>(MEASURE, [ids]).rows[0] ?? { ...NONE })),
    purge: (ids) => {
      if (ids.length === 0 || tx.run(MARK, [ids]).rowCount === 0) return { ...NONE };
      // Time travel's record first (found through the history it is keyed by), then history: its
      // trigger reads the marks, which go with the instance rows last.
      const n = (sql: string) => tx.run(sql, [ids]).rowCount;
      n(DELETES.historyState);
      n(DELETES.pendingState);
      const history = n(DELETES.history);
      const schedule = n(DELETES.schedule);
      const deadLetters = n(DELETES.deadLetters);
      const nodeStates = n(DELETES.nodeStates);
      const events = n(DELETES.events);
      const children = n(DELETES.children);
      const instances = n(DELETES.instances);
      return { instances, nodeStates, schedule, deadLetters, history, events, children };
    },
    // Autovacuum reclaims dead rows by itself.
    reclaim: () => undefined,
    workflowDefinitions: () => tx.run<{ name: string; dslJson: string }>(DEFINITIONS, []).rows,
  };
}
