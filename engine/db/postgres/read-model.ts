/**
 * PostgreSQL: the read model ({@link ReadModel}) — what the CLI, the monitor and the dashboard
 * show — asynchronously over a `pg.Pool` on the engine's thread, answering exactly what the SQLite
 * read model (engine/db/queries/read-model.ts) answers for the same data. Each statement is the
 * translation of SQLite's: `$n` parameters, `::jsonb ->>` for json_extract, json_agg for
 * json_group_array, `NULLS FIRST` where SQLite's ascending order puts NULLs first, and an explicit
 * `ORDER BY … COLLATE "C"` where SQLite's answer comes in primary-key or group order. Lists are
 * paged by keyset (id); the list's "why is it stuck" columns come from the same statement
 * (./stuck.ts). The dashboard's reads are in ./dashboard.ts.
 *
 * Reads see committed data only (each statement its own READ COMMITTED snapshot); a list and the
 * counts beside it may therefore differ by a commit, as on SQLite between two reads.
 */
import type { HistoryEvent, InstanceListItem } from '../../api/contract';
import { AGE_BOUNDS_MS, AGE_BUCKET_SQL, toAgeRows, type ApprovalRow, type FeedReads, type TimeTravelReads, type ScheduleReads, type InstanceFilter, type InstanceView, type ReadModel } from '../../store/port';
import type { Suspension } from '../../store/queries';
import { START_INPUT_SQL } from '../queries/instances';
import { toChildGroups, toChildResult, type ChildCountRow, type RawChildResult } from '../queries/children';
import { readMetrics, readSeries, readWorkflowById, readWorkflowSummaries, readWorkflowVersion, readWorkflowVersions } from './dashboard';
import { buildInstanceWherePg } from './instance-filter';
import { rowOf, rowsOf, type PgQueryable } from './pg-read';
import { describeStuck, NODES_COL, type StuckSource } from './stuck';

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

interface ApprovalSqlRow {
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
}

const LIST_COLS = `i.id, w.name AS workflow, w.version AS workflow_version, i.status, i.business_key,
  i.created_at, i.started_at, i.ended_at, i.updated_at, i.version, i.error_json, i.suspension_json, i.parent_id, i.parent_node_id, i.paused_at,
  i.held, i.priority, i.test, CASE WHEN i.held = 1 THEN (w.dsl_json::jsonb -> 'concurrency' ->> 'limit')::int END AS concurrency_limit,
  CASE WHEN i.held = 1 THEN (SELECT count(*)::int FROM instance o WHERE o.concurrency_key = i.concurrency_key AND o.held = 0
    AND o.status NOT IN ('COMPLETED', 'FAILED', 'CANCELLED')) END AS concurrency_in_use`;

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

const where = (terms: string[]) => (terms.length > 0 ? `WHERE ${terms.join(' AND ')}` : '');

/**
 * Builds the PostgreSQL {@link ReadModel} over `db` (the storage's pool; it is not ended here).
 * Every method answers the shapes and values the SQLite read model does (API shapes, camelCase,
 * JSON parsed, epoch ms); errors are the driver's (`pg.DatabaseError` with its SQLSTATE `code`),
 * for the storage to type.
 */
