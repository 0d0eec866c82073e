// renderer/src/monitor/retry-offer.ts: the engine's retry rule (retryInstance) over the instance
// as the monitor has it; test/e2e/monitor/retry-offer.test.ts holds it against the engine itself.
import { describe, expect, it } from 'vitest';
import type { NodeState } from '../../../../engine/api/contract';
import { retryRefusal } from '../../../../renderer/src/monitor/retry-offer';

const node = (id: string, status: string): NodeState => ({ id, status, attempt: 1, maxAttempts: 3 }) as NodeState;

describe('retry offer', () => {
  it('a FAILED instance with a failed or cancelled step and nothing compensated: offered', () => {
    expect(retryRefusal({ status: 'FAILED', nodes: [node('a', 'COMPLETED'), node('b', 'FAILED')] })).toBeUndefined();
    expect(retryRefusal({ status: 'FAILED', nodes: [node('a', 'COMPLETED'), node('b', 'CANCELLED')] })).toBeUndefined();
  });

  it('not FAILED: refused, naming the status', () => {
    expect(retryRefusal({ status: 'RUNNING', nodes: [node('b', 'FAILED')] })).toBe('it is RUNNING, not FAILED');
  });

  it('a compensated step: refused, naming each one', () => {
    expect(retryRefusal({ status: 'FAILED', nodes: [node('flash', 'COMPENSATED'), node('reboot', 'FAILED')] })).toBe(
      'its step "flash" was compensated, and running on would skip its undone effect; start a new instance instead, or a copy from before the failure with Time travel',
    );
    expect(retryRefusal({ status: 'FAILED', nodes: [node('a', 'COMPENSATED'), node('b', 'COMPENSATED'), node('c', 'FAILED')] })).toBe(
      'its steps "a", "b" were compensated, and running on would skip their undone effect; start a new instance instead, or a copy from before the failure with Time travel',
    );
  });

  it('nothing failed or cancelled: refused', () => {
    expect(retryRefusal({ status: 'FAILED', nodes: [node('a', 'COMPLETED'), node('b', 'SKIPPED')] })).toBe(
      'it has no failed or cancelled step to run again',
    );
  });
});
