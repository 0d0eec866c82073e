/**
 * Migration 8: retention — ended instances may be deleted with everything they own, through one
 * path (engine/runtime/state-machine/retention.ts), and the append-only history allows that path
 * and no other.
 *
 * - `instance.purging`: 1 while the transaction that deletes the instance runs (it is set, its
 *   rows are deleted, then the instance row itself, all in one transaction), else 0. Only an ended
 *   instance is ever marked (the marking statement checks the status).
 * - `history_no_delete` is made again with a WHEN: a history row may be deleted only while its
 *   instance is marked `purging`. Rows of no instance, and rows of any instance not being purged,
 *   stay append-only; updates stay refused as before.
 */
export const sql = /* sql */ `
ALTER TABLE instance ADD COLUMN purging INTEGER NOT NULL DEFAULT 0 CHECK (purging IN (0, 1));
DROP TRIGGER history_no_delete;
CREATE TRIGGER history_no_delete BEFORE DELETE ON history
  WHEN OLD.instance_id IS NULL
    OR NOT EXISTS (SELECT 1 FROM instance WHERE id = OLD.instance_id AND purging = 1)
  BEGIN SELECT RAISE(ABORT, 'history is append-only'); END;
`;
