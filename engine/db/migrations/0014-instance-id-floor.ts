/**
 * Migration 14: an instance id is never handed out twice.
 *
 * `instance.id` is a plain INTEGER PRIMARY KEY, which SQLite fills with max(id) + 1
 * (https://sqlite.org/autoinc.html): once retention, `runnel prune` or `instance:delete` removed
 * the newest instances, the next starts got their ids again, and whatever outside kept an id (a
 * change-feed consumer's copy, a link, a log line) took the new instance for the old one.
 * Making the column AUTOINCREMENT would mean building `instance` anew, and every table that refers
 * to it; instead `id_floor` keeps the highest instance id ever deleted (a trigger, on the rare
 * delete path only), and the insert gives each new instance an id above both it and every row
 * there (engine/db/queries/instances.ts). PostgreSQL's identity column never gives an id twice.
 *
 * An existing file starts its floor at its highest instance id: ids deleted above that before this
 * migration are not known any more.
 */
export const sql = /* sql */ `
CREATE TABLE id_floor (
  name TEXT PRIMARY KEY,
  id INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

INSERT INTO id_floor (name, id) VALUES ('instance', coalesce((SELECT max(id) FROM instance), 0));

CREATE TRIGGER instance_id_floor AFTER DELETE ON instance BEGIN
  UPDATE id_floor SET id = max(id, old.id) WHERE name = 'instance';
END;
`;
