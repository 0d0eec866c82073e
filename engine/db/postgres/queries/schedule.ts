/**
 * PostgreSQL: the `schedule` queue's queries ({@link ScheduleQueries}), the statements of
 * engine/db/queries/schedule.ts translated.
 *
 * Claims (`due`, `dueDeadlines`) select due rows `FOR UPDATE SKIP LOCKED` — a row another
 * transaction is claiming or changing is passed over, not waited for — and keep only rows whose
 * instance lock `pg_try_advisory_xact_lock` obtains (./context.ts): a row of an instance another
 * transaction holds is left for a later turn, and every claimed row's instance is this
 * transaction's until it ends. Version checks that write (`take`, `lease`, `extendLease`) stay as
 * on SQLite: one statement checks and writes. `holds` only reads, and what the outcome then writes
 * depends on it, so it takes the row's instance lock first. Statements that name an instance take
 * its lock first; those that name a row only (its version checked, or the row this transaction
 * claimed) and the global ones (clock rebases, releases) do not.
 */
import type { ScheduleKind } from '../../../vocabulary';
import { claimByPriority } from '../../../store/priority-claim';
import { isInstantRow, PARKED_AT, type ScheduleQueries, type ScheduleRow } from '../../../store/queries';
import { instanceLockKeys, type PgTx } from './context';

const ROW = `id, instance_id AS "instanceId", node_id AS "nodeId", kind, next_run_at AS "nextRunAt", retry_count AS "retryCount",
  lease_owner AS "leaseOwner", version`;

/** Due rows of `filter`, locked, of instances this transaction could lock (see the module doc). */
function claimSql(filter: string): string {
  return `WITH d AS (SELECT ${ROW} FROM schedule WHERE ${filter} next_run_at <= $1 ORDER BY next_run_at, id LIMIT $2 FOR UPDATE SKIP LOCKED)
    SELECT * FROM d WHERE pg_try_advisory_xact_lock(${instanceLockKeys('d."instanceId"')}) ORDER BY "nextRunAt", id`;
}

// The priority levels (../../../store/priority-claim.ts); `priority <> 0` lets the partial index
// schedule_priority serve each. NOT EXISTS over it is an InitPlan, evaluated once.
const DUE_WHEN_NONE = claimSql(`NOT EXISTS (SELECT 1 FROM schedule p WHERE p.priority <> 0) AND`);
const DUE_AT_ZERO = claimSql(`priority = 0 AND`);
const DUE_AT_LEVEL = claimSql(`priority <> 0 AND priority = $3 AND`);
const HIGHEST = `SELECT max(priority) AS p FROM schedule WHERE priority <> 0 AND ($1::integer IS NULL OR priority < $1)`;
const DUE_DEADLINES = claimSql(`kind = 'deadline' AND`);
const DUE_INSTANT = claimSql(`instant = 1 AND`);
const COUNT_DUE = `SELECT count(*) AS n FROM (SELECT 1 FROM schedule WHERE next_run_at <= $1 LIMIT $2) d`;
const TAKE = `DELETE FROM schedule WHERE id = $1 AND version = $2`;
const LEASE = `UPDATE schedule SET lease_owner = $1, next_run_at = $2, lease_expires_at = $2, version = version + 1 WHERE id = $3 AND version = $4`;
const EXTEND_LEASE = `UPDATE schedule SET next_run_at = $1, lease_expires_at = $1 WHERE id = $2 AND lease_owner = $3 AND version = $4`;
const HOLDS = `SELECT id FROM schedule WHERE id = $1 AND lease_owner = $2 AND version = $3`;
const DEFER = `UPDATE schedule SET lease_owner = $1, lease_expires_at = NULL, next_run_at = $2, version = version + 1 WHERE id = $3`;
const PARK = `UPDATE schedule SET lease_owner = $1, lease_expires_at = NULL, next_run_at = $2, paused_ms = $3, version = version + 1 WHERE id = $4`;
const PARK_FOR_INSTANCE = `UPDATE schedule SET paused_ms = greatest(0, next_run_at - $2), next_run_at = $3
  WHERE instance_id = $1 AND paused_ms IS NULL AND next_run_at < $3 AND NOT (lease_owner IS NOT NULL AND next_run_at > $2)`;
