/**
 * Migration 10: time travel's record (engine/store/history-state.ts).
 *
 * - `history_state`: one row per write transaction and instance it changed, `patch_json` the
 *   compact change of the instance's state (variables by top-level key, instance fields, node
 *   fields), `history_id` the first history entry that transaction appended for the instance
 *   (NULL while it appended none: the instance's next entry claims the row). The state after
 *   history entry E is the fold of the instance's rows with `history_id <= E`, in `id` order.
 *   No foreign key: retention deletes these rows with the instance's history.
 */
export const sql = /* sql */ `
CREATE TABLE history_state (
  id INTEGER PRIMARY KEY,
  instance_id INTEGER NOT NULL,
  history_id INTEGER,
  patch_json TEXT NOT NULL
) STRICT;
CREATE INDEX history_state_instance ON history_state (instance_id, history_id);
`;
