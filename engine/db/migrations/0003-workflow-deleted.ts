/**
 * Migration 3: deleting a workflow (`workflow:delete`).
 *
 * A deleted workflow leaves every list and can no longer be read or started by name, but the
 * versions its finished instances ran stay: history is append-only and names them. So deletion
 * marks the versions (`deleted_at`, epoch ms) instead of removing rows; the name is free again,
 * and a new workflow of that name numbers its versions after the deleted ones (UNIQUE(name, version)).
 */
export const sql = /* sql */ `
ALTER TABLE workflow ADD COLUMN deleted_at INTEGER;
`;