export function createPostgresReadModel(db: PgQueryable): Omit<ReadModel, FeedReads | TimeTravelReads | ScheduleReads> {
  async function list(filter: InstanceFilter): Promise<InstanceListItem[]> {
    const { terms, params } = buildInstanceWherePg(filter);
    const limit = Math.min(1000, Math.max(1, Math.floor(filter.limit ?? 50)));
    const order = filter.afterId !== undefined && filter.beforeId === undefined ? 'ASC' : 'DESC';
    const rows = await rowsOf<ListRow>(
      db,
      `SELECT ${LIST_COLS}, ${NODES_COL} FROM instance i JOIN workflow w ON w.id = i.workflow_id
        ${where(terms)} ORDER BY i.id ${order} LIMIT ${limit}`,
      params,
    );
    return rows.map(listItem);
  }

  async function instance(id: number): Promise<InstanceView | undefined> {
    const [row, nodes, children] = await Promise.all([
      rowOf<DetailRow>(
        db,
        `SELECT ${LIST_COLS}, i.workflow_id, i.variables_json, ${START_INPUT_SQL} AS input_json, i.deadline_at, i.pins_json
           FROM instance i JOIN workflow w ON w.id = i.workflow_id WHERE i.id = $1`,
        [id],
      ),
      rowsOf<NodeDetailRow>(
        db,
        `SELECT n.node_id, n.status, n.attempt, n.attempt_limit, n.output_json, n.error_json, n.wait_json, n.completed_seq,
                n.started_at, n.ended_at,
                (SELECT min(s.next_run_at) FROM schedule s WHERE s.instance_id = n.instance_id AND s.node_id = n.node_id
                   AND s.lease_owner IS NULL) AS next_run_at
           FROM node_state n WHERE n.instance_id = $1 ORDER BY n.node_id COLLATE "C"`,
        [id],
      ),
      rowsOf<ChildCountRow>(
        db,
        `SELECT c.node_id AS "nodeId", c.attempt, coalesce(i.status, 'QUEUED') AS status, count(*) AS n,
                max(w.name) AS workflow, max(w.version) AS "workflowVersion"
           FROM child c JOIN node_state ns ON ns.instance_id = c.instance_id AND ns.node_id = c.node_id AND ns.attempt = c.attempt
           LEFT JOIN instance i ON i.id = c.child_id LEFT JOIN workflow w ON w.id = i.workflow_id
          WHERE c.instance_id = $1 GROUP BY c.node_id, c.attempt, coalesce(i.status, 'QUEUED')
          ORDER BY c.node_id COLLATE "C", c.attempt, coalesce(i.status, 'QUEUED') COLLATE "C"`,
        [id],
      ),
    ]);
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
      children: toChildGroups(children),
      nodes: nodes.map((n) => {
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

  async function approvals(o: { workflow?: string; limit?: number }): Promise<{ rows: ApprovalRow[]; total: number }> {
    const limit = Math.min(1000, Math.max(1, Math.floor(o.limit ?? 100)));
    const wf = o.workflow === undefined ? '' : 'AND w.name = $1';
    const params = o.workflow === undefined ? [] : [o.workflow];
    const cond = `i.status IN ('RUNNING', 'WAITING') AND n.status = 'WAITING' AND (n.wait_json::jsonb ->> 'kind') = 'approval' ${wf}`;
    const joins = 'FROM instance i JOIN node_state n ON n.instance_id = i.id JOIN workflow w ON w.id = i.workflow_id';
    const [rows, count] = await Promise.all([
      rowsOf<ApprovalSqlRow>(
        db,
        `SELECT i.id AS instance_id, w.name AS workflow, w.version AS workflow_version, i.workflow_id, i.business_key,
                i.version AS instance_version, n.node_id, nd.name AS node_name, n.wait_json, n.started_at, n.attempt
           ${joins} LEFT JOIN node nd ON nd.workflow_id = i.workflow_id AND nd.node_id = n.node_id
          WHERE ${cond} ORDER BY n.started_at NULLS FIRST, i.id LIMIT ${limit}`,
        params,
      ),
      rowOf<{ n: number }>(db, `SELECT count(*) AS n ${joins} WHERE ${cond}`, params),
    ]);
    return {
      total: count?.n ?? 0,
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
    instance,
    instanceState: (id) => rowOf<{ id: number; status: string; version: number }>(db, `SELECT id, status, version FROM instance WHERE id = $1`, [id]),
    listInstances: list,
    childResults: async (instanceId, nodeId, attempt) =>
      (
        await rowsOf<RawChildResult>(
          db,
          `SELECT c.item_index AS "index", c.child_id AS "childId", i.status, i.variables_json AS "variablesJson", ${START_INPUT_SQL} AS "inputJson", i.error_json AS "errorJson"
             FROM child c LEFT JOIN instance i ON i.id = c.child_id
            WHERE c.instance_id = $1 AND c.node_id = $2 AND c.attempt = $3 ORDER BY c.item_index`,
          [instanceId, nodeId, attempt],
        )
      ).map(toChildResult),
    countByStatus: async (filter) => {
      const { terms, params, joinWorkflow } = buildInstanceWherePg(filter, { status: false, paging: false });
      const join = joinWorkflow ? 'JOIN workflow w ON w.id = i.workflow_id' : '';
      const rows = await rowsOf<{ status: string; count: number }>(
        db,
        `SELECT i.status AS status, count(*) AS count FROM instance i ${join} ${where(terms)} GROUP BY i.status ORDER BY i.status COLLATE "C"`,
        params,
      );
      const out: Record<string, number> = {};
      for (const row of rows) out[row.status] = row.count;
      return out;
    },
    matchInstances: async (filter, eligible, limit) => {
      const { terms, params, joinWorkflow } = buildInstanceWherePg(filter);
      terms.push(`i.status IN (${eligible.map((s) => `$${params.push(s)}`).join(', ')})`);
      const from = `FROM instance i ${joinWorkflow ? 'JOIN workflow w ON w.id = i.workflow_id' : ''} ${where(terms)}`;
      const [count, ids] = await Promise.all([
        rowOf<{ n: number }>(db, `SELECT count(*) AS n ${from}`, params),
        rowsOf<{ id: number }>(db, `SELECT i.id AS id ${from} ORDER BY i.id LIMIT $${params.length + 1}`, [...params, limit]),
      ]);
      return { ids: ids.map((r) => r.id), total: count?.n ?? 0 };
    },
    maxInstanceId: async () => (await rowOf<{ id: number | null }>(db, `SELECT max(id) AS id FROM instance`))?.id ?? 0,
    instanceAges: async (now) =>
      toAgeRows(
        await rowsOf<{ bucket: number; live: number; ended: number }>(
          db,
          `SELECT ${AGE_BUCKET_SQL(['$1', '$2', '$3'])} AS bucket, count(*) FILTER (WHERE ended_at IS NULL)::int AS live, count(*) FILTER (WHERE ended_at IS NOT NULL)::int AS ended FROM instance GROUP BY 1`,
          [now - AGE_BOUNDS_MS[0], now - AGE_BOUNDS_MS[1], now - AGE_BOUNDS_MS[2]],
        ),
      ),
    history: async (id, afterId, limit): Promise<HistoryEvent[]> =>
      (
        await rowsOf<HistoryRow>(
          db,
          `SELECT id, node_id, type, at, attempt, actor, data_json FROM history WHERE instance_id = $1 AND id > $2 ORDER BY id LIMIT $3`,
          [id, afterId, limit],
        )
      ).map((h) => ({ id: h.id, nodeId: h.node_id, type: h.type, at: h.at, attempt: h.attempt, actor: h.actor, data: parse(h.data_json) })),
    approvals,
    oldestWaiting: async () => {
      // The instance created first (the lower id of a tie), not the lowest id, as SQLite's read
      // model answers: ids and creation times disagree after a clock set back, a copy from another
      // database or a fork stamped earlier.
      const row = await rowOf<{ id: number }>(
        db,
        `SELECT id FROM instance WHERE status IN ('WAITING', 'SUSPENDED') ORDER BY created_at, id LIMIT 1`,
      );
      return row === undefined ? null : ((await list({ ids: [row.id], limit: 1 }))[0] ?? null);
    },
    metrics: () => readMetrics(db),
    series: (from, to, bucketMs, workflow) => readSeries(db, from, to, bucketMs, workflow),
    workflowSummaries: () => readWorkflowSummaries(db),
    workflowVersion: (name, version) => readWorkflowVersion(db, name, version),
    workflowVersions: (name) => readWorkflowVersions(db, name),
    workflowById: (id) => readWorkflowById(db, id),
    nextDue: async () => (await rowOf<{ at: number | null }>(db, `SELECT min(next_run_at) AS at FROM schedule`))?.at ?? null,
    workflowWithWork: async (now, except) =>
      (
        await rowOf<{ id: number }>(
          db,
          `SELECT i.workflow_id AS id FROM schedule s JOIN instance i ON i.id = s.instance_id
            WHERE s.paused_ms IS NULL AND (s.kind IN ('run', 'timer', 'compensate') OR s.next_run_at <= $1)
              AND i.workflow_id <> ALL($2::bigint[])
            LIMIT 1`,
          [now, except],
        )
      )?.id,
  };
}
