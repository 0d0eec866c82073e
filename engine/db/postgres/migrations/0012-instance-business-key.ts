/**
 * PostgreSQL migration 12, as SQLite's migration 17 (engine/db/migrations/0017-instance-business-key.ts):
 * instances found by business key with one index seek (a signal by business key, the list's filter).
 */
export const sql = /* sql */ `
CREATE INDEX instance_business ON instance (business_key) WHERE business_key IS NOT NULL;
`;
