/**
 * Migration 12: the live schedules of the workflows (issue 13; engine/runtime/schedules.ts).
 *
 * - `workflow_schedule`: one row per schedule of a workflow's latest version, keyed by workflow
 *   name and schedule id (a deploy replaces the set: surviving ids keep their paused flag).
 *   `cron` and `timezone` are the definition's (a row whose expression did not change keeps its
 *   next due time across a deploy); `next_due_at` is the next due time not yet fired, epoch ms
 *   (NULL: the expression has no time to come); `last_due_at` the due time it last started an
 *   instance for and `last_instance_id` that instance (no foreign key: retention deletes
 *   instances). A worker claims a due time with `UPDATE … WHERE next_due_at = <the one it read>`
 *   in the transaction that creates the instance, so each fires once across processes.
 * - `workflow_schedule_due`: the earliest unpaused due time is one index seek (the idle worker's
 *   only read of the table).
 */
export const sql = /* sql */ `
CREATE TABLE workflow_schedule (
  workflow_name TEXT NOT NULL,
  schedule_id TEXT NOT NULL,
  cron TEXT NOT NULL,
  timezone TEXT,
  paused INTEGER NOT NULL DEFAULT 0 CHECK (paused IN (0, 1)),
  next_due_at INTEGER,
  last_due_at INTEGER,
  last_instance_id INTEGER,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (workflow_name, schedule_id)
) STRICT;
CREATE INDEX workflow_schedule_due ON workflow_schedule (next_due_at) WHERE paused = 0 AND next_due_at IS NOT NULL;
`;
