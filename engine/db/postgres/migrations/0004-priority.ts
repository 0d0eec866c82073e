/**
 * PostgreSQL migration 4: instance priority, as SQLite's migration 7
 * (engine/db/migrations/0007-priority.ts) — `instance.priority`, `schedule.priority` and the
 * partial `schedule_priority` index, and the concurrency queue's `instance_admitted` and
 * `instance_held` in place of `instance_concurrency` — with the same names and meaning.
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
