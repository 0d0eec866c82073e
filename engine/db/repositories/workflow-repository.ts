/**
 * Workflow versions: deploy, look up, list.
 *
 * A workflow is identified by name; each saved definition that differs from the latest (by its
 * definition hash, which ignores designer positions) becomes version latest+1. Versions are
 * immutable in meaning: instances stay on the version they started with. Only the latest version's
 * designer data (`ui`) is updated in place, when a save changed nothing else. Deleted workflows
 * (`deleted_at` set, migration 3) are invisible by name; their rows stay for their instances.
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
  const live = 'deleted_at IS NULL';
  const latest = prep<[string], WorkflowRow>(`SELECT ${cols} FROM workflow WHERE name = ? AND ${live} ORDER BY version DESC LIMIT 1`);
  const byVersion = prep<[string, number], WorkflowRow>(`SELECT ${cols} FROM workflow WHERE name = ? AND version = ? AND ${live}`);
  const byId = prep<[number], WorkflowRow>(`SELECT ${cols} FROM workflow WHERE id = ?`);
  const versions = prep<[string], WorkflowRow>(`SELECT ${cols} FROM workflow WHERE name = ? AND ${live} ORDER BY version DESC`);
  const maxVersion = prep<[string], { v: number | null }>(`SELECT max(version) AS v FROM workflow WHERE name = ?`);
  const anyRow = prep<[string], { id: number }>(`SELECT id FROM workflow WHERE name = ? LIMIT 1`);
  const updateDsl = prep<[string, number]>(`UPDATE workflow SET dsl_json = ? WHERE id = ?`);
  const renameRow = prep<[string, string, string, number]>(`UPDATE workflow SET name = ?, dsl_json = ?, definition_hash = ? WHERE id = ?`);
  const markDeleted = prep<[number, string]>(`UPDATE workflow SET deleted_at = ? WHERE name = ? AND ${live}`);
  const liveInstances = prep<[string], { n: number }>(
    `SELECT count(*) AS n FROM instance i JOIN workflow w ON w.id = i.workflow_id
      WHERE w.name = ? AND w.${live} AND i.status NOT IN ('COMPLETED', 'FAILED', 'CANCELLED')`,
  );
  const insert = prep<[string, number, string, string, number]>(
    `INSERT INTO workflow (name, version, dsl_json, definition_hash, created_at) VALUES (?, ?, ?, ?, ?)`,
  );
  const insertNode = prep<[number, string, string, string | null, string, number | null, string, string, number]>(
    `INSERT INTO node (workflow_id, node_id, type, name, retry_json, timeout_ms, scope_json, on_failure, incoming)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const summaries = prep<[], WorkflowSummaryRow>(
    `SELECT w.name AS name, max(w.version) AS latest_version,
            (SELECT id FROM workflow x WHERE x.name = w.name AND x.${live} ORDER BY version DESC LIMIT 1) AS latest_id,
            count(*) AS versions, max(w.created_at) AS updated_at,
            (SELECT count(*) FROM instance i JOIN workflow y ON y.id = i.workflow_id WHERE y.name = w.name AND y.${live}) AS instances,
            (SELECT count(*) FROM instance i JOIN workflow y ON y.id = i.workflow_id WHERE y.name = w.name AND y.${live}
               AND i.status NOT IN ('COMPLETED', 'FAILED', 'CANCELLED')) AS live_instances
       FROM workflow w WHERE w.${live} GROUP BY w.name ORDER BY w.name`,
  );
  return {
    latest: (name: string) => latest.get(name),
    byVersion: (name: string, version: number) => byVersion.get(name, version),
    byId: (id: number) => byId.get(id),
    versions: (name: string) => versions.all(name),
    summaries: () => summaries.all(),
    /** The highest version ever saved under `name`, deleted ones included (0 when none). */
    maxVersion: (name: string) => maxVersion.get(name)?.v ?? 0,
    /** Whether any row (deleted or not) has `name`. */
    nameUsed: (name: string) => anyRow.get(name) !== undefined,
    /** Live instances of the (not deleted) versions of `name`. */
    liveInstances: (name: string) => liveInstances.get(name)?.n ?? 0,
    /** Replaces a version's stored definition (only its `ui` may differ: see the module doc). */
    updateDsl: (id: number, dslJson: string) => void updateDsl.run(dslJson, id),
    /** Moves one version to another name, with its definition and hash rewritten for it. */
    renameVersion: (id: number, name: string, dslJson: string, hash: string) => void renameRow.run(name, dslJson, hash, id),
    /** Marks every version of `name` deleted at `now`; returns how many. */
    markDeleted: (name: string, now: number) => markDeleted.run(now, name).changes,
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
