/**
 * PostgreSQL: the dashboard's reads of the read model — metrics (the observability views of
 * migration 1), the time series, and the workflow list — each the translation of its SQLite
 * statement (engine/db/queries/read-model.ts, workflows.ts) giving the same rows for the same
 * data:
 * - SQLite's boolean sums (`sum(status = 'FAILED')`) are `count(*) FILTER (WHERE …)`;
 * - percentiles are the same nearest-rank rule (`rn >= (n * 50 + 99) / 100`, integer division);
 * - the series bucket is `trunc((t - from) / bucketMs)` in float8, as SQLite divides the REALs
 *   better-sqlite3 binds;
 * - rows come in the order SQLite's GROUP BY gives them (the group key, bytewise: `COLLATE "C"`);
 * - camelCase column names are quoted (PostgreSQL folds bare names to lower case).
 */
import type { WorkflowSummary } from '../../api/contract';
import type { Metrics } from '../../api/contract';
import type { SeriesRow, WorkflowVersionRow } from '../../store/port';
import { rowOf, rowsOf, type PgQueryable } from './pg-read';

const WORKFLOW_COLS = `id, name, version, dsl_json AS "dslJson", definition_hash AS "definitionHash", created_at AS "createdAt"`;
const LIVE = 'deleted_at IS NULL';

/** Counts by status, queue depth, durations, failures and the latest 50 dead letters (see {@link Metrics}). */
export async function readMetrics(db: PgQueryable): Promise<Omit<Metrics, 'oldestWaiting'>> {
  const [counts, queue, durations, failures, deadLetters] = await Promise.all([
    rowsOf<{ status: string; count: number }>(db, `SELECT status, count FROM v_instance_counts ORDER BY status COLLATE "C"`),
    rowOf<Record<string, number>>(db, `SELECT * FROM v_queue`),
    rowsOf<Record<string, unknown>>(db, `SELECT * FROM v_workflow_durations ORDER BY workflow COLLATE "C"`),
    rowsOf<Record<string, unknown>>(db, `SELECT * FROM v_failures ORDER BY workflow COLLATE "C"`),
    rowsOf<Record<string, unknown>>(
      db,
      `SELECT d.id, d.instance_id, w.name AS workflow, d.node_id, d.kind, d.attempts, d.error_json, d.created_at
         FROM dead_letter d JOIN instance i ON i.id = d.instance_id JOIN workflow w ON w.id = i.workflow_id
        WHERE i.test = 0 ORDER BY d.id DESC LIMIT $1`,
      [50],
    ),
  ]);
  const byStatus: Record<string, number> = {};
  for (const c of counts) byStatus[c.status] = c.count;
  return { counts: byStatus, queue: queue ?? {}, durations, failures, deadLetters };
}

/**
 * Instances ended (and started) in [from, to) per bucket of `bucketMs` (epoch ms), buckets
 * without any absent, ascending; `workflow` limits it to one workflow's versions.
 */
