/**
 * PostgreSQL migration 5: retention, as SQLite's migration 8 (engine/db/migrations/0008-retention.ts)
 * — `instance.purging`, and a history row may be deleted only while its instance is marked
 * `purging` (the delete trigger's function checks it; updates and TRUNCATE stay refused).
 */
export const sql = /* sql */ `
ALTER TABLE instance ADD COLUMN purging INTEGER NOT NULL DEFAULT 0 CHECK (purging IN (0, 1));
CREATE FUNCTION history_delete_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.instance_id IS NOT NULL AND EXISTS (SELECT 1 FROM instance WHERE id = OLD.instance_id AND purging = 1) THEN
    RETURN OLD;
  END IF;
  RAISE EXCEPTION 'history is append-only';
END $$;
DROP TRIGGER history_no_delete ON history;
CREATE TRIGGER history_no_delete BEFORE DELETE ON history FOR EACH ROW EXECUTE FUNCTION history_delete_guard();
`;
