/**
 * Workflow versions: deploy, look up, list.
 *
 * A workflow is identified by name; each saved definition that differs from the latest (by its
 * definition hash, which ignores designer positions) becomes version latest+1. Versions are
 * immutable: instances stay on the version they started with.
 */
import type Database from 'better-sqlite3';
import type { Stmt } from './runtime-repository';

/** A `workflow` row. */
export interface WorkflowRow {
  id: number;
  name: string;
  version: number;
  dsl_json: string;
  definition_hash: string;
  created_at: number;
}

/** One `node` row to insert with a new version. */
export interface NodeRowInput {
  nodeId: string;
  type: string;
  name: string | null;
  retryJson: string;
  timeoutMs: number | null;
  scopeJson: string;
  onFailure: 'fail' | 'suspend';
  incoming: number;
}

/** Summary of a workflow for lists: its latest version and instance counts. */
export interface WorkflowSummaryRow {
  name: string;
  latest_version: number;
  latest_id: number;
  versions: number;
  updated_at: number;
  instances: number;
  live_instances: number;
}

/** Prepared workflow statements; see {@link createWorkflowRepository}. */
export type WorkflowRepository = ReturnType<typeof createWorkflowRepository>;

/** Prepares the workflow statements on `db`. Writes must run inside `RunnelDb.write`. */
export function createWorkflowRepository(db: Database.Database) {
  const prep = <P extends unknown[] = [], R = unknown>(sql: string): Stmt<P, R> => db.prepare<P, R>(sql);
  const cols = 'id, name, version, dsl_json, definition_hash, created_at';
  const latest = prep<[string], WorkflowRow>(`SELECT ${cols} FROM workflow WHERE name = ? ORDER BY version DESC LIMIT 1`);
  const byVersion = prep<[string, number], WorkflowRow>(`SELECT ${cols} FROM workflow WHERE name = ? AND version = ?`);
  const byId = prep<[number], WorkflowRow>(`SELECT ${cols} FROM workflow WHERE id = ?`);
  const versions = prep<[string], WorkflowRow>(`SELECT ${cols} FROM workflow WHERE name = ? ORDER BY version DESC`);
  const insert = prep<[string, number, string, string, number]>(
    `INSERT INTO workflow (name, version, dsl_json, definition_hash, created_at) VALUES (?, ?, ?, ?, ?)`,
  );
  const insertNode = prep<[number, string, string, string | null, string, number | null, string, string, number]>(
    `INSERT INTO node (workflow_id, node_id, type, name, retry_json, timeout_ms, scope_json, on_failure, incoming)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const summaries = prep<[], WorkflowSummaryRow>(
    `SELECT w.name AS name, max(w.version) AS latest_version,
            (SELECT id FROM workflow x WHERE x.name = w.name ORDER BY version DESC LIMIT 1) AS latest_id,
            count(*) AS versions, max(w.created_at) AS updated_at,
            (SELECT count(*) FROM instance i JOIN workflow y ON y.id = i.workflow_id WHERE y.name = w.name) AS instances,
            (SELECT count(*) FROM instance i JOIN workflow y ON y.id = i.workflow_id WHERE y.name = w.name
               AND i.status NOT IN ('COMPLETED', 'FAILED', 'CANCELLED')) AS live_instances
       FROM workflow w GROUP BY w.name ORDER BY w.name`,
  );
  return {
    latest: (name: string) => latest.get(name),
    byVersion: (name: string, version: number) => byVersion.get(name, version),
    byId: (id: number) => byId.get(id),
    versions: (name: string) => versions.all(name),
    summaries: () => summaries.all(),
    /** Inserts version `version` of `name` with its node rows; returns the new workflow id. */
    insert(name: string, version: number, dslJson: string, hash: string, now: number, nodes: NodeRowInput[]): number {
      const id = Number(insert.run(name, version, dslJson, hash, now).lastInsertRowid);
      for (const n of nodes) {
        insertNode.run(id, n.nodeId, n.type, n.name, n.retryJson, n.timeoutMs, n.scopeJson, n.onFailure, n.incoming);
      }
      return id;
    },
  };
}
