/**
 * PostgreSQL migration 4: instance priority, as SQLite's migration 7
 * (engine/db/migrations/0007-priority.ts) — `instance.priority`, `schedule.priority` and the
 * partial `schedule_priority` index — with the same names and meaning.
 */
export const sql = /* sql */ `
ALTER TABLE instance ADD COLUMN priority INTEGER NOT NULL DEFAULT 0;
ALTER TABLE schedule ADD COLUMN priority INTEGER NOT NULL DEFAULT 0;
CREATE INDEX schedule_priority ON schedule (priority, next_run_at) WHERE priority <> 0;
`;
