/**
 * PostgreSQL migration 10, as SQLite's migration 15 (engine/db/migrations/0015-history-state-start.ts):
 * time travel's patch of the transaction that creates an instance may begin the variables at the
 * instance's start variables (`"s": 1`). No table changes: the version tells an older Runnel that
 * the database is newer than it.
 */
export const sql = /* sql */ `
COMMENT ON COLUMN history_state.patch_json IS 'time travel patch (engine/store/history-state.ts StatePatch); "s": 1 begins the variables at the instance''s start variables';
`;