export async function readSeries(db: PgQueryable, from: number, to: number, bucketMs: number, workflow?: string): Promise<SeriesRow[]> {
  const params: unknown[] = [from, bucketMs, from, to];
  const wf = workflow === undefined ? '' : 'AND i.workflow_id IN (SELECT id FROM workflow WHERE name = $5)';
  if (workflow !== undefined) params.push(workflow);
  const bucket = (col: string) => `trunc((${col} - $1::float8) / $2::float8)::bigint`;
  const [ended, started] = await Promise.all([
    rowsOf<Omit<SeriesRow, 'started'>>(
      db,
      `WITH e AS MATERIALIZED (
         SELECT ${bucket('i.ended_at')} AS bucket, i.status AS status, i.ended_at - i.created_at AS d
           FROM instance i WHERE i.ended_at >= $3 AND i.ended_at < $4 AND i.test = 0 ${wf}
       ), r AS (
         SELECT bucket, d, row_number() OVER w AS rn, count(*) OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS n
           FROM e WHERE status = 'COMPLETED' WINDOW w AS (PARTITION BY bucket ORDER BY d)
       ), pct AS (
         SELECT bucket, min(CASE WHEN rn >= (n * 50 + 99) / 100 THEN d END) AS "p50Ms",
                min(CASE WHEN rn >= (n * 99 + 99) / 100 THEN d END) AS "p99Ms"
           FROM r GROUP BY bucket
       )
       SELECT e.bucket AS bucket, count(*) FILTER (WHERE e.status = 'COMPLETED') AS completed,
              count(*) FILTER (WHERE e.status = 'FAILED') AS failed, count(*) FILTER (WHERE e.status = 'CANCELLED') AS cancelled,
              min(pct."p50Ms") AS "p50Ms", min(pct."p99Ms") AS "p99Ms"
         FROM e LEFT JOIN pct ON pct.bucket = e.bucket GROUP BY e.bucket`,
      params,
    ),
    rowsOf<{ bucket: number; n: number }>(
      db,
      `SELECT ${bucket('i.created_at')} AS bucket, count(*) AS n FROM instance i
        WHERE i.created_at >= $3 AND i.created_at < $4 AND i.test = 0 ${wf} GROUP BY 1`,
      params,
    ),
  ]);
  const byBucket = new Map<number, SeriesRow>();
  for (const r of ended) byBucket.set(r.bucket, { ...r, started: 0 });
  for (const r of started) {
    const row = byBucket.get(r.bucket) ?? { bucket: r.bucket, started: 0, completed: 0, failed: 0, cancelled: 0, p50Ms: null, p99Ms: null };
    row.started = r.n;
    byBucket.set(r.bucket, row);
  }
  return [...byBucket.values()].sort((a, b) => a.bucket - b.bucket);
}

/** Every live workflow with its latest version and instance counts, by name (bytewise). */
export async function readWorkflowSummaries(db: PgQueryable): Promise<WorkflowSummary[]> {
  return rowsOf<WorkflowSummary>(
    db,
    `SELECT w.name AS name, max(w.version) AS "latestVersion",
            (SELECT id FROM workflow x WHERE x.name = w.name AND x.${LIVE} ORDER BY version DESC LIMIT 1) AS "latestId",
            count(*) AS versions, max(w.created_at) AS "updatedAt",
            (SELECT count(*) FROM instance i JOIN workflow y ON y.id = i.workflow_id WHERE y.name = w.name AND y.${LIVE}) AS instances,
            (SELECT count(*) FROM instance i JOIN workflow y ON y.id = i.workflow_id WHERE y.name = w.name AND y.${LIVE}
               AND i.status NOT IN ('COMPLETED', 'FAILED', 'CANCELLED')) AS "liveInstances"
       FROM workflow w WHERE w.${LIVE} GROUP BY w.name ORDER BY w.name COLLATE "C"`,
  );
}

/** A live workflow version: the latest when `version` is omitted. */
export async function readWorkflowVersion(db: PgQueryable, name: string, version?: number): Promise<WorkflowVersionRow | undefined> {
  return version === undefined
    ? rowOf<WorkflowVersionRow>(db, `SELECT ${WORKFLOW_COLS} FROM workflow WHERE name = $1 AND ${LIVE} ORDER BY version DESC LIMIT 1`, [name])
    : rowOf<WorkflowVersionRow>(db, `SELECT ${WORKFLOW_COLS} FROM workflow WHERE name = $1 AND version = $2 AND ${LIVE}`, [name, version]);
}

/** Live versions of a workflow, newest first. */
export async function readWorkflowVersions(db: PgQueryable, name: string): Promise<WorkflowVersionRow[]> {
  return rowsOf<WorkflowVersionRow>(db, `SELECT ${WORKFLOW_COLS} FROM workflow WHERE name = $1 AND ${LIVE} ORDER BY version DESC`, [name]);
}

/** Any workflow version by id (deleted ones too: their instances still run on them). */
export async function readWorkflowById(db: PgQueryable, id: number): Promise<WorkflowVersionRow | undefined> {
  return rowOf<WorkflowVersionRow>(db, `SELECT ${WORKFLOW_COLS} FROM workflow WHERE id = $1`, [id]);
}
