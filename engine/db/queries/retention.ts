/**
 * SQLite: finding ended instances and deleting them with everything they own
 * ({@link RetentionQueries}), prepared once per connection.
 *
 * Id lists travel as one JSON array parameter (`json_each`), so a batch of 500 is one statement
 * per table, not 500. A purge marks the ended instances of its list first (`instance.purging`,
 * migration 8): the history trigger lets exactly their rows go, and every later statement of the
 * purge works on the marked rows only, so a live instance in the list is never touched.
 */
import type Database from 'better-sqlite3';
import type { InstanceStatus } from '../../vocabulary';
import type { PurgeCounts, RetentionQueries, TreeMember } from '../../store/queries';

/** Ended statuses as an SQL list (engine/vocabulary.ts TERMINAL_STATUSES). */
export const ENDED_SQL = `('COMPLETED', 'FAILED', 'CANCELLED')`;

/*
 * Every join of an id list with the instance table is a CROSS JOIN, which SQLite never reorders
 * (https://sqlite.org/optoverview.html#manual_control_of_join_order_using_cross_join): the list
 * outside, one rowid seek per id. Left to the planner, which cannot size a `json_each`, the ended
 * instances' mark walked every instance of the status through its index and scanned the list for
 * each (a batch cost grew with the file: 90,000 of 100,000 instances took 268 s to prune), and
 * the trees' rows scanned the whole instance table once a batch.
 */

/** The marked instances of the JSON id list `?` (what a purge deletes). */
const MARKED = `SELECT i.id FROM json_each(?) j CROSS JOIN instance i ON i.id = j.value WHERE i.purging = 1`;

/** The instances of the JSON id list `?` that a purge would mark (ended ones). */
const ENDED = `SELECT i.id FROM json_each(?) j CROSS JOIN instance i ON i.id = j.value WHERE i.status IN ${ENDED_SQL}`;