// A held instance's rows wait at PARKED_AT with no paused_ms (a pause leaves them so, see above).
const RELEASE_HELD = `UPDATE schedule SET next_run_at = $2 WHERE instance_id = $1 AND next_run_at = $3 AND paused_ms IS NULL`;
const RELEASE_HELD_PAUSED = `UPDATE schedule SET paused_ms = 0 WHERE instance_id = $1 AND next_run_at = $2 AND paused_ms IS NULL`;
const UNPARK_FOR_INSTANCE = `UPDATE schedule SET next_run_at = $2 + paused_ms, paused_ms = NULL WHERE instance_id = $1 AND paused_ms IS NOT NULL`;
const REUSE_FOR_RUN = `UPDATE schedule SET node_id = $1, kind = 'run', next_run_at = $2, lease_expires_at = $2, retry_count = 0,
  version = version + 1, created_at = $3, instant = 0 WHERE id = $4`;
// A row's priority is its instance's.
const PRIORITY_OF_1 = `coalesce((SELECT priority FROM instance WHERE id = $1), 0)`;
const INSERT = `INSERT INTO schedule (instance_id, node_id, kind, next_run_at, retry_count, created_at, instant, priority)
  VALUES ($1, $2, $3, $4, $5, $6, $7, ${PRIORITY_OF_1}) RETURNING id`;
const INSERT_LEASED = `INSERT INTO schedule (instance_id, node_id, kind, next_run_at, lease_owner, lease_expires_at, created_at, priority)
  VALUES ($1, $2, 'run', $3, $4, $3, $5, ${PRIORITY_OF_1}) RETURNING id`;
const DELETE = `DELETE FROM schedule WHERE id = $1`;
const DELETE_FOR_INSTANCE = `DELETE FROM schedule WHERE instance_id = $1`;
const DELETE_UNLEASED_FOR_INSTANCE = `DELETE FROM schedule WHERE instance_id = $1 AND lease_owner IS NULL AND kind IN ('run', 'timer', 'timeout', 'wake')`;
const DELETE_DEADLINE = `DELETE FROM schedule WHERE instance_id = $1 AND kind = 'deadline'`;
const DELETE_WAIT_ROWS = `DELETE FROM schedule WHERE instance_id = $1 AND node_id = $2 AND kind IN ('timeout', 'wake')`;
const DELETE_FOR_NODE = `DELETE FROM schedule WHERE instance_id = $1 AND node_id = $2 AND kind IN ('run', 'timer', 'timeout', 'wake')`;
const REBASE_DUE = `UPDATE schedule SET next_run_at = $1 WHERE next_run_at <= $2 AND lease_owner IS NULL`;
const SHIFT_LEASES = `UPDATE schedule SET next_run_at = next_run_at - $1, lease_expires_at = lease_expires_at - $1
  WHERE lease_owner IS NOT NULL AND next_run_at > $2`;
const RELEASE_LEASES = `UPDATE schedule SET next_run_at = $1, lease_expires_at = NULL WHERE lease_owner = $2`;

