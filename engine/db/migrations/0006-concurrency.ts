/**
 * Migration 6: flow control on a workflow (`concurrency: { limit, key? }` in its definition).
 *
 * - `instance.concurrency_key`: the slot an instance counts against, `<workflow name>` + U+001F +
 *   `<key value as text>` (the name alone when the limit has no key); NULL when its workflow had
 *   no limit when it was started.
 * - `instance.held`: 1 while it waits for a slot (PENDING, its entry rows parked); 0 once admitted.
 * - `child.concurrency_key`: a child item's key, computed with its start variables when the node
 *   started (an item may start later, inside a transaction, where no expression runs).
 * - The partial index serves both the count of admitted instances of a key and the oldest held one.
 */
export const sql = /* sql */ `
ALTER TABLE instance ADD COLUMN concurrency_key TEXT;
ALTER TABLE instance ADD COLUMN held INTEGER NOT NULL DEFAULT 0;
ALTER TABLE child ADD COLUMN concurrency_key TEXT;
CREATE INDEX instance_concurrency ON instance (concurrency_key, held, status) WHERE concurrency_key IS NOT NULL;
`;
