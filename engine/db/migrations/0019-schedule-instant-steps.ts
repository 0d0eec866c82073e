/**
 * Migration 19: `schedule.instant` says a row runs no handler that takes time — a `timer`
 * firing, a wait's `timeout`, a `wake`, and now the `run` of a node whose type is instant (pass,
 * delay, approval, event, subworkflow, map: engine/nodes/types.ts `instant`) — and the partial
 * index `schedule_instant` (migration 18) covers exactly those rows. Every loop turn claims them
 * whatever its free handler slots (engine/runtime/state-machine/turn.ts). Before, an approval
 * made READY behind long scripts waited 16 s for a slot before it was even requested (found by a
 * newcomer's trial). `run` rows already in a file keep 0: they are claimed within the slots, as
 * before. A leased `run` row keeps 0 as well: recovered after a lost lease, it waits for a slot.
 */
export const sql = /* sql */ `
ALTER TABLE schedule ADD COLUMN instant INTEGER NOT NULL DEFAULT 0 CHECK (instant IN (0, 1));
UPDATE schedule SET instant = 1 WHERE kind IN ('timer', 'timeout', 'wake');
DROP INDEX schedule_instant;
CREATE INDEX schedule_instant ON schedule (next_run_at) WHERE instant = 1;
`;