/** {@link ScheduleQueries} over the transaction `tx`. */
export function createScheduleQueries(tx: PgTx): ScheduleQueries {
  const claim = (sql: string, now: number, limit: number, ...rest: unknown[]): ScheduleRow[] => {
    const rows = tx.run<ScheduleRow>(sql, [now, limit, ...rest]).rows;
    for (const r of rows) tx.holdsInstance(r.instanceId);
    return rows;
  };
  const changed = (sql: string, params: readonly unknown[]): boolean => tx.run(sql, params).rowCount > 0;
  const forInstance = (sql: string, instanceId: number, ...rest: unknown[]): void => {
    tx.lockInstance(instanceId);
    tx.exec(sql, [instanceId, ...rest]);
  };
  const idOf = (rows: { id: number }[]): number => (rows[0] as { id: number }).id;
  return {
    due: ({ now, limit }) =>
      claimByPriority(limit, {
        highest: (below) => tx.run<{ p: number | null }>(HIGHEST, [below ?? null]).rows[0]?.p ?? undefined,
        level: (p, n) => claim(DUE_AT_LEVEL, now, n, p),
        zero: (n) => claim(DUE_AT_ZERO, now, n),
        allWhenNone: (n) => claim(DUE_WHEN_NONE, now, n),
      }),
    countDue: ({ now, limit }) => tx.run<{ n: number }>(COUNT_DUE, [now, limit]).rows[0]?.n ?? 0,
    dueDeadlines: ({ now, limit }) => claim(DUE_DEADLINES, now, limit),
    dueInstant: ({ now, limit }) => claim(DUE_INSTANT, now, limit),
    take: ({ id, version }) => changed(TAKE, [id, version]),
    lease: ({ id, version, owner, until }) => changed(LEASE, [owner, until, id, version]),
    extendLease: ({ id, version, owner, until }) => changed(EXTEND_LEASE, [until, id, owner, version]),
    // The instance's lock first: read before it, the row could be another transaction's claim in
    // flight (a lease that had expired), and the outcome would commit beside that claim's run.
    holds: ({ id, version, owner, instanceId }) => {
      tx.lockInstance(instanceId);
      return tx.run(HOLDS, [id, owner, version]).rows.length > 0;
    },
    defer: ({ id, owner, at }) => tx.exec(DEFER, [owner, at, id]),
    park: ({ id, owner, remainingMs }) => tx.exec(PARK, [owner, PARKED_AT, remainingMs, id]),
    parkForInstance: ({ instanceId, now }) => forInstance(PARK_FOR_INSTANCE, instanceId, now, PARKED_AT),
    unparkForInstance: ({ instanceId, now }) => forInstance(UNPARK_FOR_INSTANCE, instanceId, now),
    releaseHeld: ({ instanceId, now, paused }) =>
      paused ? forInstance(RELEASE_HELD_PAUSED, instanceId, PARKED_AT) : forInstance(RELEASE_HELD, instanceId, now, PARKED_AT),
    reuseForRun: ({ id, nodeId, leaseUntil, now }) => tx.exec(REUSE_FOR_RUN, [nodeId, leaseUntil, now, id]),
    insert: ({ instanceId, nodeId, kind, at, retryCount, now, instant }: { instanceId: number; nodeId: string | null; kind: ScheduleKind; at: number; retryCount: number; now: number; instant?: boolean }) => {
      tx.lockInstance(instanceId);
      return idOf(tx.run<{ id: number }>(INSERT, [instanceId, nodeId, kind, at, retryCount, now, isInstantRow(kind, instant) ? 1 : 0]).rows);
    },
    insertLeased: ({ instanceId, nodeId, owner, leaseUntil, now }) => {
      tx.lockInstance(instanceId);
      return idOf(tx.run<{ id: number }>(INSERT_LEASED, [instanceId, nodeId, leaseUntil, owner, now]).rows);
    },
    delete: (id) => tx.exec(DELETE, [id]),
    deleteForInstance: (instanceId) => forInstance(DELETE_FOR_INSTANCE, instanceId),
    deleteUnleasedForInstance: (instanceId) => forInstance(DELETE_UNLEASED_FOR_INSTANCE, instanceId),
    deleteDeadline: (instanceId) => forInstance(DELETE_DEADLINE, instanceId),
    deleteForNode: (instanceId, nodeId) => forInstance(DELETE_FOR_NODE, instanceId, nodeId),
    deleteWaitRows: (instanceId, nodeId) => forInstance(DELETE_WAIT_ROWS, instanceId, nodeId),
    rebaseDue: ({ from, to }) => tx.exec(REBASE_DUE, [to, from]),
    shiftLeases: ({ byMs, now }) => tx.exec(SHIFT_LEASES, [byMs, now]),
    releaseLeases: ({ owner, now }) => tx.exec(RELEASE_LEASES, [now, owner]),
  };
}
