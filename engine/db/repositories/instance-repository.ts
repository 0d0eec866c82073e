/**
 * Read queries over instances, their node states, history and metrics: what the CLI, the
 * monitor and the dashboard show. Paged by keyset (id), so page N of 100,000 rows costs the same
 * as page 1.
 *
 * The list answers "why is it stuck" in the same statement: one correlated subquery per row
 * gathers the instance's current node states (a primary-key range of `node_state`) as JSON, and
 * {@link describeStuck} turns them into columns at this edge (current nodes, attempt n of m, next
 * retry, what it waits for, since when, the suspension or failure reason).
 */
import type Database from 'better-sqlite3';
import type { WaitingFor } from '../../vocabulary';
import type { Stmt } from './runtime-repository';

/** An instance row as lists show it. */
export interface InstanceListRow {
  id: number;
  workflow: string;
  workflow_version: number;
  workflow_id: number;
  status: string;
  business_key: string | null;
  created_at: number;
  started_at: number | null;
  ended_at: number | null;
  updated_at: number;
  version: number;
  error_json: string | null;
  suspension_json: string | null;
  /**
   * The instance's current node states as a JSON array of
   * `[node_id, status, attempt, attempt_limit, wait, started_at]` (open, compensating and failed
   * nodes; null for COMPLETED and CANCELLED instances). Read it with {@link describeStuck}.
   */
  nodes_json: string | null;
}


/** "Why is it stuck": the list's extra columns, derived from {@link InstanceListRow.nodes_json}. Times are epoch ms. */
export interface StuckInfo {
  /** Node ids running, ready, waiting, retrying or compensating now; for FAILED and SUSPENDED instances, the failed ones. */
  currentNodes: string[];
  /** The attempt of the most telling current node (retrying before running before waiting), and its limit. */
  attempt: number | null;
  maxAttempts: number | null;
  /** When the next attempt of a retrying node is due. */
  nextRetryAt: number | null;
  waitingFor: WaitingFor | null;
  /** Since when it waits (the waiting node's start, or the suspension). */
  waitingSince: number | null;
  /** When the wait ends by itself: a timer's due time, an approval's timeout, the next retry. */
  waitingUntil: number | null;
  /** Why it is SUSPENDED or FAILED, as one line. */
  reason: string | null;
}

/** A full instance row. */
export interface InstanceDetailRow extends InstanceListRow {
  variables_json: string;
  /** The start variables (stored once while they equal `variables_json`: the query resolves that). */
  input_json: string;
  deadline_at: number | null;
  end_status: string | null;
}

/** A node_state row as details show it. */
export interface NodeStateDetailRow {
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
  version: number;
  next_run_at: number | null;
}

/** A history row. */
export interface HistoryRow {
  id: number;
  instance_id: number | null;
  node_id: string | null;
  type: string;
  at: number;
  attempt: number | null;
  actor: string | null;
  data_json: string | null;
}

/** Filter of {@link InstanceRepository.list}. Times are epoch ms, inclusive. */
export interface InstanceFilter {
  status?: string[];
  workflow?: string;
  workflowVersion?: number;
  createdFrom?: number;
  createdTo?: number;
  /** Matches the id, the business key, the error or the suspension text. */
  text?: string;
  /** Only instances waiting for this (see {@link WaitingFor}). */
  waitingFor?: WaitingFor;
  /** Only instances whose current nodes (as {@link StuckInfo.currentNodes}) include this node id. */
  node?: string;
  /** Only these instance ids (a live view refreshing the rows it shows). */
  ids?: number[];
  /** Keyset paging: rows with id < beforeId (lists are newest first). */
  beforeId?: number;
  /** Rows with id > afterId: what is new since a page was loaded. */
  afterId?: number;
  /** Only rows with id <= upToId (a bulk action touches what its preview counted, not newer rows). */
  upToId?: number;
  /** Page size, 1–1000 (default 50). */
  limit?: number;
}

