/**
 * PostgreSQL migration 8: the live schedules of the workflows, as SQLite's migration 12
 * (engine/db/migrations/0012-workflow-schedules.ts): `workflow_schedule` with the same columns and
 * meaning (`paused` 0 or 1 as there, so `runnel copy` moves rows as they are), and the partial index of unpaused due times.
 */
export const sql = /* sql */ `
CREATE TABLE workflow_schedule (
  workflow_name TEXT NOT NULL,
  schedule_id TEXT NOT NULL,
  cron TEXT NOT NULL,
  timezone TEXT,
  paused INTEGER NOT NULL DEFAULT 0 CHECK (paused IN (0, 1)),
  next_due_at BIGINT,
  last_due_at BIGINT,
  last_instance_id BIGINT,
  updated_at BIGINT NOT NULL,
  PRIMARY KEY (workflow_name, schedule_id)
);
CREATE INDEX workflow_schedule_due ON workflow_schedule (next_due_at) WHERE paused = 0 AND next_due_at IS NOT NULL;
`;
