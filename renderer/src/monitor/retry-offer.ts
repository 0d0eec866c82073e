/**
 * Whether the monitor offers "Retry from the failed node": only when the engine would accept
 * `instance:retry`, so a person is told up front why not instead of being refused.
 *
 * The engine's rule is `retryInstance` (engine/runtime/state-machine/manual.ts), which runs inside
 * a write transaction over the database and so cannot be imported here; this mirrors its checks
 * over the instance as `instance:get` gives it, and test/e2e/monitor/retry-offer.test.ts holds the
 * two against each other on real instances (the offer shown ⇔ the engine's answer). One gap the
 * view cannot see: a failure an error edge handled is not run again, but `instance:get` does not
 * mark it; it only matters for a FAILED instance whose every failure was handled and nothing was
 * cancelled, which no run of the engine ends in (the failure that failed the instance is
 * unhandled).
 */
import type { InstanceDetail } from '../../../engine/api/contract';

/** The part of an instance the rule reads. */
export type RetryFacts = Pick<InstanceDetail, 'status' | 'nodes'>;

/**
 * Why the engine would refuse to retry `instance`, as the end of a sentence ("it is RUNNING, not
 * FAILED"), or undefined when it would accept. The engine's checks, in its order: the instance is
 * FAILED; no step was compensated (running on would skip the undone effect); some step failed or
 * was cancelled, to run again.
 */
export function retryRefusal(instance: RetryFacts): string | undefined {
  if (instance.status !== 'FAILED') return `it is ${instance.status}, not FAILED`;
  const undone = instance.nodes.filter((n) => n.status === 'COMPENSATED').map((n) => `"${n.id}"`);
  if (undone.length > 0) {
    const one = undone.length === 1;
    return `${one ? 'its step' : 'its steps'} ${undone.join(', ')} ${one ? 'was' : 'were'} compensated, and running on would skip ${one ? 'its' : 'their'} undone effect; start a new instance instead, or a copy from before the failure with Time travel`;
  }
  if (!instance.nodes.some((n) => n.status === 'FAILED' || n.status === 'CANCELLED'))
    return 'it has no failed or cancelled step to run again';
  return undefined;
}
