/**
 * PostgreSQL: the live schedules in a write transaction ({@link WorkflowScheduleQueries}) and the
 * read model's schedule reads, the statements of engine/db/queries/workflow-schedules.ts
 * translated. A claim is the same conditional UPDATE: under READ COMMITTED a second worker's
 * UPDATE waits for the first one's row lock, then finds `next_due_at` moved and changes nothing.
 */
import type { ReadModel, ScheduleReads, WorkflowScheduleQueries } from '../../../store/port';
import { SCHEDULE_COLUMNS, toScheduleRow, type StoredScheduleRow } from '../../queries/workflow-schedules';
import { rowOf, rowsOf, type PgQueryable } from '../pg-read';
import type { PgTx } from './context';

const FOR_WORKFLOW = `SELECT ${SCHEDULE_COLUMNS} FROM workflow_schedule WHERE workflow_name = $1 ORDER BY schedule_id COLLATE "C"`;
const GET = `SELECT ${SCHEDULE_COLUMNS} FROM workflow_schedule WHERE workflow_name = $1 AND schedule_id = $2`;
const UPSERT = `INSERT INTO workflow_schedule (workflow_name, schedule_id, cron, timezone, paused, next_due_at, updated_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7)
  ON CONFLICT (workflow_name, schedule_id) DO UPDATE SET cron = excluded.cron, timezone = excluded.timezone,
    paused = excluded.paused, next_due_at = excluded.next_due_at, updated_at = excluded.updated_at`;
const REMOVE = 'DELETE FROM workflow_schedule WHERE workflow_name = $1 AND schedule_id = $2';
const REMOVE_WORKFLOW = 'DELETE FROM workflow_schedule WHERE workflow_name = $1';
const RENAME = 'UPDATE workflow_schedule SET workflow_name = $1 WHERE workflow_name = $2';
const CLAIM = `UPDATE workflow_schedule SET next_due_at = $4, updated_at = $5
  WHERE workflow_name = $1 AND schedule_id = $2 AND paused = 0 AND next_due_at = $3`;
const FIRED = 'UPDATE workflow_schedule SET last_due_at = $3, last_instance_id = $4, updated_at = $5 WHERE workflow_name = $1 AND schedule_id = $2';
const SET_PAUSED = 'UPDATE workflow_schedule SET paused = $3, next_due_at = $4, updated_at = $5 WHERE workflow_name = $1 AND schedule_id = $2';

/** {@link WorkflowScheduleQueries} over the transaction `tx`. */
export function createWorkflowScheduleQueries(tx: PgTx): WorkflowScheduleQueries {
  return {
    forWorkflow: (workflow) => tx.run<StoredScheduleRow>(FOR_WORKFLOW, [workflow]).rows.map(toScheduleRow),
    get: (workflow, scheduleId) => {
      const r = tx.run<StoredScheduleRow>(GET, [workflow, scheduleId]).rows[0];
      return r === undefined ? undefined : toScheduleRow(r);
    },
    upsert: (p) => tx.exec(UPSERT, [p.workflow, p.scheduleId, p.cron, p.timezone, p.paused ? 1 : 0, p.nextDueAt, p.now]),
    remove: (workflow, scheduleId) => tx.exec(REMOVE, [workflow, scheduleId]),
    removeWorkflow: (workflow) => tx.run(REMOVE_WORKFLOW, [workflow]).rowCount,
    renameWorkflow: (from, to) => tx.exec(RENAME, [to, from]),
    claim: (p) => tx.run(CLAIM, [p.workflow, p.scheduleId, p.expectedNextDueAt, p.nextDueAt, p.now]).rowCount === 1,
    fired: (p) => tx.exec(FIRED, [p.workflow, p.scheduleId, p.dueAt, p.instanceId, p.now]),
    setPaused: (p) => tx.exec(SET_PAUSED, [p.workflow, p.scheduleId, p.paused ? 1 : 0, p.nextDueAt, p.now]),
  };
}

/** The read model's schedule reads over `db`. */
export function createPostgresScheduleReads(db: PgQueryable): Pick<ReadModel, ScheduleReads> {
  return {
    workflowSchedules: async (workflow) =>
      (workflow === undefined
        ? await rowsOf<StoredScheduleRow>(db, `SELECT ${SCHEDULE_COLUMNS} FROM workflow_schedule ORDER BY workflow_name COLLATE "C", schedule_id COLLATE "C"`)
        : await rowsOf<StoredScheduleRow>(db, FOR_WORKFLOW, [workflow])
      ).map(toScheduleRow),
    nextScheduleDue: async () =>
      (await rowOf<{ at: number | null }>(db, 'SELECT min(next_due_at) AS at FROM workflow_schedule WHERE paused = 0 AND next_due_at IS NOT NULL'))?.at ?? null,
    dueSchedules: async (now, limit) =>
      (
        await rowsOf<StoredScheduleRow>(
          db,
          `SELECT ${SCHEDULE_COLUMNS} FROM workflow_schedule WHERE paused = 0 AND next_due_at IS NOT NULL AND next_due_at <= $1 ORDER BY next_due_at LIMIT $2`,
          [now, limit],
        )
      ).map(toScheduleRow),
  };
}
