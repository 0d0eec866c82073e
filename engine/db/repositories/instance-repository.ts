/**
 * Read queries over instances, their node states, history and metrics: what the CLI, the
 * monitor and the dashboard show. Paged by keyset (id), so page N of 100,000 rows costs the same
 * as page 1.
 */
import type Database from 'better-sqlite3';
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
}

/** A full instance row. */
export interface InstanceDetailRow extends InstanceListRow {
  variables_json: string;
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
  /** Matches the id, the business key or the error text. */
  text?: string;
  /** Keyset paging: rows with id < beforeId (lists are newest first). */
  beforeId?: number;
  /** Page size, 1–1000 (default 50). */
  limit?: number;
}

/** Prepared read queries; see {@link createInstanceRepository}. */
export type InstanceRepository = ReturnType<typeof createInstanceRepository>;

const LIST_COLS = `i.id, w.name AS workflow, w.version AS workflow_version, i.workflow_id, i.status, i.business_key,
  i.created_at, i.started_at, i.ended_at, i.updated_at, i.version, i.error_json, i.suspension_json`;

/** Prepares the read queries on `db`. */
export function createInstanceRepository(db: Database.Database) {
  const prep = <P extends unknown[] = [], R = unknown>(sql: string): Stmt<P, R> => db.prepare<P, R>(sql);
  const get = prep<[number], InstanceDetailRow>(
    `SELECT ${LIST_COLS}, i.variables_json, i.input_json, i.deadline_at, i.end_status
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
  const listCache = new Map<string, Stmt<unknown[], InstanceListRow>>();

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
    /** Instances matching `filter`, newest first. */
    list(filter: InstanceFilter = {}): InstanceListRow[] {
      const where: string[] = [];
      const params: unknown[] = [];
      if (filter.status && filter.status.length > 0) {
        where.push(`i.status IN (${filter.status.map(() => '?').join(', ')})`);
        params.push(...filter.status);
      }
      if (filter.workflow !== undefined) {
        where.push('w.name = ?');
        params.push(filter.workflow);
      }
      if (filter.workflowVersion !== undefined) {
        where.push('w.version = ?');
        params.push(filter.workflowVersion);
      }
      if (filter.createdFrom !== undefined) {
        where.push('i.created_at >= ?');
        params.push(filter.createdFrom);
      }
      if (filter.createdTo !== undefined) {
        where.push('i.created_at <= ?');
        params.push(filter.createdTo);
      }
      if (filter.text !== undefined && filter.text !== '') {
        where.push(`(CAST(i.id AS TEXT) = ? OR i.business_key LIKE ? ESCAPE '\\' OR i.error_json LIKE ? ESCAPE '\\')`);
        const like = `%${filter.text.replace(/[\\%_]/g, (m) => `\\${m}`)}%`;
        params.push(filter.text, like, like);
      }
      if (filter.beforeId !== undefined) {
        where.push('i.id < ?');
        params.push(filter.beforeId);
      }
      const limit = Math.min(1000, Math.max(1, Math.floor(filter.limit ?? 50)));
      const sql = `SELECT ${LIST_COLS} FROM instance i JOIN workflow w ON w.id = i.workflow_id
        ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY i.id DESC LIMIT ${limit}`;
      let stmt = listCache.get(sql);
      if (!stmt) {
        stmt = prep<unknown[], InstanceListRow>(sql);
        listCache.set(sql, stmt);
      }
      return stmt.all(...params);
    },
  };
}
