/**
 * PostgreSQL migration 3: flow control on a workflow, as SQLite's migration 6
 * (engine/db/migrations/0006-concurrency.ts) — `instance.concurrency_key`, `instance.held`,
 * `child.concurrency_key` and the `instance_concurrency` index — with the same names and meaning.
 */
export const sql = /* sql */ `
ALTER TABLE instance ADD COLUMN concurrency_key TEXT;
ALTER TABLE instance ADD COLUMN held INTEGER NOT NULL DEFAULT 0;
ALTER TABLE child ADD COLUMN concurrency_key TEXT;
CREATE INDEX instance_concurrency ON instance (concurrency_key, held, status) WHERE concurrency_key IS NOT NULL;
`;
