/**
 * PostgreSQL: workflow versions inside a write transaction ({@link WorkflowQueries}), the
 * statements of engine/db/queries/workflows.ts translated (the reads of them outside a transaction
 * are the read model's).
 *
 * Every query that names a workflow takes the lock of that name first (./context.ts), so two
 * saves of one workflow in two processes number their versions one after the other, as SQLite's
 * single writer does; a save's node rows go in one statement (`unnest` of arrays).
 */
import type { WorkflowNodeRow, WorkflowQueries, WorkflowVersionRow } from '../../../store/port';
import type { PgTx } from './context';

const COLS = `id, name, version, dsl_json AS "dslJson", definition_hash AS "definitionHash", created_at AS "createdAt"`;
const LIVE = 'deleted_at IS NULL';

const LATEST = `SELECT ${COLS} FROM workflow WHERE name = $1 AND ${LIVE} ORDER BY version DESC LIMIT 1`;
const BY_ID = `SELECT ${COLS} FROM workflow WHERE id = $1`;
const VERSIONS = `SELECT ${COLS} FROM workflow WHERE name = $1 AND ${LIVE} ORDER BY version DESC`;
const MAX_VERSION = `SELECT max(version) AS v FROM workflow WHERE name = $1`;
const ANY_ROW = `SELECT id FROM workflow WHERE name = $1 LIMIT 1`;
const UPDATE_DSL = `UPDATE workflow SET dsl_json = $1 WHERE id = $2`;
const RENAME = `UPDATE workflow SET name = $1, dsl_json = $2, definition_hash = $3 WHERE id = $4`;
const MARK_DELETED = `UPDATE workflow SET deleted_at = $1 WHERE name = $2 AND ${LIVE}`;
const LIVE_INSTANCES = `SELECT count(*) AS n FROM instance i JOIN workflow w ON w.id = i.workflow_id
  WHERE w.name = $1 AND w.${LIVE} AND i.status NOT IN ('COMPLETED', 'FAILED', 'CANCELLED')`;
const INSERT = `INSERT INTO workflow (name, version, dsl_json, definition_hash, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING id`;
const INSERT_NODES = `INSERT INTO node (workflow_id, node_id, type, name, retry_json, timeout_ms, scope_json, on_failure, incoming)
  SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::text[], $8::text[], $9::int[])`;

/** {@link WorkflowQueries} over the transaction `tx`. */
export function createWorkflowQueries(tx: PgTx): WorkflowQueries {
  /** Rows of `sql` about workflow `name` (its lock taken first). */
  const named = <R>(sql: string, name: string, ...rest: unknown[]): R[] => {
    tx.lockWorkflow(name);
    return tx.run<R>(sql, [...rest, name]).rows;
  };
  return {
    latest: (name) => named<WorkflowVersionRow>(LATEST, name)[0],
    versions: (name) => named<WorkflowVersionRow>(VERSIONS, name),
    maxVersion: (name) => named<{ v: number | null }>(MAX_VERSION, name)[0]?.v ?? 0,
    nameUsed: (name) => named(ANY_ROW, name).length > 0,
    liveInstances: (name) => named<{ n: number }>(LIVE_INSTANCES, name)[0]?.n ?? 0,
    updateDsl: (id, dslJson) => tx.exec(UPDATE_DSL, [dslJson, id]),
    renameVersion: ({ id, name, dslJson, hash }) => {
      tx.lockWorkflow(name);
      tx.exec(RENAME, [name, dslJson, hash, id]);
    },
    markDeleted: (name, now) => {
      tx.lockWorkflow(name);
      return tx.run(MARK_DELETED, [now, name]).rowCount;
    },
    insert({ name, version, dslJson, hash, now, nodes }: { name: string; version: number; dslJson: string; hash: string; now: number; nodes: WorkflowNodeRow[] }): number {
      tx.lockWorkflow(name);
      const id = (tx.run<{ id: number }>(INSERT, [name, version, dslJson, hash, now]).rows[0] as { id: number }).id;
      if (nodes.length > 0) {
        const col = <K extends keyof WorkflowNodeRow>(k: K): WorkflowNodeRow[K][] => nodes.map((n) => n[k]);
        tx.exec(INSERT_NODES, [
          id,
          col('nodeId'),
          col('type'),
          col('name'),
          col('retryJson'),
          col('timeoutMs'),
          col('scopeJson'),
          col('onFailure'),
          col('incoming'),
        ]);
      }
      return id;
    },
    byId: (id) => tx.run<WorkflowVersionRow>(BY_ID, [id]).rows[0],
  };
}
