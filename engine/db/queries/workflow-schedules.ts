/**
 * SQLite: the live schedules of the workflows (`workflow_schedule`, migration 12): the write
 * transaction's {@link WorkflowScheduleQueries} and the read model's schedule reads. The row
 * mapping and the statements' text are shared with PostgreSQL (engine/db/postgres/queries/workflow-schedules.ts).
 */
import type Database from 'better-sqlite3';
import type { ReadModel, ScheduleReads, WorkflowScheduleQueries, WorkflowScheduleRow } from '../../store/port';

/** A row as stored. */
export interface StoredScheduleRow {
  workflow_name: string;
  schedule_id: string;
  cron: string;
  timezone: string | null;
  paused: number;
  next_due_at: number | null;
  last_due_at: number | null;
  last_instance_id: number | null;
  updated_at: number;
}

/** The columns every read selects. */
export const SCHEDULE_COLUMNS = 'workflow_name, schedule_id, cron, timezone, paused, next_due_at, last_due_at, last_instance_id, updated_at';

/** The API-side shape of a stored row (shared with PostgreSQL). */
export function toScheduleRow(r: StoredScheduleRow): WorkflowScheduleRow {
  return {
    workflow: r.workflow_name,
    scheduleId: r.schedule_id,
    cron: r.cron,
    timezone: r.timezone,
    paused: r.paused === 1,
    nextDueAt: r.next_due_at,
    lastDueAt: r.last_due_at,
    lastInstanceId: r.last_instance_id,
    updatedAt: r.updated_at,
  };
}

/** {@link WorkflowScheduleQueries} over `db`, for write transactions. */
export function createWorkflowScheduleQueries(db: Database.Database): WorkflowScheduleQueries {
  const forWorkflow = db.prepare<[string], StoredScheduleRow>(`SELECT ${SCHEDULE_COLUMNS} FROM workflow_schedule WHERE workflow_name = ? ORDER BY schedule_id`);
  const get = db.prepare<[string, string], StoredScheduleRow>(`SELECT ${SCHEDULE_COLUMNS} FROM workflow_schedule WHERE workflow_name = ? AND schedule_id = ?`);
  const upsert = db.prepare(
    `INSERT INTO workflow_schedule (workflow_name, schedule_id, cron, timezone, paused, next_due_at, updated_at)
     VALUES (@workflow, @scheduleId, @cron, @timezone, @paused, @nextDueAt, @now)
     ON CONFLICT (workflow_name, schedule_id) DO UPDATE SET cron = excluded.cron, timezone = excluded.timezone,
       paused = excluded.paused, next_due_at = excluded.next_due_at, updated_at = excluded.updated_at`,
  );
  const remove = db.prepare<[string, string]>('DELETE FROM workflow_schedule WHERE workflow_name = ? AND schedule_id = ?');
  const removeWorkflow = db.prepare<[string]>('DELETE FROM workflow_schedule WHERE workflow_name = ?');
  const rename = db.prepare<[string, string]>('UPDATE workflow_schedule SET workflow_name = ? WHERE workflow_name = ?');
  const claim = db.prepare(
    `UPDATE workflow_schedule SET next_due_at = @nextDueAt, updated_at = @now
      WHERE workflow_name = @workflow AND schedule_id = @scheduleId AND paused = 0 AND next_due_at = @expectedNextDueAt`,
  );
  const fired = db.prepare(
    `UPDATE workflow_schedule SET last_due_at = @dueAt, last_instance_id = @instanceId, updated_at = @now
      WHERE workflow_name = @workflow AND schedule_id = @scheduleId`,
  );
  const setPaused = db.prepare(
    `UPDATE workflow_schedule SET paused = @paused, next_due_at = @nextDueAt, updated_at = @now
      WHERE workflow_name = @workflow AND schedule_id = @scheduleId`,
  );
  return {
    forWorkflow: (workflow) => forWorkflow.all(workflow).map(toScheduleRow),
    get: (workflow, scheduleId) => {
      const r = get.get(workflow, scheduleId);
      return r === undefined ? undefined : toScheduleRow(r);
    },
    upsert: (p) => void upsert.run({ ...p, paused: p.paused ? 1 : 0 }),
    remove: (workflow, scheduleId) => void remove.run(workflow, scheduleId),
    removeWorkflow: (workflow) => removeWorkflow.run(workflow).changes,
    renameWorkflow: (from, to) => void rename.run(to, from),
    claim: (p) => claim.run(p).changes === 1,
    fired: (p) => void fired.run(p),
    setPaused: (p) => void setPaused.run({ ...p, paused: p.paused ? 1 : 0 }),
  };
}

/** The read model's schedule reads over `db`. */
export function createScheduleReads(db: Database.Database): Pick<ReadModel, ScheduleReads> {
  const all = db.prepare<[], StoredScheduleRow>(`SELECT ${SCHEDULE_COLUMNS} FROM workflow_schedule ORDER BY workflow_name, schedule_id`);
  const ofWorkflow = db.prepare<[string], StoredScheduleRow>(`SELECT ${SCHEDULE_COLUMNS} FROM workflow_schedule WHERE workflow_name = ? ORDER BY schedule_id`);
  const next = db.prepare<[], { at: number | null }>('SELECT min(next_due_at) AS at FROM workflow_schedule WHERE paused = 0 AND next_due_at IS NOT NULL');
  const due = db.prepare<[number, number], StoredScheduleRow>(
    `SELECT ${SCHEDULE_COLUMNS} FROM workflow_schedule WHERE paused = 0 AND next_due_at IS NOT NULL AND next_due_at <= ? ORDER BY next_due_at LIMIT ?`,
  );
  return {
    workflowSchedules: async (workflow) => (workflow === undefined ? all.all() : ofWorkflow.all(workflow)).map(toScheduleRow),
    nextScheduleDue: async () => next.get()?.at ?? null,
    dueSchedules: async (now, limit) => due.all(now, limit).map(toScheduleRow),
  };
}
