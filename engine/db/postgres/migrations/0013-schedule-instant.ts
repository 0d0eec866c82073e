/**
 * PostgreSQL migration 13, as SQLite's migration 18 (engine/db/migrations/0018-schedule-instant.ts):
 * the due rows that run no handler (timers, wait timeouts, wakes) found with one index seek, so
 * every loop turn fires them whatever its free slots.
 */
export const sql = /* sql */ `
CREATE INDEX schedule_instant ON schedule (next_run_at) WHERE kind IN ('timer', 'timeout', 'wake');
`;
