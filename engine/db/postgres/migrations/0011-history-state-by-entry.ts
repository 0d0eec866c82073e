/**
 * PostgreSQL migration 11, as SQLite's migration 16 (engine/db/migrations/0016-history-state-by-entry.ts):
 * time travel's record keyed by the history entry alone; an instance's pending patch by minus its id.
 */
export const sql = /* sql */ `
CREATE TABLE history_state_by_entry (
  history_id BIGINT PRIMARY KEY,
  patch_json TEXT NOT NULL
);
INSERT INTO history_state_by_entry (history_id, patch_json)
  SELECT CASE WHEN history_id = 0 THEN -instance_id ELSE history_id END, patch_json FROM history_state;
DROP TABLE history_state;
ALTER TABLE history_state_by_entry RENAME TO history_state;
ALTER TABLE history_state RENAME CONSTRAINT history_state_by_entry_pkey TO history_state_pkey;
COMMENT ON COLUMN history_state.history_id IS 'history.id the patch is keyed by; minus the instance''s id: its pending patch';
COMMENT ON COLUMN history_state.patch_json IS 'time travel patch (engine/store/history-state.ts StatePatch); "s": 1 begins the variables at the instance''s start variables';
`;
