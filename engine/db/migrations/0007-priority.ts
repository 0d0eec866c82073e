/**
 * Migration 7: instance priority (`priority` on start, or the workflow's default).
 *
 * - `instance.priority`: an integer, higher first; 0 unless given.
 * - `schedule.priority`: a copy of its instance's, written when the row is inserted, so a claim
 *   orders by it without a join.
 * - `schedule_priority`, a partial index over the rows that have one: a claim asks it first
 *   (empty when nobody uses priority: one seek), walks its levels highest first, and takes the
 *   rows of priority 0 through `schedule_due` as before. A full index would cost every transition
 *   an extra B-tree write for a feature most files never use.
 */
export const sql = /* sql */ `
ALTER TABLE instance ADD COLUMN priority INTEGER NOT NULL DEFAULT 0;
ALTER TABLE schedule ADD COLUMN priority INTEGER NOT NULL DEFAULT 0;
CREATE INDEX schedule_priority ON schedule (priority, next_run_at) WHERE priority <> 0;
`;
