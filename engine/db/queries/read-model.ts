/**
 * SQLite: the read model ({@link ReadModel}) — what the CLI, the monitor and the dashboard show,
 * parsed here into the API's shapes. Lists are paged by keyset (id), so page N of 100,000 rows
 * costs the same as page 1.
 *
 * The list answers "why is it stuck" in the same statement: one correlated subquery per row
 * gathers the instance's current node states (a primary-key range of `node_state`) as JSON, and
 * describeStuck (./stuck.ts) turns them into columns.
 */
import type Database from 'better-sqlite3';
import type { HistoryEvent, InstanceListItem } from '../../api/contract';
import { AGE_BOUNDS_MS, AGE_BUCKET_SQL, toAgeRows, type ApprovalRow, type FeedReads, type TimeTravelReads, type ScheduleReads, type InstanceFilter, type InstanceView, type ReadModel, type SeriesRow } from '../../store/port';
import type { Suspension } from '../../store/queries';
import { buildInstanceWhere, testTerm, CURRENT_NODE_SQL } from './instance-filter';
import { START_INPUT_SQL } from './instances';
import { describeStuck, type StuckSource } from './stuck';
import type { SqliteWorkflows } from './workflows';
import { toChildGroups, toChildResult, type ChildCountRow, type RawChildResult } from './children';

/** An instance row as lists read it. */
interface ListRow extends StuckSource {
  id: number;
  workflow: string;
  workflow_version: number;
  status: string;
  business_key: string | null;
  created_at: number;
  started_at: number | null;
  ended_at: number | null;
  updated_at: number;
  version: number;
  parent_id: number | null;
  parent_node_id: string | null;
  paused_at: number | null;
  held: number;
  priority: number;
  test: number;
  /** The workflow version's concurrency limit, read only for a held row. */
  concurrency_limit: number | null;
  /** For a held row: its slot's instances in progress. */
  concurrency_in_use: number | null;
}

interface DetailRow extends ListRow {
  workflow_id: number;
  variables_json: string;
  input_json: string;
  deadline_at: number | null;
  pins_json: string | null;
}

interface NodeDetailRow {
  node_id: string;
  status: string;
  attempt: number;
  attempt_limit: number;
  output_json: string | null;
  error_json: string | null;
  wait_json: string | null;
  completed_seq: number | null;
  started_at: number | null;
  ended_at: number | null;
  next_run_at: number | null;
}

interface HistoryRow {
  id: number;
  node_id: string | null;
  type: string;
  at: number;
  attempt: number | null;
  actor: string | null;
  data_json: string | null;
}

const LIST_COLS = `i.id, w.name AS workflow, w.version AS workflow_version, i.status, i.business_key,
  i.created_at, i.started_at, i.ended_at, i.updated_at, i.version, i.error_json, i.suspension_json, i.parent_id, i.parent_node_id, i.paused_at,
  i.held, i.priority, i.test, CASE WHEN i.held = 1 THEN json_extract(w.dsl_json, '$.concurrency.limit') END AS concurrency_limit,
  CASE WHEN i.held = 1 THEN (SELECT count(*) FROM instance o WHERE o.concurrency_key = i.concurrency_key AND o.held = 0
    AND o.status NOT IN ('COMPLETED', 'FAILED', 'CANCELLED')) END AS concurrency_in_use`;

/** The current node states of `i` as JSON (see {@link StuckSource.nodes_json}); a primary-key range per row. */
const NODES_COL = `CASE WHEN i.status IN ('COMPLETED', 'CANCELLED') THEN NULL ELSE
  (SELECT json_group_array(json_array(n.node_id, n.status, n.attempt, n.attempt_limit, json(n.wait_json), n.started_at))
     FROM node_state n WHERE n.instance_id = i.id AND (n.status IN ${CURRENT_NODE_SQL} OR n.status = 'FAILED')) END AS nodes_json`;

const parse = (s: string | null): unknown => (s === null ? undefined : JSON.parse(s));

