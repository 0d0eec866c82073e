/**
 * PostgreSQL migration 6: the change feed's named consumers, as SQLite's migration 9
 * (engine/db/migrations/0009-change-feed.ts): `change_consumer(name, cursor, created_at,
 * updated_at)` with the same names and meaning.
 *
 * History ids here are identity values taken at insert by transactions that commit in any order;
 * the feed reads them safely through the lock described in ../changes.ts, which needs no schema.
 */
export const sql = /* sql */ `
CREATE TABLE change_consumer (
  name TEXT PRIMARY KEY,
  cursor BIGINT NOT NULL CHECK (cursor >= 0),
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);
`;
