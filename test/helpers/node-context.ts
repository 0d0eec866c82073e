/**
 * A minimal {@link NodeContext} for calling node handlers directly in tests.
 *
 * Real values throughout: a live AbortController, a settable clock, and a log that records what
 * the handler wrote so tests can assert on it.
 */
import type { NodeContext } from '../../engine/nodes/types';

/** A {@link NodeContext} plus the handles a test drives it with. */
export type TestNodeContext<Config> = NodeContext<Config> & {
  /** Aborts `signal` (with `reason`, if given). */
  controller: AbortController;
  /** Every `log` call, in order. */
  logs: { message: string; data?: unknown }[];
  /** Sets what `now()` returns (epoch ms). */
  setNow(ms: number): void;
};

/**
 * Builds a context for instance 1, node `n1`, attempt 1, with `config` `{}`, input `{}`, empty
 * variables and steps, and the clock frozen at 2026-01-01T00:00:00Z, unless `partial` says
 * otherwise. A `signal` in `partial` replaces the controller's.
 */
export function makeContext<Config = Record<string, unknown>>(
  partial: Partial<NodeContext<Config>> = {},
): TestNodeContext<Config> {
  const controller = new AbortController();
  const logs: { message: string; data?: unknown }[] = [];
  let now = Date.UTC(2026, 0, 1);
  const instanceId = partial.instanceId ?? 1;
  const nodeId = partial.nodeId ?? 'n1';
  return {
    instanceId,
    nodeId,
    type: 'test',
    attempt: 1,
    idempotencyKey: `${instanceId}:${nodeId}`,
    config: {} as Config,
    input: {},
    variables: {},
    steps: {},
    signal: controller.signal,
    now: () => now,
    log(message, data) {
      logs.push(data === undefined ? { message } : { message, data });
    },
    ...partial,
    controller,
    logs,
    setNow(ms) {
      now = ms;
    },
  };
}
