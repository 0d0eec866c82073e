import { describe, expect, it } from 'vitest';
import {
  DEFAULT_RETRY,
  backoffDelayMs,
  resolveRetry,
  type ResolvedRetryPolicy,
} from '../../engine/dsl/schema';

const policy: ResolvedRetryPolicy = {
  maxAttempts: 5,
  initialIntervalMs: 1000,
  backoffCoefficient: 2,
  maxIntervalMs: 60_000,
  jitter: 0,
};

describe('backoffDelayMs (DESIGN.md "Rules pinned")', () => {
  it('follows min(initialIntervalMs × coefficient^(n−1), maxIntervalMs)', () => {
    const delays = [1, 2, 3, 4, 5, 6, 7, 8].map((n) => backoffDelayMs(policy, n));
    expect(delays).toEqual([1000, 2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000]);
    expect(backoffDelayMs({ ...policy, backoffCoefficient: 1.5 }, 3)).toBe(2250);
    expect(backoffDelayMs({ ...policy, backoffCoefficient: 1 }, 50)).toBe(1000);
    expect(backoffDelayMs({ ...policy, initialIntervalMs: 0 }, 9)).toBe(0);
  });

  it('does not overflow for huge attempt numbers', () => {
    expect(backoffDelayMs(policy, 10_000)).toBe(60_000);
    expect(backoffDelayMs({ ...policy, backoffCoefficient: 100, maxIntervalMs: 2_592_000_000 }, 10_000)).toBe(
      2_592_000_000,
    );
    expect(Number.isFinite(backoffDelayMs(policy, Number.MAX_SAFE_INTEGER))).toBe(true);
  });

  it('applies jitter only to shorten the delay, by at most the jitter fraction', () => {
    const jittered = { ...policy, jitter: 0.25 };
    for (const r of [0, 0.1, 0.5, 0.999, 1]) {
      const d = backoffDelayMs(jittered, 3, () => r);
      expect(d).toBeLessThanOrEqual(4000);
      expect(d).toBeGreaterThanOrEqual(3000);
    }
    expect(backoffDelayMs(jittered, 3, () => 0)).toBe(4000);
    expect(backoffDelayMs(jittered, 3, () => 1)).toBe(3000);
    expect(backoffDelayMs(jittered, 10_000, () => 0.5)).toBe(52_500);
  });

  it('resolves a policy from node, then workflow, then the default', () => {
    expect(resolveRetry({ maxAttempts: 1 }, { maxAttempts: 4, initialIntervalMs: 10 })).toEqual({
      ...DEFAULT_RETRY,
      maxAttempts: 1,
      initialIntervalMs: 10,
    });
    expect(resolveRetry(undefined, undefined)).toEqual(DEFAULT_RETRY);
  });
});
