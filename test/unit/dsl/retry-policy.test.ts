import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  DEFAULT_RETRY,
  RetryPolicySchema,
  backoffDelayMs,
  resolveRetry,
  type ResolvedRetryPolicy,
} from '../../../engine/dsl/schema';
import { validateWorkflow, type TypeCatalog } from '../../../engine/dsl/validate';

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

describe('backoffCoefficient: any finite number ≥ 1, as Temporal accepts', () => {
  const catalog: TypeCatalog = (type) => (type === 'pass' ? { configSchema: z.object({}).loose() } : undefined);
  const problemsWith = (backoffCoefficient: unknown) =>
    validateWorkflow(
      { name: 'steep', nodes: [{ id: 'a', type: 'pass', retry: { backoffCoefficient } }] },
      catalog,
    ).problems.map((p) => p.message);

  it('is accepted above 100, up to the largest double', () => {
    for (const c of [1, 1.5, 100, 101, 1e6, 1e308, Number.MAX_VALUE]) {
      expect(RetryPolicySchema.safeParse({ backoffCoefficient: c }).success).toBe(true);
      expect(problemsWith(c)).toEqual([]);
    }
  });

  it('is refused below 1 and when not finite, naming the field', () => {
    for (const c of [0.999, 0, -2, Infinity, NaN, '2']) {
      const problems = problemsWith(c);
      expect(problems).toHaveLength(1);
      expect(problems[0]).toContain('retry.backoffCoefficient');
    }
  });

  // attempt n's delay, n = 1 … 10,000, for one policy
  const delays = (policy: ResolvedRetryPolicy): number[] =>
    Array.from({ length: 10_000 }, (_, i) => backoffDelayMs(policy, i + 1));

  for (const backoffCoefficient of [1e6, 1e308]) {
    it(`coefficient ${backoffCoefficient}: attempts 1…10,000 give finite, capped, non-decreasing delays, exact below the cap`, () => {
      for (const maxIntervalMs of [60_000, 2_592_000_000]) {
        const policy: ResolvedRetryPolicy = { ...DEFAULT_RETRY, initialIntervalMs: 1000, backoffCoefficient, maxIntervalMs };
        const all = delays(policy);
        expect(all.filter((d) => !Number.isInteger(d) || d < 0 || d > maxIntervalMs)).toEqual([]);
        expect(all.filter((d, i) => i > 0 && d < all[i - 1]!)).toEqual([]);
        // the first attempt waits initialIntervalMs; the next ones hit the cap at once
        expect(all[0]).toBe(1000);
        expect(all[1]).toBe(Math.min(1000 * backoffCoefficient, maxIntervalMs));
        expect(all.at(-1)).toBe(maxIntervalMs);
      }
      // with a tiny first delay and the largest cap, the formula is exact while below it
      const small: ResolvedRetryPolicy = { ...DEFAULT_RETRY, initialIntervalMs: 1, backoffCoefficient: 1e6, maxIntervalMs: 2_592_000_000 };
      expect([1, 2, 3, 4].map((n) => backoffDelayMs(small, n))).toEqual([1, 1_000_000, 2_592_000_000, 2_592_000_000]);
    });
  }

  it('is exact for small n wherever the power stays below the cap (checked against the formula)', () => {
    const cap = 2_592_000_000;
    for (const backoffCoefficient of [1.1, 1.5, 2, 3, 7.25, 10, 100, 1000]) {
      for (const initialIntervalMs of [1, 7, 1000, 86_400_000]) {
        const policy = { ...DEFAULT_RETRY, initialIntervalMs, backoffCoefficient, maxIntervalMs: cap };
        for (let n = 1; n <= 60; n++) {
          const formula = Math.min(cap, Math.round(initialIntervalMs * backoffCoefficient ** (n - 1)));
          expect(backoffDelayMs(policy, n), `${initialIntervalMs} × ${backoffCoefficient}^${n - 1}`).toBe(formula);
        }
      }
    }
    // a power that lands on the cap exactly is the cap, not one ms off
    expect(backoffDelayMs({ ...DEFAULT_RETRY, initialIntervalMs: 1000, backoffCoefficient: 10, maxIntervalMs: 100_000 }, 3)).toBe(100_000);
  });

  it('stays finite for attempt numbers no worker reaches', () => {
    const policy = { ...DEFAULT_RETRY, backoffCoefficient: 1e308, maxIntervalMs: 2_592_000_000 };
    expect(backoffDelayMs(policy, Number.MAX_SAFE_INTEGER)).toBe(2_592_000_000);
    expect(backoffDelayMs(policy, Infinity)).toBe(2_592_000_000);
    expect(backoffDelayMs(policy, NaN)).toBe(DEFAULT_RETRY.initialIntervalMs);
  });
});
