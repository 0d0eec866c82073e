/**
 * Migration 18: the due rows that run no handler — a `timer` firing, a `timeout` of a wait, the
 * `wake` of a wait that ended — found with one index seek (`schedule_instant`, partial: those kinds
 * only), so that every loop turn fires them whatever its free slots (engine/runtime/state-machine/
 * turn.ts). Before, they waited for a handler slot behind the ready steps: with every slot held by
 * long handlers a 500 ms delay fired 15 s late (found by a newcomer's trial). Rows of kind `run`
 * and `compensate` (most writes) never enter the index.
 */
export const sql = /* sql */ `
CREATE INDEX schedule_instant ON schedule (next_run_at) WHERE kind IN ('timer', 'timeout', 'wake');
`;
