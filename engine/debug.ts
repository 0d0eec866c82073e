/**
 * Whether debugging output (stack traces) is asked for: `RUNNEL_DEBUG=1` or `RUNNEL_DEBUG=true`
 * (any case), as the README says. Anything else — unset, empty, `0`, `false`, `no` — is off: a
 * `RUNNEL_DEBUG=0` left in a shell printed stacks when any value at all turned it on.
 *
 * Node-side only (reads `process.env`): the CLI, the hosts and the runtime use it, never engine/dsl.
 */
export function debugEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = env.RUNNEL_DEBUG?.trim().toLowerCase();
  return value === '1' || value === 'true';
}