/** One approval waiting for a person (the Approvals inbox). Times are epoch ms. */
export interface ApprovalRow {
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

/** One time bucket of {@link InstanceRepository.series}: counts and duration percentiles (ms). */
export interface SeriesRow {
  bucket: number;
  started: number;
  completed: number;
  failed: number;
  cancelled: number;
  p50_ms: number | null;
  p99_ms: number | null;
}

/** A where clause built from a filter: SQL terms (joined by AND), their parameters, whether `workflow w` must be joined. */
export interface WhereClause {
  terms: string[];
  params: unknown[];
  joinWorkflow: boolean;
}

/** Node states that count as "current" for an instance that is still going (see {@link StuckInfo}). */
const CURRENT_NODE_SQL = `('READY', 'RUNNING', 'WAITING', 'RETRYING', 'COMPENSATING')`;

/**
 * The WHERE terms of an instance filter over `instance i` (and `workflow w` when it names a
 * workflow or version): the one meaning of a filter for the list, the status counts and bulk
 * actions. `parts` picks which kinds of terms to include (`status`, `paging`: beforeId, afterId,
 * upToId, ids), so counts can leave the status out.
 */
export function buildInstanceWhere(filter: InstanceFilter, parts: { status?: boolean; paging?: boolean } = {}): WhereClause {
  const terms: string[] = [];
  const params: unknown[] = [];
  let joinWorkflow = false;
  if (parts.status !== false && filter.status && filter.status.length > 0) {
    terms.push(`i.status IN (${filter.status.map(() => '?').join(', ')})`);
    params.push(...filter.status);
  }
  if (filter.workflow !== undefined) {
    terms.push('w.name = ?');
    params.push(filter.workflow);
    joinWorkflow = true;
  }
  if (filter.workflowVersion !== undefined) {
    terms.push('w.version = ?');
    params.push(filter.workflowVersion);
    joinWorkflow = true;
  }
  if (filter.createdFrom !== undefined) {
    terms.push('i.created_at >= ?');
    params.push(filter.createdFrom);
  }
  if (filter.createdTo !== undefined) {
    terms.push('i.created_at <= ?');
    params.push(filter.createdTo);
  }
  if (filter.text !== undefined && filter.text !== '') {
    terms.push(
      `(CAST(i.id AS TEXT) = ? OR i.business_key LIKE ? ESCAPE '\\' OR i.error_json LIKE ? ESCAPE '\\' OR i.suspension_json LIKE ? ESCAPE '\\')`,
    );
    const like = `%${filter.text.replace(/[\\%_]/g, (m) => `\\${m}`)}%`;
    params.push(filter.text, like, like, like);
  }
  switch (filter.waitingFor) {
    case undefined:
      break;
    case 'person':
      terms.push(`i.status = 'SUSPENDED'`);
      break;
    case 'retry':
      terms.push(`i.status IN ('RUNNING', 'WAITING') AND EXISTS (SELECT 1 FROM node_state n WHERE n.instance_id = i.id AND n.status = 'RETRYING')`);
      break;
    default:
      terms.push(
        `i.status IN ('RUNNING', 'WAITING') AND EXISTS (SELECT 1 FROM node_state n WHERE n.instance_id = i.id AND n.status = 'WAITING' AND json_extract(n.wait_json, '$.kind') = ?)`,
      );
      params.push(filter.waitingFor);
  }
  if (filter.node !== undefined) {
    terms.push(
      `EXISTS (SELECT 1 FROM node_state n WHERE n.instance_id = i.id AND n.node_id = ?
         AND (n.status IN ${CURRENT_NODE_SQL} OR (n.status = 'FAILED' AND i.status IN ('FAILED', 'SUSPENDED'))))`,
    );
    params.push(filter.node);
  }
  if (parts.paging !== false) {
    if (filter.ids !== undefined) {
      // An empty id list matches nothing (not everything).
      terms.push(filter.ids.length === 0 ? '0' : `i.id IN (${filter.ids.map(() => '?').join(', ')})`);
      params.push(...filter.ids);
    }
    if (filter.beforeId !== undefined) {
      terms.push('i.id < ?');
      params.push(filter.beforeId);
    }
    if (filter.afterId !== undefined) {
      terms.push('i.id > ?');
      params.push(filter.afterId);
    }
    if (filter.upToId !== undefined) {
      terms.push('i.id <= ?');
      params.push(filter.upToId);
    }
  }
  return { terms, params, joinWorkflow };
}

type NodeTuple = [string, string, number, number, { kind?: string; until?: number; timeoutAt?: number } | null, number | null];

/** Order in which current nodes are named: the most telling first. */
const STATUS_RANK: Record<string, number> = { RETRYING: 0, FAILED: 1, COMPENSATING: 2, RUNNING: 3, WAITING: 4, READY: 5 };

function errorMessage(error: unknown): string {
  if (typeof error === 'object' && error !== null) {
    const e = error as { code?: unknown; message?: unknown };
    const message = typeof e.message === 'string' ? e.message : JSON.stringify(error);
    return typeof e.code === 'string' ? `${e.code}: ${message}` : message;
  }
  return String(error);
}

/**
 * The "why is it stuck" columns of a list row (see {@link StuckInfo}), from its status,
 * `nodes_json`, `suspension_json` and `error_json`. Pure: no query.
 */
export function describeStuck(row: Pick<InstanceListRow, 'status' | 'nodes_json' | 'suspension_json' | 'error_json'>): StuckInfo {
  const out: StuckInfo = {
    currentNodes: [],
    attempt: null,
    maxAttempts: null,
    nextRetryAt: null,
    waitingFor: null,
    waitingSince: null,
    waitingUntil: null,
    reason: null,
  };
  const failedCount = row.status === 'FAILED' || row.status === 'SUSPENDED';
  const nodes = (row.nodes_json === null ? [] : (JSON.parse(row.nodes_json) as NodeTuple[]))
    .filter((n) => n[1] !== 'FAILED' || failedCount)
    .sort((a, b) => (STATUS_RANK[a[1]] ?? 9) - (STATUS_RANK[b[1]] ?? 9) || a[0].localeCompare(b[0]));
  out.currentNodes = nodes.map((n) => n[0]);
  const focus = nodes[0];
  if (focus) {
    out.attempt = focus[2];
    out.maxAttempts = focus[3];
  }
  for (const [, status, , , wait, startedAt] of nodes) {
    if (status === 'RETRYING' && typeof wait?.until === 'number') {
      out.nextRetryAt = out.nextRetryAt === null ? wait.until : Math.min(out.nextRetryAt, wait.until);
    }
    if (status === 'WAITING' && (wait?.kind === 'approval' || wait?.kind === 'timer')) {
      // An approval outranks a timer: a person is what it waits for.
      if (out.waitingFor !== 'approval') {
        out.waitingFor = wait.kind;
        out.waitingSince = startedAt;
        out.waitingUntil = (wait.kind === 'timer' ? wait.until : wait.timeoutAt) ?? null;
      }
    }
  }
  if (out.waitingFor === null && out.nextRetryAt !== null && !nodes.some((n) => n[1] === 'RUNNING' || n[1] === 'READY')) {
    out.waitingFor = 'retry';
    out.waitingUntil = out.nextRetryAt;
  }
  if (row.status === 'SUSPENDED' && row.suspension_json !== null) {
    const s = JSON.parse(row.suspension_json) as { kind?: string; nodeId?: string; error?: unknown; attempts?: number; at?: number };
    out.waitingFor = 'person';
    out.waitingSince = s.at ?? null;
    out.waitingUntil = null;
    const what = s.kind === 'compensation' ? `compensation of "${s.nodeId ?? '?'}"` : `"${s.nodeId ?? '?'}"`;
    const tries = s.attempts === undefined ? '' : ` after ${s.attempts} attempt${s.attempts === 1 ? '' : 's'}`;
    out.reason = `${what} failed${tries}: ${errorMessage(s.error)}`;
    // The suspended step comes first; a failed compensation is what stands, not the failure that started the chain.
    const rest = out.currentNodes.filter((id) => id !== s.nodeId && (s.kind !== 'compensation' || !nodes.some((n) => n[0] === id && n[1] === 'FAILED')));
    out.currentNodes = s.nodeId === undefined ? rest : [s.nodeId, ...rest];
    // Attempt n of m is the suspended step's (a failed compensation used up all of its attempts).
    if (s.attempts !== undefined) {
      out.attempt = s.attempts;
      out.maxAttempts = s.kind === 'compensation' ? s.attempts : (nodes.find((n) => n[0] === s.nodeId)?.[3] ?? out.maxAttempts);
    }
  } else if (row.status === 'FAILED' && row.error_json !== null) {
    out.reason = errorMessage(JSON.parse(row.error_json));
  }
  return out;
}

/** Prepared read queries; see {@link createInstanceRepository}. */
export type InstanceRepository = ReturnType<typeof createInstanceRepository>;

const LIST_COLS = `i.id, w.name AS workflow, w.version AS workflow_version, i.workflow_id, i.status, i.business_key,
  i.created_at, i.started_at, i.ended_at, i.updated_at, i.version, i.error_json, i.suspension_json`;

/** The current node states of `i` as JSON (see {@link InstanceListRow.nodes_json}); a primary-key range per row. */
const NODES_COL = `CASE WHEN i.status IN ('COMPLETED', 'CANCELLED') THEN NULL ELSE
  (SELECT json_group_array(json_array(n.node_id, n.status, n.attempt, n.attempt_limit, json(n.wait_json), n.started_at))
     FROM node_state n WHERE n.instance_id = i.id AND (n.status IN ${CURRENT_NODE_SQL} OR n.status = 'FAILED')) END AS nodes_json`;

/** Prepares the read queries on `db`. */
export function createInstanceRepository(db: Database.Database) {
  const prep = <P extends unknown[] = [], R = unknown>(sql: string): Stmt<P, R> => db.prepare<P, R>(sql);
  const get = prep<[number], InstanceDetailRow>(
    `SELECT ${LIST_COLS}, i.variables_json, CASE WHEN i.input_json = '' THEN i.variables_json ELSE i.input_json END AS input_json, i.deadline_at, i.end_status
       FROM instance i JOIN workflow w ON w.id = i.workflow_id WHERE i.id = ?`,
  );
  const nodes = prep<[number], NodeStateDetailRow>(
    `SELECT n.node_id, n.status, n.attempt, n.attempt_limit, n.output_json, n.error_json, n.wait_json, n.completed_seq,
            n.started_at, n.ended_at, n.version,
            (SELECT min(s.next_run_at) FROM schedule s WHERE s.instance_id = n.instance_id AND s.node_id = n.node_id
               AND s.lease_owner IS NULL) AS next_run_at
       FROM node_state n WHERE n.instance_id = ?`,
  );
  const history = prep<[number, number, number], HistoryRow>(
    `SELECT id, instance_id, node_id, type, at, attempt, actor, data_json FROM history
      WHERE instance_id = ? AND id > ? ORDER BY id LIMIT ?`,
  );
  const counts = prep<[], { status: string; count: number }>(`SELECT status, count FROM v_instance_counts`);
  const queue = prep<[], Record<string, number>>(`SELECT * FROM v_queue`);
  const durations = prep<[], Record<string, unknown>>(`SELECT * FROM v_workflow_durations`);
  const failures = prep<[], Record<string, unknown>>(`SELECT * FROM v_failures`);
  const deadLetters = prep<[number], Record<string, unknown>>(
    `SELECT id, instance_id, node_id, kind, attempts, error_json, created_at FROM dead_letter ORDER BY id DESC LIMIT ?`,
  );
  const deadLettersWithWorkflow = prep<[number], Record<string, unknown>>(
    `SELECT d.id, d.instance_id, w.name AS workflow, d.node_id, d.kind, d.attempts, d.error_json, d.created_at
       FROM dead_letter d JOIN instance i ON i.id = d.instance_id JOIN workflow w ON w.id = i.workflow_id
      ORDER BY d.id DESC LIMIT ?`,
  );
  const maxId = prep<[], { id: number | null }>(`SELECT max(id) AS id FROM instance`);
  const oldestIn = prep<[string], { id: number | null }>(`SELECT min(id) AS id FROM instance WHERE status = ?`);
  // Statements built from a filter's shape, prepared once per shape.
  const statements = new Map<string, Stmt<unknown[], unknown>>();
  const cached = (sql: string): Stmt<unknown[], unknown> => {
    let stmt = statements.get(sql);
    if (!stmt) {
      stmt = prep<unknown[], unknown>(sql);
      statements.set(sql, stmt);
    }
    return stmt;
  };

  return {
    get: (id: number) => get.get(id),
    nodes: (id: number) => nodes.all(id),
    /** History rows of an instance after `afterId`, oldest first, at most `limit`. */
    history: (id: number, afterId = 0, limit = 10_000) => history.all(id, afterId, limit),
    counts: () => counts.all(),
    queue: () => queue.get() ?? {},
    durations: () => durations.all(),
    failures: () => failures.all(),
    deadLetters: (limit = 50) => deadLetters.all(limit),
    /** The latest dead letters with their instance's workflow name, newest first. */
    deadLettersWithWorkflow: (limit = 50) => deadLettersWithWorkflow.all(limit),
    /**
     * Instances matching `filter`, newest first (oldest first with `afterId`, so the rows just
     * after a loaded page come first), with their current node states (`nodes_json`).
     */
    list(filter: InstanceFilter = {}): InstanceListRow[] {
      const { terms, params } = buildInstanceWhere(filter);
      const limit = Math.min(1000, Math.max(1, Math.floor(filter.limit ?? 50)));
      const order = filter.afterId !== undefined && filter.beforeId === undefined ? 'ASC' : 'DESC';
      const sql = `SELECT ${LIST_COLS}, ${NODES_COL} FROM instance i JOIN workflow w ON w.id = i.workflow_id
        ${terms.length > 0 ? `WHERE ${terms.join(' AND ')}` : ''} ORDER BY i.id ${order} LIMIT ${limit}`;
      return cached(sql).all(...params) as InstanceListRow[];
    },
    /**
     * Ids of instances matching `filter` whose status is one of `eligible`, oldest first, at most
     * `limit` (bulk actions), and how many match in all.
     */
    matchIds(filter: InstanceFilter, eligible: readonly string[], limit: number): { ids: number[]; total: number } {
      const { terms, params, joinWorkflow } = buildInstanceWhere(filter);
      terms.push(`i.status IN (${eligible.map(() => '?').join(', ')})`);
      params.push(...eligible);
      const from = `FROM instance i ${joinWorkflow ? 'JOIN workflow w ON w.id = i.workflow_id' : ''} WHERE ${terms.join(' AND ')}`;
      const total = (cached(`SELECT count(*) AS n ${from}`).get(...params) as { n: number }).n;
      const ids = (cached(`SELECT i.id AS id ${from} ORDER BY i.id LIMIT ?`).all(...params, limit) as { id: number }[]).map((r) => r.id);
      return { ids, total };
    },
    /** The highest instance id (0 when there is none): what a bulk preview was counted up to. */
    maxId: () => maxId.get()?.id ?? 0,
    /** Approvals waiting for a person, the longest-waiting first, at most `limit`; and how many in all. */
    approvals(options: { workflow?: string; limit?: number } = {}): { rows: ApprovalRow[]; total: number } {
      const limit = Math.min(1000, Math.max(1, Math.floor(options.limit ?? 100)));
      const wf = options.workflow === undefined ? '' : 'AND w.name = ?';
      const params = options.workflow === undefined ? [] : [options.workflow];
      const from = `FROM instance i JOIN node_state n ON n.instance_id = i.id JOIN workflow w ON w.id = i.workflow_id
        WHERE i.status IN ('RUNNING', 'WAITING') AND n.status = 'WAITING' AND json_extract(n.wait_json, '$.kind') = 'approval' ${wf}`;
      const rows = cached(
        `SELECT i.id AS instance_id, w.name AS workflow, w.version AS workflow_version, i.workflow_id, i.business_key,
                i.version AS instance_version, n.node_id, nd.name AS node_name, n.wait_json, n.started_at, n.attempt
           ${from.replace('WHERE', 'LEFT JOIN node nd ON nd.workflow_id = i.workflow_id AND nd.node_id = n.node_id WHERE')}
          ORDER BY n.started_at, i.id LIMIT ${limit}`,
      ).all(...params) as ApprovalRow[];
      const total = (cached(`SELECT count(*) AS n ${from}`).get(...params) as { n: number }).n;
      return { rows, total };
    },
    /**
     * The live instance that has waited longest for something (WAITING or SUSPENDED; the one
     * started first), with its current nodes; undefined when none waits. Two index seeks.
     */
    oldestWaiting(): InstanceListRow | undefined {
      const ids = [oldestIn.get('WAITING')?.id, oldestIn.get('SUSPENDED')?.id].filter((id): id is number => typeof id === 'number');
      if (ids.length === 0) return undefined;
      return this.list({ ids: [Math.min(...ids)], limit: 1 })[0];
    },
    /**
     * Instances ended in [from, to) per bucket of `bucketMs` (bucket = floor((ended_at − from) /
     * bucketMs), cast: better-sqlite3 may bind a JS number as REAL): completed, failed and cancelled counts and the P50/P99 of completed durations
     * (ended − created, nearest rank); `started` counts instances created in the bucket. Buckets
     * without any are absent.
     */
    series(from: number, to: number, bucketMs: number, workflow?: string): SeriesRow[] {
      const wf = workflow === undefined ? '' : 'AND i.workflow_id IN (SELECT id FROM workflow WHERE name = ?)';
      const p = (...xs: unknown[]) => (workflow === undefined ? xs : [...xs, workflow]);
      const ended = cached(
        `WITH e AS MATERIALIZED (
           SELECT CAST((i.ended_at - ?) / ? AS INTEGER) AS bucket, i.status AS status, i.ended_at - i.created_at AS d
             FROM instance i WHERE i.ended_at >= ? AND i.ended_at < ? ${wf}
         ), r AS (
           SELECT bucket, d, row_number() OVER w AS rn, count(*) OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS n
             FROM e WHERE status = 'COMPLETED' WINDOW w AS (PARTITION BY bucket ORDER BY d)
         ), pct AS (
           SELECT bucket, min(CASE WHEN rn >= (n * 50 + 99) / 100 THEN d END) AS p50_ms,
                  min(CASE WHEN rn >= (n * 99 + 99) / 100 THEN d END) AS p99_ms
             FROM r GROUP BY bucket
         )
         SELECT e.bucket AS bucket, sum(e.status = 'COMPLETED') AS completed, sum(e.status = 'FAILED') AS failed,
                sum(e.status = 'CANCELLED') AS cancelled, pct.p50_ms AS p50_ms, pct.p99_ms AS p99_ms
           FROM e LEFT JOIN pct ON pct.bucket = e.bucket GROUP BY e.bucket`,
      ).all(...p(from, bucketMs, from, to)) as Omit<SeriesRow, 'started'>[];
      const started = cached(
        `SELECT CAST((i.created_at - ?) / ? AS INTEGER) AS bucket, count(*) AS n FROM instance i
          WHERE i.created_at >= ? AND i.created_at < ? ${wf} GROUP BY bucket`,
      ).all(...p(from, bucketMs, from, to)) as { bucket: number; n: number }[];
      const byBucket = new Map<number, SeriesRow>();
      for (const r of ended) byBucket.set(r.bucket, { ...r, started: 0 });
      for (const r of started) {
        const row = byBucket.get(r.bucket) ?? { bucket: r.bucket, started: 0, completed: 0, failed: 0, cancelled: 0, p50_ms: null, p99_ms: null };
        row.started = r.n;
        byBucket.set(r.bucket, row);
      }
      return [...byBucket.values()].sort((a, b) => a.bucket - b.bucket);
    },
  };
}