/** Prepares {@link RetentionQueries} on `db`. */
export function createRetentionQueries(db: Database.Database): RetentionQueries {
  // A batch walks the status's ended instances by id from the cursor (INDEXED BY: with ANALYZE's
  // statistics SQLite chose a walk of the whole table by rowid instead, 14 ms a batch behind
  // 100,000 live instances).
  const candidatesAll = db.prepare<[{ status: string; endedBefore: number; afterId: number; upToId: number; limit: number }], { id: number }>(
    `SELECT i.id FROM instance i INDEXED BY instance_status
      WHERE i.status = @status AND i.id > @afterId AND i.id <= @upToId AND i.parent_id IS NULL AND i.ended_at < @endedBefore
      ORDER BY i.id LIMIT @limit`,
  );
  const candidatesOf = db.prepare<[{ status: string; endedBefore: number; afterId: number; upToId: number; limit: number; workflow: string }], { id: number }>(
    `SELECT i.id FROM instance i INDEXED BY instance_status
      WHERE i.status = @status AND i.id > @afterId AND i.id <= @upToId AND i.parent_id IS NULL AND i.ended_at < @endedBefore
        AND i.workflow_id IN (SELECT w.id FROM workflow w WHERE w.name = @workflow)
      ORDER BY i.id LIMIT @limit`,
  );
  // The newest instance of the status that ended before the cutoff: a walk of instance_ended over
  // the old enough only (none, the usual pass every minute, walks nothing).
  const newestEnded = db.prepare<[number, string], number | null>(
    `SELECT max(id) FROM instance INDEXED BY instance_ended WHERE ended_at < ? AND status = ?`,
  ).pluck();
  const trees = db.prepare<[string], TreeMember>(
    `WITH RECURSIVE t(id, root) AS (
        SELECT i.id, i.id FROM json_each(?) j CROSS JOIN instance i ON i.id = j.value
        UNION ALL
        SELECT c.id, t.root FROM t CROSS JOIN instance c ON c.parent_id = t.id
      )
      SELECT t.id, t.root AS rootId, i.parent_id AS parentId, i.status,
             (SELECT max(h.id) FROM history h WHERE h.instance_id = t.id) AS lastHistoryId
      FROM t CROSS JOIN instance i ON i.id = t.id`,
  );
  const mark = db.prepare<[string]>(`UPDATE instance SET purging = 1 WHERE id IN (${ENDED})`);
  const del = {
    history: db.prepare<[string]>(`DELETE FROM history WHERE instance_id IN (${MARKED})`),
    // Time travel's record goes with the history it is keyed by (not counted apart: it is part of
    // it), before it; and the instance's pending patch, keyed by minus its id (migration 16).
    historyState: db.prepare<[string]>(`DELETE FROM history_state WHERE history_id IN (SELECT h.id FROM history h WHERE h.instance_id IN (${MARKED}))`),
    pendingState: db.prepare<[string]>(`DELETE FROM history_state WHERE history_id IN (SELECT -m.id FROM (${MARKED}) m)`),
    schedule: db.prepare<[string]>(`DELETE FROM schedule WHERE instance_id IN (${MARKED})`),
    deadLetters: db.prepare<[string]>(`DELETE FROM dead_letter WHERE instance_id IN (${MARKED})`),
    nodeStates: db.prepare<[string]>(`DELETE FROM node_state WHERE instance_id IN (${MARKED})`),
    events: db.prepare<[string]>(`DELETE FROM event WHERE instance_id IN (${MARKED})`),
    children: db.prepare<[string, string]>(`DELETE FROM child WHERE instance_id IN (${MARKED}) OR child_id IN (${MARKED})`),
    instances: db.prepare<[string]>(`DELETE FROM instance WHERE id IN (${MARKED})`),
  };
  const count = (table: string) => db.prepare<[string], number>(`SELECT count(*) FROM ${table} WHERE instance_id IN (${ENDED})`).pluck();
  const measure = {
    instances: db.prepare<[string], number>(`SELECT count(*) FROM (${ENDED})`).pluck(),
    nodeStates: count('node_state'),
    schedule: count('schedule'),
    deadLetters: count('dead_letter'),
    history: count('history'),
    events: count('event'),
    children: db
      .prepare<[string, string], number>(`SELECT count(*) FROM child WHERE instance_id IN (${ENDED}) OR child_id IN (${ENDED})`)
      .pluck(),
  };
  const definitions = db.prepare<[], { name: string; dslJson: string }>(
    `SELECT w.name, w.dsl_json AS dslJson FROM workflow w
      WHERE w.version = (SELECT max(x.version) FROM workflow x WHERE x.name = w.name) ORDER BY w.name`,
  );
  return {
    newestEnded: ({ status, endedBefore }) => newestEnded.get(endedBefore, status) ?? null,
    candidates: ({ status, endedBefore, workflow, afterId, upToId, limit }) => {
      if (upToId <= afterId) return [];
      return (
        workflow === undefined
          ? candidatesAll.all({ status, endedBefore, afterId, upToId, limit })
          : candidatesOf.all({ status, endedBefore, afterId, upToId, limit, workflow })
      ).map((r) => r.id);
    },
    trees: (rootIds) => (rootIds.length === 0 ? [] : trees.all(JSON.stringify(rootIds)).map((r) => ({ ...r, status: r.status as InstanceStatus }))),
    // One writer at a time: whoever runs this transaction holds every instance already.
    tryLock: (ids) => [...ids],
    measure: (ids): PurgeCounts => {
      const j = JSON.stringify(ids);
      return {
        instances: measure.instances.get(j) ?? 0,
        nodeStates: measure.nodeStates.get(j) ?? 0,
        schedule: measure.schedule.get(j) ?? 0,
        deadLetters: measure.deadLetters.get(j) ?? 0,
        history: measure.history.get(j) ?? 0,
        events: measure.events.get(j) ?? 0,
        children: measure.children.get(j, j) ?? 0,
      };
    },
    purge: (ids): PurgeCounts => {
      const j = JSON.stringify(ids);
      if (ids.length === 0 || mark.run(j).changes === 0) return { instances: 0, nodeStates: 0, schedule: 0, deadLetters: 0, history: 0, events: 0, children: 0 };
      // Time travel's record first (found through the history it is keyed by), then history: its
      // trigger reads the marks, which go with the instance rows last.
      del.historyState.run(j);
      del.pendingState.run(j);
      const history = del.history.run(j).changes;
      const schedule = del.schedule.run(j).changes;
      const deadLetters = del.deadLetters.run(j).changes;
      const nodeStates = del.nodeStates.run(j).changes;
      const events = del.events.run(j).changes;
      const children = del.children.run(j, j).changes;
      const instances = del.instances.run(j).changes;
      return { instances, nodeStates, schedule, deadLetters, history, events, children };
    },
    // Every page the purge freed (a batch frees a bounded number); a no-op unless auto_vacuum is INCREMENTAL.
    reclaim: () => void db.pragma('incremental_vacuum'),
    workflowDefinitions: () => definitions.all(),
  };
}
