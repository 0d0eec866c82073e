/**
 * Migration 10: `history.id` becomes AUTOINCREMENT, so a history id (the change feed's cursor) is
 * never handed out twice.
 *
 * Without it SQLite gives a new row max(id) + 1 (https://sqlite.org/autoinc.html): once retention,
 * `runnel prune` or `instance:delete` removed the newest history rows, the next transitions got
 * their ids again, and a consumer whose cursor was already past them skipped those entries for
 * good. With AUTOINCREMENT a new id is above every id the table ever held (`sqlite_sequence`
 * keeps the highest, in the same transaction as the insert), as PostgreSQL's identity column
 * already is.
 *
 * SQLite cannot change a column in place, so the table is made anew with its rows (as migration 5
 * made `schedule`; https://sqlite.org/lang_altertable.html, "Making Other Kinds Of Table Schema
 * Changes"), and its index and both append-only triggers (migration 8's `history_no_delete`, with
 * its WHEN) are made again. Dropping the old table fires no trigger. The sequence is seeded with
 * the highest id known: the largest row's, or a consumer's cursor when rows above every remaining
 * one were deleted before this migration (their ids are gone; the cursor still says they were
 * handed out). The copy rewrites the whole table once: on a large file this migration takes as
 * long as copying its history (0.8 s for 500,000 rows on the 2-core dev machine, 2026-12-02) and
 * needs that much free disk for the WAL meanwhile.
 */
export const sql = /* sql */ `
CREATE TABLE history_new (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  instance_id INTEGER REFERENCES instance(id),
  node_id TEXT,
  type TEXT NOT NULL,
  at INTEGER NOT NULL,
  attempt INTEGER,
  actor TEXT,
  data_json TEXT
) STRICT;
INSERT INTO history_new (id, instance_id, node_id, type, at, attempt, actor, data_json)
  SELECT id, instance_id, node_id, type, at, attempt, actor, data_json FROM history ORDER BY id;
DROP TABLE history;
ALTER TABLE history_new RENAME TO history;
CREATE INDEX history_instance ON history (instance_id, id);
CREATE TRIGGER history_no_update BEFORE UPDATE ON history BEGIN SELECT RAISE(ABORT, 'history is append-only'); END;
CREATE TRIGGER history_no_delete BEFORE DELETE ON history
  WHEN OLD.instance_id IS NULL
    OR NOT EXISTS (SELECT 1 FROM instance WHERE id = OLD.instance_id AND purging = 1)
  BEGIN SELECT RAISE(ABORT, 'history is append-only'); END;
DELETE FROM sqlite_sequence WHERE name = 'history';
INSERT INTO sqlite_sequence (name, seq)
  SELECT 'history', max(coalesce((SELECT max(id) FROM history), 0), coalesce((SELECT max(cursor) FROM change_consumer), 0));
`;
