/**
 * PostgreSQL migration 7: time travel's record, as SQLite migration 10
 * (engine/db/migrations/0010-history-state.ts) describes it.
 */
export const sql = /* sql */ `
CREATE TABLE history_state (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  instance_id BIGINT NOT NULL,
  history_id BIGINT,
  patch_json TEXT NOT NULL
);
CREATE INDEX history_state_instance ON history_state (instance_id, history_id);
`;
