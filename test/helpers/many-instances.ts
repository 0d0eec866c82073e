/**
 * Test setup for list performance: inserts many instances of a deployed workflow with raw
 * INSERTs in one transaction (100,000 in about a second), with a deterministic mix of statuses and
 * node states, so the list's "why is it stuck" columns and filters have real rows to read.
 */
import type Database from 'better-sqlite3';

/** Options of {@link insertManyInstances}. */
export interface ManyInstancesOptions {
  /** The workflow version's row id (`workflow.id`) the instances belong to. */
  workflowId: number;
  /** Node ids of that workflow version, in order (the first is where live instances stand). */
  nodeIds: readonly string[];
  count: number;
  /** Creation time of the newest instance, epoch ms (default now); each older one is 1 s earlier. */
  newestAt?: number;
}

/** The status of the n-th inserted instance (0-based): 70 % COMPLETED, then FAILED, SUSPENDED, WAITING, RUNNING, CANCELLED. */
export function statusOf(n: number): string {
  const k = n % 20;
  if (k < 14) return 'COMPLETED';
  if (k < 16) return 'FAILED';
  if (k < 17) return 'SUSPENDED';
  if (k < 18) return 'WAITING';
  if (k < 19) return 'RUNNING';
  return 'CANCELLED';
}

/**
 * Inserts `count` instances (and node states for the ones not COMPLETED or CANCELLED) in one
 * transaction. Returns the per-status counts inserted.
 */
export function insertManyInstances(
  db: Database.Database,
  options: ManyInstancesOptions,
): Record<string, number> {
  const newest = options.newestAt ?? Date.now();
  const first = options.nodeIds[0] ?? 'a';
  const insertInstance = db.prepare(
    `INSERT INTO instance (workflow_id, status, variables_json, input_json, version, error_json, suspension_json,
       business_key, created_at, started_at, ended_at, updated_at)
     VALUES (?, ?, '{}', '{}', 3, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const insertNode = db.prepare(
    `INSERT INTO node_state (instance_id, node_id, status, attempt, attempt_limit, pending_in, wait_json, error_json, started_at)
     VALUES (?, ?, ?, ?, 3, 0, ?, ?, ?)`,
  );
  const counts: Record<string, number> = {};
  db.transaction(() => {
    for (let n = 0; n < options.count; n++) {
      const status = statusOf(n);
      counts[status] = (counts[status] ?? 0) + 1;
      const created = newest - (options.count - 1 - n) * 1000;
      const ended =
        status === 'COMPLETED' || status === 'FAILED' || status === 'CANCELLED'
          ? created + 200 + (n % 97) * 10
          : null;
      const error =
        status === 'FAILED'
          ? JSON.stringify({ code: 'HTTP_ERROR', message: `device ${n} answered 503` })
          : null;
      const suspension =
        status === 'SUSPENDED'
          ? JSON.stringify({
              kind: 'incident',
              nodeId: first,
              error: { code: 'HTTP_ERROR', message: `health check of ${n} failed` },
              attempts: 3,
              at: created + 100,
            })
          : null;
      const id = Number(
        insertInstance.run(
          options.workflowId,
          status,
          error,
          suspension,
          `key-${n}`,
          created,
          created,
          ended,
          ended ?? created,
        ).lastInsertRowid,
      );
      switch (status) {
        case 'FAILED':
        case 'SUSPENDED':
          insertNode.run(
            id,
            first,
            'FAILED',
            3,
            null,
            error ?? JSON.stringify({ code: 'HTTP_ERROR', message: 'failed' }),
            created,
          );
          break;
        case 'WAITING':
          insertNode.run(
            id,
            first,
            Math.floor(n / 20) % 2 === 0 ? 'WAITING' : 'RETRYING',
            1,
            Math.floor(n / 20) % 2 === 0
              ? JSON.stringify({ kind: 'approval', prompt: `approve ${n}?` })
              : JSON.stringify({ kind: 'retry', until: created + 60_000 }),
            null,
            created,
          );
          break;
        case 'RUNNING':
          insertNode.run(id, first, 'RUNNING', 1, null, null, created);
          break;
        default:
          break;
      }
    }
  })();
  return counts;
}
