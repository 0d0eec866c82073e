/**
 * PostgreSQL migration 14, as SQLite's migration 19 (engine/db/migrations/0019-schedule-instant-steps.ts):
 * `schedule.instant` marks the rows that run no handler that takes time (timers, wait timeouts,
 * wakes, and the `run` of a node of an instant type), and the partial index `schedule_instant`
 * covers exactly those, so every loop turn claims them whatever its free slots. An integer 0 or 1
 * as SQLite's, so `runnel copy` moves it either way.
 */
export const sql = /* sql */ `
ALTER TABLE schedule ADD COLUMN instant INTEGER NOT NULL DEFAULT 0 CHECK (instant IN (0, 1));
UPDATE schedule SET instant = 1 WHERE kind IN ('timer', 'timeout', 'wake');
DROP INDEX schedule_instant;
CREATE INDEX schedule_instant ON schedule (next_run_at) WHERE instant = 1;
`;