/** A list row as the API shows it: the summary plus the "why is it stuck" columns. */
function listItem(r: ListRow): InstanceListItem {
  return {
    id: r.id,
    workflow: r.workflow,
    workflowVersion: r.workflow_version,
    status: r.status,
    businessKey: r.business_key,
    createdAt: r.created_at,
    startedAt: r.started_at,
    endedAt: r.ended_at,
    version: r.version,
    error: parse(r.error_json),
    suspension: parse(r.suspension_json),
    parentId: r.parent_id,
    parentNodeId: r.parent_node_id,
    pausedAt: r.paused_at,
    held: r.held === 1,
    priority: r.priority,
    test: r.test === 1,
    ...describeStuck(r),
  };
}

/** Builds the SQLite {@link ReadModel} on `db`. */
export function createReadModel(db: Database.Database, workflows: SqliteWorkflows): Omit<ReadModel, FeedReads | TimeTravelReads | ScheduleReads> {
  const get = db.prepare<[number], DetailRow>(
    `SELECT ${LIST_COLS}, i.workflow_id, i.variables_json, ${START_INPUT_SQL} AS input_json, i.deadline_at, i.pins_json
       FROM instance i JOIN workflow w ON w.id = i.workflow_id WHERE i.id = ?`,
  );
  const state = db.prepare<[number], { id: number; status: string; version: number }>(`SELECT id, status, version FROM instance WHERE id = ?`);
  const nodes = db.prepare<[number], NodeDetailRow>(
    `SELECT n.node_id, n.status, n.attempt, n.attempt_limit, n.output_json, n.error_json, n.wait_json, n.completed_seq,
            n.started_at, n.ended_at,
            (SELECT min(s.next_run_at) FROM schedule s WHERE s.instance_id = n.instance_id AND s.node_id = n.node_id
               AND s.lease_owner IS NULL) AS next_run_at
       FROM node_state n WHERE n.instance_id = ?`,
  );
  const childCounts = db.prepare<[number], ChildCountRow>(
    `SELECT c.node_id AS nodeId, c.attempt, coalesce(i.status, 'QUEUED') AS status, count(*) AS n,
            max(w.name) AS workflow, max(w.version) AS workflowVersion
       FROM child c JOIN node_state ns ON ns.instance_id = c.instance_id AND ns.node_id = c.node_id AND ns.attempt = c.attempt
       LEFT JOIN instance i ON i.id = c.child_id LEFT JOIN workflow w ON w.id = i.workflow_id
      WHERE c.instance_id = ? GROUP BY c.node_id, c.attempt, coalesce(i.status, 'QUEUED') ORDER BY 1, 2, 3`,
  );
  const childResults = db.prepare<[number, string, number], RawChildResult>(
    `SELECT c.item_index AS "index", c.child_id AS childId, i.status, i.variables_json AS variablesJson, ${START_INPUT_SQL} AS inputJson, i.error_json AS errorJson
       FROM child c LEFT JOIN instance i ON i.id = c.child_id
      WHERE c.instance_id = ? AND c.node_id = ? AND c.attempt = ? ORDER BY c.item_index`,
  );
  const history = db.prepare<[number, number, number], HistoryRow>(
    `SELECT id, node_id, type, at, attempt, actor, data_json FROM history WHERE instance_id = ? AND id > ? ORDER BY id LIMIT ?`,
  );
  const counts = db.prepare<[], { status: string; count: number }>(`SELECT status, count FROM v_instance_counts`);
  const queue = db.prepare<[], Record<string, number>>(`SELECT * FROM v_queue`);
  const durations = db.prepare<[], Record<string, unknown>>(`SELECT * FROM v_workflow_durations`);
  const failures = db.prepare<[], Record<string, unknown>>(`SELECT * FROM v_failures`);
  const deadLetters = db.prepare<[number], Record<string, unknown>>(
    `SELECT d.id, d.instance_id, w.name AS workflow, d.node_id, d.kind, d.attempts, d.error_json, d.created_at
       FROM dead_letter d JOIN instance i ON i.id = d.instance_id JOIN workflow w ON w.id = i.workflow_id
      WHERE i.test = 0 ORDER BY d.id DESC LIMIT ?`,
  );
  const maxId = db.prepare<[], { id: number | null }>(`SELECT max(id) AS id FROM instance`);
  const ages = db.prepare<[{ day: number; week: number; month: number }], { bucket: number; live: number; ended: number }>(
    `SELECT ${AGE_BUCKET_SQL(['@day', '@week', '@month'])} AS bucket, count(*) FILTER (WHERE ended_at IS NULL) AS live, count(*) FILTER (WHERE ended_at IS NOT NULL) AS ended FROM instance GROUP BY bucket`,
  );
  // The instance created first (the lower id of a tie), not the lowest id: ids and creation times
  // disagree after a clock set back, a copy from another database or a fork stamped earlier.
  // Through instance_status (status, id): the rows of the two statuses, not every instance.
  const oldestWaitingId = db.prepare<[], { id: number }>(
    `SELECT id FROM instance INDEXED BY instance_status WHERE status IN ('WAITING', 'SUSPENDED') ORDER BY created_at, id LIMIT 1`,
  );
  const nextDue = db.prepare<[], { at: number | null }>(`SELECT min(next_run_at) AS at FROM schedule`);
  // The first row of work found answers: DISTINCT over the whole queue walked every schedule row
  // (30 ms and more at 100,000 rows) at every poll of an idle check.
  const withWork = db.prepare<[number, string], { id: number }>(
    `SELECT i.workflow_id AS id FROM schedule s CROSS JOIN instance i ON i.id = s.instance_id
      WHERE s.paused_ms IS NULL AND (s.kind IN ('run', 'timer', 'compensate') OR s.next_run_at <= ?)
        AND i.workflow_id NOT IN (SELECT value FROM json_each(?))
      LIMIT 1`,
  );
  // Statements built from a filter's shape, prepared once per shape.
  const statements = new Map<string, Database.Statement<unknown[], unknown>>();
  const cached = (sql: string): Database.Statement<unknown[], unknown> => {
    let stmt = statements.get(sql);
    if (!stmt) {
      stmt = db.prepare<unknown[], unknown>(sql);
      statements.set(sql, stmt);
    }
    return stmt;
  };

  function list(filter: InstanceFilter): InstanceListItem[] {
    const { terms, params } = buildInstanceWhere(filter);
    const limit = Math.min(1000, Math.max(1, Math.floor(filter.limit ?? 50)));
    const order = filter.afterId !== undefined && filter.beforeId === undefined ? 'ASC' : 'DESC';
    const sql = `SELECT ${LIST_COLS}, ${NODES_COL} FROM instance i JOIN workflow w ON w.id = i.workflow_id
      ${terms.length > 0 ? `WHERE ${terms.join(' AND ')}` : ''} ORDER BY i.id ${order} LIMIT ${limit}`;
    return (cached(sql).all(...params) as ListRow[]).map(listItem);
  }

  function instance(id: number): InstanceView | undefined {
    const row = get.get(id);
    if (!row) return undefined;
    return {
      id: row.id,
      workflow: row.workflow,
      workflowVersion: row.workflow_version,
      workflowId: row.workflow_id,
      status: row.status,
      version: row.version,
      businessKey: row.business_key,
      variables: JSON.parse(row.variables_json) as Record<string, unknown>,
      input: JSON.parse(row.input_json) as Record<string, unknown>,
      error: parse(row.error_json),
      suspension: parse(row.suspension_json) as Suspension | undefined,
      createdAt: row.created_at,
      startedAt: row.started_at,
      endedAt: row.ended_at,
      updatedAt: row.updated_at,
      deadlineAt: row.deadline_at,
      parentId: row.parent_id,
      parentNodeId: row.parent_node_id,
      pausedAt: row.paused_at,
      held: row.held === 1,
      priority: row.priority,
      test: row.test === 1,
      ...(row.pins_json === null ? {} : { pins: JSON.parse(row.pins_json) as Record<string, unknown> }),
      children: toChildGroups(childCounts.all(id)),
      nodes: nodes.all(id).map((n) => {
        const wait = parse(n.wait_json) as { kind?: string } | undefined;
        return {
          id: n.node_id,
          status: n.status,
          attempt: n.attempt,
          maxAttempts: n.attempt_limit,
          output: parse(n.output_json),
          error: parse(n.error_json),
          // A failure an error edge handled waits for nothing (the mark is for retry only).
          wait: wait?.kind === 'handled' ? undefined : wait,
          completedSeq: n.completed_seq,
          startedAt: n.started_at,
          endedAt: n.ended_at,
          nextRunAt: n.next_run_at,
        };
      }),
    };
  }

  function series(from: number, to: number, bucketMs: number, workflow?: string): SeriesRow[] {
    // bucket = floor((t − from) / bucketMs), cast: better-sqlite3 may bind a JS number as REAL.
    const wf = workflow === undefined ? '' : 'AND i.workflow_id IN (SELECT id FROM workflow WHERE name = ?)';
    const p = (...xs: unknown[]) => (workflow === undefined ? xs : [...xs, workflow]);
    const ended = cached(
      `WITH e AS MATERIALIZED (
         SELECT CAST((i.ended_at - ?) / ? AS INTEGER) AS bucket, i.status AS status, i.ended_at - i.created_at AS d
           FROM instance i WHERE i.ended_at >= ? AND i.ended_at < ? AND i.test = 0 ${wf}
       ), r AS (
         SELECT bucket, d, row_number() OVER w AS rn, count(*) OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS n
           FROM e WHERE status = 'COMPLETED' WINDOW w AS (PARTITION BY bucket ORDER BY d)
       ), pct AS (
         SELECT bucket, min(CASE WHEN rn >= (n * 50 + 99) / 100 THEN d END) AS p50Ms,
                min(CASE WHEN rn >= (n * 99 + 99) / 100 THEN d END) AS p99Ms
           FROM r GROUP BY bucket
       )
       SELECT e.bucket AS bucket, sum(e.status = 'COMPLETED') AS completed, sum(e.status = 'FAILED') AS failed,
              sum(e.status = 'CANCELLED') AS cancelled, pct.p50Ms AS p50Ms, pct.p99Ms AS p99Ms
         FROM e LEFT JOIN pct ON pct.bucket = e.bucket GROUP BY e.bucket`,
    ).all(...p(from, bucketMs, from, to)) as Omit<SeriesRow, 'started'>[];
    const started = cached(
      `SELECT CAST((i.created_at - ?) / ? AS INTEGER) AS bucket, count(*) AS n FROM instance i
        WHERE i.created_at >= ? AND i.created_at < ? AND i.test = 0 ${wf} GROUP BY bucket`,
    ).all(...p(from, bucketMs, from, to)) as { bucket: number; n: number }[];
    const byBucket = new Map<number, SeriesRow>();
    for (const r of ended) byBucket.set(r.bucket, { ...r, started: 0 });
    for (const r of started) {
      const row = byBucket.get(r.bucket) ?? { bucket: r.bucket, started: 0, completed: 0, failed: 0, cancelled: 0, p50Ms: null, p99Ms: null };
      row.started = r.n;
      byBucket.set(r.bucket, row);
    }
    return [...byBucket.values()].sort((a, b) => a.bucket - b.bucket);
  }

  function approvals(o: { workflow?: string; limit?: number }): { rows: ApprovalRow[]; total: number } {
    const limit = Math.min(1000, Math.max(1, Math.floor(o.limit ?? 100)));
    const wf = o.workflow === undefined ? '' : 'AND w.name = ?';
    const params = o.workflow === undefined ? [] : [o.workflow];
    const from = `FROM instance i JOIN node_state n ON n.instance_id = i.id JOIN workflow w ON w.id = i.workflow_id
      WHERE i.status IN ('RUNNING', 'WAITING') AND n.status = 'WAITING' AND json_extract(n.wait_json, '$.kind') = 'approval' ${wf}`;
    const rows = cached(
      `SELECT i.id AS instance_id, w.name AS workflow, w.version AS workflow_version, i.workflow_id, i.business_key,
              i.version AS instance_version, n.node_id, nd.name AS node_name, n.wait_json, n.started_at, n.attempt
         ${from.replace('WHERE', 'LEFT JOIN node nd ON nd.workflow_id = i.workflow_id AND nd.node_id = n.node_id WHERE')}
        ORDER BY n.started_at, i.id LIMIT ${limit}`,
    ).all(...params) as {
      instance_id: number;
      workflow: string;
      workflow_version: number;
      workflow_id: number;
      business_key: string | null;
      instance_version: number;
      node_id: string;
      node_name: string | null;
      wait_json: string | null;
      started_at: number | null;
      attempt: number;
    }[];
    const total = (cached(`SELECT count(*) AS n ${from}`).get(...params) as { n: number }).n;
    return {
      total,
      rows: rows.map((r) => {
        const wait = (parse(r.wait_json) ?? {}) as { prompt?: string; timeoutAt?: number };
        return {
          instanceId: r.instance_id,
          workflow: r.workflow,
          workflowVersion: r.workflow_version,
          workflowId: r.workflow_id,
          businessKey: r.business_key,
          instanceVersion: r.instance_version,
          nodeId: r.node_id,
          nodeName: r.node_name,
          prompt: wait.prompt ?? null,
          since: r.started_at,
          timeoutAt: wait.timeoutAt ?? null,
          attempt: r.attempt,
        };
      }),
    };
  }

  return {
    instance: async (id) => instance(id),
    instanceState: async (id) => state.get(id),
    childResults: async (instanceId, nodeId, attempt) => childResults.all(instanceId, nodeId, attempt).map(toChildResult),
    listInstances: async (filter) => list(filter),
    countByStatus: async (filter) => {
      const { terms, params, joinWorkflow } = buildInstanceWhere(filter, { status: false, paging: false, test: false });
      // Without a workflow filter the join is not needed: the plain GROUP BY uses the status index.
      const join = joinWorkflow ? 'JOIN workflow w ON w.id = i.workflow_id' : '';
      const count = (extra: string[]): { status: string; count: number }[] => {
        const all = [...terms, ...extra];
        const sql = `SELECT i.status AS status, count(*) AS count FROM instance i ${join}
          ${all.length > 0 ? `WHERE ${all.join(' AND ')}` : ''} GROUP BY i.status`;
        return cached(sql).all(...params) as { status: string; count: number }[];
      };
      const test = testTerm(filter);
      const out: Record<string, number> = {};
      // Real runs only: every instance counted less the test runs (the partial instance_test
      // index), so the status index alone still counts a file without test runs.
      db.transaction(() => {
        for (const row of count(test === 'i.test = 1' ? [test] : [])) out[row.status] = row.count;
        if (test !== 'i.test = 0') return;
        for (const row of count(['i.test = 1'])) {
          const left = (out[row.status] ?? 0) - row.count;
          if (left > 0) out[row.status] = left;
          else delete out[row.status];
        }
      })();
      return out;
    },
    matchInstances: async (filter, eligible, limit) => {
      const { terms, params, joinWorkflow } = buildInstanceWhere(filter);
      terms.push(`i.status IN (${eligible.map(() => '?').join(', ')})`);
      params.push(...eligible);
      const from = `FROM instance i ${joinWorkflow ? 'JOIN workflow w ON w.id = i.workflow_id' : ''} WHERE ${terms.join(' AND ')}`;
      const total = (cached(`SELECT count(*) AS n ${from}`).get(...params) as { n: number }).n;
      const ids = (cached(`SELECT i.id AS id ${from} ORDER BY i.id LIMIT ?`).all(...params, limit) as { id: number }[]).map((r) => r.id);
      return { ids, total };
    },
    maxInstanceId: async () => maxId.get()?.id ?? 0,
    instanceAges: async (now) => toAgeRows(ages.all({ day: now - AGE_BOUNDS_MS[0], week: now - AGE_BOUNDS_MS[1], month: now - AGE_BOUNDS_MS[2] })),
    history: async (id, afterId, limit): Promise<HistoryEvent[]> =>
      history.all(id, afterId, limit).map((h) => ({ id: h.id, nodeId: h.node_id, type: h.type, at: h.at, attempt: h.attempt, actor: h.actor, data: parse(h.data_json) })),
    approvals: async (o) => approvals(o),
    oldestWaiting: async () => {
      const id = oldestWaitingId.get()?.id;
      return id === undefined ? null : (list({ ids: [id], limit: 1 })[0] ?? null);
    },
    metrics: async () => {
      const byStatus: Record<string, number> = {};
      for (const c of counts.all()) byStatus[c.status] = c.count;
      return { counts: byStatus, queue: queue.get() ?? {}, durations: durations.all(), failures: failures.all(), deadLetters: deadLetters.all(50) };
    },
    series: async (from, to, bucketMs, workflow) => series(from, to, bucketMs, workflow),
    workflowSummaries: async () => workflows.summaries(),
    workflowVersion: async (name, version) => (version === undefined ? workflows.latest(name) : workflows.byVersion(name, version)),
    workflowVersions: async (name) => workflows.versions(name),
    workflowById: async (id) => workflows.byId(id),
    nextDue: async () => nextDue.get()?.at ?? null,
    workflowWithWork: async (now, except) => withWork.get(now, JSON.stringify(except))?.id,
  };
}
