/**
 * Migration 16: time travel's record (`history_state`, migration 11) keyed by the history entry
 * alone, as the table's rowid.
 *
 * A patch was keyed by (instance, entry) in a WITHOUT ROWID table, so each transaction's patches
 * were inserted across the leaf pages of every instance it changed; keyed by the entry's id (a
 * rowid that only grows, as history's AUTOINCREMENT does) they are appended to the table's last
 * page. Measured (warm linear chain, NORMAL): WAL frames a transition 1.16 → about 0.95, and
 * about 3% more transitions a second. An instance's patches are found through its history entries
 * (`history_instance`). Its pending patch (changes no entry showed yet, formerly entry 0) is keyed
 * by minus the instance's id.
 */
export const sql = /* sql */ `
CREATE TABLE history_state_by_entry (
  history_id INTEGER PRIMARY KEY,   -- history.id the patch is keyed by; minus the instance's id: its pending patch
  patch_json TEXT NOT NULL          -- engine/store/history-state.ts StatePatch
) STRICT;
INSERT INTO history_state_by_entry (history_id, patch_json)
  SELECT CASE WHEN history_id = 0 THEN -instance_id ELSE history_id END, patch_json FROM history_state;
DROP TABLE history_state;
ALTER TABLE history_state_by_entry RENAME TO history_state;
`;
