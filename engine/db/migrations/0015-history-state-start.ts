/**
 * Migration 15: time travel's patches may begin the variables at the instance's start variables.
 *
 * The patch of the transaction that creates an instance (`history_state`, migration 11) says
 * `"s": 1` — the variables begin as the instance's stored input, which the instance keeps anyway —
 * instead of copying every start variable into the patch (engine/store/history-state.ts
 * StatePatch). No table changes: the version tells a Runnel of before this format, which would
 * fold such a patch without the start variables, that the file is newer than it (DATABASE_NEWER).
 */
export const sql = /* sql */ `
-- the format of history_state.patch_json gains "s" (see above); no schema change
SELECT 1;
`;
