/**
 * SQLite: the `schedule` queue's queries ({@link ScheduleQueries}), prepared once per connection.
 *
 * Parameters bind positionally (named bindings through an object measured slower on the hot
 * path); the named functions keep the order in this file.
 */
import type Database from 'better-sqlite3';
import type { ScheduleKind } from '../../vocabulary';
import { claimByPriority } from '../../store/priority-claim';
import { isInstantRow, PARKED_AT, type ScheduleQueries, type ScheduleRow } from '../../store/queries';

const ROW = `id, instance_id AS instanceId, node_id AS nodeId, kind, next_run_at AS nextRunAt, retry_count AS retryCount,
  lease_owner AS leaseOwner, version`;

/** Prepares {@link ScheduleQueries} on `db`. */
export function createScheduleQueries(db: Database.Database): ScheduleQueries {
  // The priority levels (../../store/priority-claim.ts); `priority <> 0` in each lets the partial
  // index schedule_priority serve it. Level 0 walks schedule_due, passing over prioritized rows.
  const highest = db.prepare<[], { p: number | null }>(`SELECT max(priority) AS p FROM schedule WHERE priority <> 0`);
  const highestBelow = db.prepare<[number], { p: number | null }>(`SELECT max(priority) AS p FROM schedule WHERE priority <> 0 AND priority < ?`);
  const dueAtLevel = db.prepare<[number, number, number], ScheduleRow>(
    `SELECT ${ROW} FROM schedule WHERE priority <> 0 AND priority = ? AND next_run_at <= ? ORDER BY next_run_at LIMIT ?`,
  );
  const dueWhenNone = db.prepare<[number, number], ScheduleRow>(
    `SELECT ${ROW} FROM schedule WHERE next_run_at <= ? AND NOT EXISTS (SELECT 1 FROM schedule WHERE priority <> 0) ORDER BY next_run_at LIMIT ?`,
  );
  const dueAtZero = db.prepare<[number, number], ScheduleRow>(`SELECT ${ROW} FROM schedule WHERE next_run_at <= ? AND priority = 0 ORDER BY next_run_at LIMIT ?`);
  const countDue = db.prepare<[number, number], { n: number }>(`SELECT count(*) AS n FROM (SELECT 1 FROM schedule WHERE next_run_at <= ? LIMIT ?)`);
  // The partial index schedule_deadline (migration 4) serves this one.
  const dueDeadlines = db.prepare<[number, number], ScheduleRow>(
    `SELECT ${ROW} FROM schedule WHERE kind = 'deadline' AND next_run_at <= ? ORDER BY next_run_at LIMIT ?`,
  );
  // The partial index schedule_instant (migrations 18 and 19) serves this one.
  const dueInstant = db.prepare<[number, number], ScheduleRow>(
    `SELECT ${ROW} FROM schedule WHERE instant = 1 AND next_run_at <= ? ORDER BY next_run_at LIMIT ?`,
  );
  const take = db.prepare<[number, number]>(`DELETE FROM schedule WHERE id = ? AND version = ?`);
  const lease = db.prepare<[string, number, number, number, number]>(
    `UPDATE schedule SET lease_owner = ?, next_run_at = ?, lease_expires_at = ?, version = version + 1 WHERE id = ? AND version = ?`,
  );
  const extendLease = db.prepare<[number, number, number, string, number]>(
    `UPDATE schedule SET next_run_at = ?, lease_expires_at = ? WHERE id = ? AND lease_owner = ? AND version = ?`,
  );
  const holds = db.prepare<[number, string, number], { id: number }>(`SELECT id FROM schedule WHERE id = ? AND lease_owner = ? AND version = ?`);
  const defer = db.prepare<[string | null, number, number]>(
    `UPDATE schedule SET lease_owner = ?, lease_expires_at = NULL, next_run_at = ?, version = version + 1 WHERE id = ?`,
  );
  const park = db.prepare<[string | null, number, number, number]>(
    `UPDATE schedule SET lease_owner = ?, lease_expires_at = NULL, next_run_at = ?, paused_ms = ?, version = version + 1 WHERE id = ?`,
  );
  const parkForInstance = db.prepare<[{ now: number; parked: number; instanceId: number }]>(
    `UPDATE schedule SET paused_ms = max(0, next_run_at - @now), next_run_at = @parked
      WHERE instance_id = @instanceId AND paused_ms IS NULL AND next_run_at < @parked AND NOT (lease_owner IS NOT NULL AND next_run_at > @now)`,
  );
  // A held instance's rows wait at PARKED_AT with no paused_ms (a pause leaves them so, see above).
  const releaseHeld = db.prepare<[{ now: number; parked: number; instanceId: number }]>(
    `UPDATE schedule SET next_run_at = @now WHERE instance_id = @instanceId AND next_run_at = @parked AND paused_ms IS NULL`,
  );
  const releaseHeldPaused = db.prepare<[{ parked: number; instanceId: number }]>(
    `UPDATE schedule SET paused_ms = 0 WHERE instance_id = @instanceId AND next_run_at = @parked AND paused_ms IS NULL`,
  );
  const unparkForInstance = db.prepare<[number, number]>(
    `UPDATE schedule SET next_run_at = ? + paused_ms, paused_ms = NULL WHERE instance_id = ? AND paused_ms IS NOT NULL`,
  );
  const reuseForRun = db.prepare<[string, number, number, number, number]>(
    `UPDATE schedule SET node_id = ?, kind = 'run', next_run_at = ?, lease_expires_at = ?, retry_count = 0,
            version = version + 1, created_at = ?, instant = 0 WHERE id = ?`,
  );
  // A row's priority is its instance's (a primary-key read of a row this transaction has at hand).
  const insert = db.prepare<[number, string | null, ScheduleKind, number, number, number, number, number]>(
    `INSERT INTO schedule (instance_id, node_id, kind, next_run_at, retry_count, created_at, instant, priority)
     VALUES (?, ?, ?, ?, ?, ?, ?, coalesce((SELECT priority FROM instance WHERE id = ?), 0))`,
  );
  const insertLeased = db.prepare<[number, string, number, string, number, number, number]>(
    `INSERT INTO schedule (instance_id, node_id, kind, next_run_at, lease_owner, lease_expires_at, created_at, priority)
     VALUES (?, ?, 'run', ?, ?, ?, ?, coalesce((SELECT priority FROM instance WHERE id = ?), 0))`,
  );
  const del = db.prepare<[number]>(`DELETE FROM schedule WHERE id = ?`);
  const deleteForInstance = db.prepare<[number]>(`DELETE FROM schedule WHERE instance_id = ?`);
  const deleteUnleasedForInstance = db.prepare<[number]>(
    `DELETE FROM schedule WHERE instance_id = ? AND lease_owner IS NULL AND kind IN ('run', 'timer', 'timeout', 'wake')`,
  );
  const deleteDeadline = db.prepare<[number]>(`DELETE FROM schedule WHERE instance_id = ? AND kind = 'deadline'`);
  const deleteForNode = db.prepare<[number, string]>(
    `DELETE FROM schedule WHERE instance_id = ? AND node_id = ? AND kind IN ('run', 'timer', 'timeout', 'wake')`,
  );
  const deleteWaitRows = db.prepare<[number, string]>(`DELETE FROM schedule WHERE instance_id = ? AND node_id = ? AND kind IN ('timeout', 'wake')`);
  const rebaseDue = db.prepare<[number, number]>(`UPDATE schedule SET next_run_at = ? WHERE next_run_at <= ? AND lease_owner IS NULL`);
  const shiftLeases = db.prepare<[number, number, number]>(
    `UPDATE schedule SET next_run_at = next_run_at - ?, lease_expires_at = lease_expires_at - ?
      WHERE lease_owner IS NOT NULL AND next_run_at > ?`,
  );
  const releaseLeases = db.prepare<[number, string]>(`UPDATE schedule SET next_run_at = ?, lease_expires_at = NULL WHERE lease_owner = ?`);

  return {
    due: ({ now, limit }) =>
      claimByPriority(limit, {
        highest: (below) => (below === undefined ? highest.get() : highestBelow.get(below))?.p ?? undefined,
        level: (p, n) => dueAtLevel.all(p, now, n),
        zero: (n) => dueAtZero.all(now, n),
        allWhenNone: (n) => dueWhenNone.all(now, n),
      }),
    countDue: ({ now, limit }) => countDue.get(now, limit)?.n ?? 0,
    dueDeadlines: ({ now, limit }) => dueDeadlines.all(now, limit),
    dueInstant: ({ now, limit }) => dueInstant.all(now, limit),
    take: ({ id, version }) => take.run(id, version).changes > 0,
    lease: ({ id, version, owner, until }) => lease.run(owner, until, until, id, version).changes > 0,
    extendLease: ({ id, version, owner, until }) => extendLease.run(until, until, id, owner, version).changes > 0,
    holds: ({ id, version, owner }) => holds.get(id, owner, version) !== undefined,
    defer: ({ id, owner, at }) => void defer.run(owner, at, id),
    park: ({ id, owner, remainingMs }) => void park.run(owner, PARKED_AT, remainingMs, id),
    parkForInstance: ({ instanceId, now }) => void parkForInstance.run({ now, parked: PARKED_AT, instanceId }),
    unparkForInstance: ({ instanceId, now }) => void unparkForInstance.run(now, instanceId),
    releaseHeld: ({ instanceId, now, paused }) =>
      void (paused ? releaseHeldPaused.run({ parked: PARKED_AT, instanceId }) : releaseHeld.run({ now, parked: PARKED_AT, instanceId })),
    reuseForRun: ({ id, nodeId, leaseUntil, now }) => void reuseForRun.run(nodeId, leaseUntil, leaseUntil, now, id),
    insert: ({ instanceId, nodeId, kind, at, retryCount, now, instant }) =>
      Number(insert.run(instanceId, nodeId, kind, at, retryCount, now, isInstantRow(kind, instant) ? 1 : 0, instanceId).lastInsertRowid),
    insertLeased: ({ instanceId, nodeId, owner, leaseUntil, now }) =>
      Number(insertLeased.run(instanceId, nodeId, leaseUntil, owner, leaseUntil, now, instanceId).lastInsertRowid),
    delete: (id) => void del.run(id),
    deleteForInstance: (instanceId) => void deleteForInstance.run(instanceId),
    deleteUnleasedForInstance: (instanceId) => void deleteUnleasedForInstance.run(instanceId),
    deleteDeadline: (instanceId) => void deleteDeadline.run(instanceId),
    deleteForNode: (instanceId, nodeId) => void deleteForNode.run(instanceId, nodeId),
    deleteWaitRows: (instanceId, nodeId) => void deleteWaitRows.run(instanceId, nodeId),
    rebaseDue: ({ from, to }) => void rebaseDue.run(to, from),
    shiftLeases: ({ byMs, now }) => void shiftLeases.run(byMs, byMs, now),
    releaseLeases: ({ owner, now }) => void releaseLeases.run(now, owner),
  };
}
