/**
 * PostgreSQL migration 7: time travel's record, as SQLite migration 11
 * (engine/db/migrations/0010-history-state.ts) describes it.
 */
export const sql = /* sql */ `
CREATE TABLE history_state (
  instance_id BIGINT NOT NULL,
  history_id BIGINT NOT NULL,
  patch_json TEXT NOT NULL,
  PRIMARY KEY (instance_id, history_id)
);
`;
