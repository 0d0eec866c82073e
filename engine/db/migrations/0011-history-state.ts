/**
 * Migration 11: time travel's record (engine/store/history-state.ts).
 *
 * - `history_state`: the compact change of an instance's state (`patch_json`: variables by
 *   top-level key, instance fields, node fields) made by the write transaction that appended
 *   history entry `history_id` (its first entry for the instance). The state after entry E is
 *   the fold of the instance's rows with 0 < `history_id` <= E, in `history_id` order. At most one
 *   row per instance has `history_id` 0: changes no entry showed yet, taken over by the next entry.
 *   One b-tree (WITHOUT ROWID, keyed as it is read); no foreign key: retention deletes these rows
 *   with the instance's history.
 */
export const sql = /* sql */ `
CREATE TABLE history_state (
  instance_id INTEGER NOT NULL,
  history_id INTEGER NOT NULL,
  patch_json TEXT NOT NULL,
  PRIMARY KEY (instance_id, history_id)
) STRICT, WITHOUT ROWID;
`;
