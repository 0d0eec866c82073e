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
 * - The concurrency queue's indexes, replacing migration 6's `instance_concurrency` (key, held,
 *   status), whose range for "admitted" took in every ended instance of the key, so each end's
 *   count of the instances in progress read the key's whole past (the bench's limited workflow
 *   ran at 0.32× of the same without a limit): `instance_admitted` holds only the instances in
 *   progress; `instance_held`, the waiting ones in admission order (priority, then id).
 */
export const sql = /* sql */ `
ALTER TABLE instance ADD COLUMN priority INTEGER NOT NULL DEFAULT 0;
ALTER TABLE schedule ADD COLUMN priority INTEGER NOT NULL DEFAULT 0;
CREATE INDEX schedule_priority ON schedule (priority, next_run_at) WHERE priority <> 0;
DROP INDEX instance_concurrency;
CREATE INDEX instance_admitted ON instance (concurrency_key, held, status)
  WHERE concurrency_key IS NOT NULL AND held = 0 AND status NOT IN ('COMPLETED', 'FAILED', 'CANCELLED');
CREATE INDEX instance_held ON instance (concurrency_key, priority DESC, id) WHERE held = 1;
`;
