/**
 * Migration 4: a partial index over the deadline rows of `schedule`.
 *
 * A passed deadline fails its instance in the next loop turn whatever the worker is busy with
 * (engine/runtime/worker.ts): the turn looks deadlines up on their own, so they never wait behind
 * a backlog of due steps or for a free handler slot. Partial (`kind = 'deadline'`), so the steps,
 * timers and retries that make up the table never touch it.
 *
 * It also marks the file as written by a build that may store `instance.input_json` as '' (the
 * start variables kept once while unchanged): an older build refuses the file (DATABASE_NEWER)
 * instead of failing to parse that column.
 */
export const sql = /* sql */ `
CREATE INDEX schedule_deadline ON schedule (next_run_at) WHERE kind = 'deadline';
`;
