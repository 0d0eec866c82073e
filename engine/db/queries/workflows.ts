/**
 * SQLite: workflow versions ({@link WorkflowQueries}, and the reads of them).
 *
 * A workflow is identified by name; each saved definition that differs from the latest (by its
 * definition hash, which ignores designer positions) becomes version latest+1. Versions are
 * immutable in meaning: instances stay on the version they started with. Only the latest version's
 * designer data (`ui`) is updated in place, when a save changed nothing else. Deleted workflows
 * (`deleted_at` set, migration 3) are invisible by name; their rows stay for their instances.
 */
import type Database from 'better-sqlite3';
import type { WorkflowSummary } from '../../api/contract';
import type { WorkflowNodeRow, WorkflowQueries, WorkflowVersionRow } from '../../store/port';

/** Workflow queries and reads, prepared once per connection. */
export interface SqliteWorkflows extends WorkflowQueries {
  byVersion(name: string, version: number): WorkflowVersionRow | undefined;
  summaries(): WorkflowSummary[];
}

/** Prepares the workflow statements on `db`. Writes must run inside a write transaction. */
export function createWorkflowQueries(db: Database.Database): SqliteWorkflows {
  const cols = 'id, name, version, dsl_json AS dslJson, definition_hash AS definitionHash, created_at AS createdAt';
  const live = 'deleted_at IS NULL';
  const latest = db.prepare<[string], WorkflowVersionRow>(`SELECT ${cols} FROM workflow WHERE name = ? AND ${live} ORDER BY version DESC LIMIT 1`);
  const byVersion = db.prepare<[string, number], WorkflowVersionRow>(`SELECT ${cols} FROM workflow WHERE name = ? AND version = ? AND ${live}`);
  const byId = db.prepare<[number], WorkflowVersionRow>(`SELECT ${cols} FROM workflow WHERE id = ?`);
  const versions = db.prepare<[string], WorkflowVersionRow>(`SELECT ${cols} FROM workflow WHERE name = ? AND ${live} ORDER BY version DESC`);
  const maxVersion = db.prepare<[string], { v: number | null }>(`SELECT max(version) AS v FROM workflow WHERE name = ?`);
  const anyRow = db.prepare<[string], { id: number }>(`SELECT id FROM workflow WHERE name = ? LIMIT 1`);
  const updateDsl = db.prepare<[string, number]>(`UPDATE workflow SET dsl_json = ? WHERE id = ?`);
  const renameRow = db.prepare<[string, string, string, number]>(`UPDATE workflow SET name = ?, dsl_json = ?, definition_hash = ? WHERE id = ?`);
  const markDeleted = db.prepare<[number, string]>(`UPDATE workflow SET deleted_at = ? WHERE name = ? AND ${live}`);
  const liveInstances = db.prepare<[string], { n: number }>(
    `SELECT count(*) AS n FROM instance i JOIN workflow w ON w.id = i.workflow_id
      WHERE w.name = ? AND w.${live} AND i.status NOT IN ('COMPLETED', 'FAILED', 'CANCELLED')`,
  );
  const insert = db.prepare<[string, number, string, string, number]>(
    `INSERT INTO workflow (name, version, dsl_json, definition_hash, created_at) VALUES (?, ?, ?, ?, ?)`,
  );
  const insertNode = db.prepare<[number, string, string, string | null, string, number | null, string, string, number]>(
    `INSERT INTO node (workflow_id, node_id, type, name, retry_json, timeout_ms, scope_json, on_failure, incoming)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const summaries = db.prepare<[], WorkflowSummary>(
    `SELECT w.name AS name, max(w.version) AS latestVersion,
            (SELECT id FROM workflow x WHERE x.name = w.name AND x.${live} ORDER BY version DESC LIMIT 1) AS latestId,
            count(*) AS versions, max(w.created_at) AS updatedAt,
            (SELECT count(*) FROM instance i JOIN workflow y ON y.id = i.workflow_id WHERE y.name = w.name AND y.${live}) AS instances,
            (SELECT count(*) FROM instance i JOIN workflow y ON y.id = i.workflow_id WHERE y.name = w.name AND y.${live}
               AND i.status NOT IN ('COMPLETED', 'FAILED', 'CANCELLED')) AS liveInstances
       FROM workflow w WHERE w.${live} GROUP BY w.name ORDER BY w.name`,
  );
  return {
    latest: (name) => latest.get(name),
    byVersion: (name, version) => byVersion.get(name, version),
    byId: (id) => byId.get(id),
    versions: (name) => versions.all(name),
    summaries: () => summaries.all(),
    maxVersion: (name) => maxVersion.get(name)?.v ?? 0,
    nameUsed: (name) => anyRow.get(name) !== undefined,
    liveInstances: (name) => liveInstances.get(name)?.n ?? 0,
    updateDsl: (id, dslJson) => void updateDsl.run(dslJson, id),
    renameVersion: ({ id, name, dslJson, hash }) => void renameRow.run(name, dslJson, hash, id),
    markDeleted: (name, now) => markDeleted.run(now, name).changes,
    insert({ name, version, dslJson, hash, now, nodes }: { name: string; version: number; dslJson: string; hash: string; now: number; nodes: WorkflowNodeRow[] }): number {
      const id = Number(insert.run(name, version, dslJson, hash, now).lastInsertRowid);
      for (const n of nodes) insertNode.run(id, n.nodeId, n.type, n.name, n.retryJson, n.timeoutMs, n.scopeJson, n.onFailure, n.incoming);
      return id;
    },
  };
}
