/**
 * Migration 9: the change feed's named consumers (engine/runtime/change-feed.ts).
 *
 * - `change_consumer`: one row per registered consumer. `cursor` is the history id it has read
 *   through (0: nothing yet); `updated_at` is when it last acknowledged, epoch ms. Retention
 *   keeps every history row above the lowest cursor.
 *
 * The feed itself is `history` read by id: ids are assigned inside the one write transaction at a
 * time (BEGIN IMMEDIATE), so they increase in commit order and a cursor never skips a row that
 * commits later.
 */
export const sql = /* sql */ `
CREATE TABLE change_consumer (
  name TEXT PRIMARY KEY,
  cursor INTEGER NOT NULL CHECK (cursor >= 0),
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;
`;
