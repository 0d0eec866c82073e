import { describe, expect, it } from 'vitest';
import { DelayConfigSchema, MAX_DELAY_MS, delayNode, type DelayConfig } from '../../../engine/nodes/delay';
import { makeContext } from '../../helpers/node-context';

const NOW = Date.UTC(2026, 0, 1);

describe('delay node', () => {
  function delayContext(config: unknown) {
    return makeContext<DelayConfig>({ config: DelayConfigSchema.parse(config), now: () => NOW });
  }

  it('waits durationMs from the engine clock', async () => {
    expect(await delayNode.execute(delayContext({ durationMs: 5000 }))).toEqual({
      wait: { until: NOW + 5000 },
      output: { until: NOW + 5000 },
    });
  });

  it('waits until an ISO date-time or epoch ms', async () => {
    const at = NOW + 3_600_000;
    expect(await delayNode.execute(delayContext({ until: new Date(at).toISOString() }))).toEqual({
      wait: { until: at },
      output: { until: at },
    });
    expect(await delayNode.execute(delayContext({ until: '2026-01-01T02:00:00+01:00' }))).toMatchObject({
      wait: { until: at },
    });
    expect(await delayNode.execute(delayContext({ until: at }))).toMatchObject({ wait: { until: at } });
  });

  it('a time already past (or zero duration) is due now', async () => {
    expect(await delayNode.execute(delayContext({ until: '2020-01-01T00:00:00Z' }))).toEqual({
      wait: { until: NOW },
      output: { until: NOW },
    });
    expect(await delayNode.execute(delayContext({ durationMs: 0 }))).toMatchObject({ wait: { until: NOW } });
  });

  it('needs exactly one of durationMs and until, with a clear message', () => {
    for (const config of [{}, { durationMs: 1, until: NOW }]) {
      const parsed = DelayConfigSchema.safeParse(config);
      expect(parsed.success).toBe(false);
      expect(parsed.error?.issues[0]?.message).toBe('give exactly one of durationMs or until');
    }
  });

  it('refuses bad dates and durations out of range', () => {
    const badDate = DelayConfigSchema.safeParse({ until: 'next tuesday' });
    expect(badDate.success).toBe(false);
    expect(badDate.error?.issues[0]?.path).toEqual(['until']);
    expect(DelayConfigSchema.safeParse({ durationMs: -1 }).success).toBe(false);
    expect(DelayConfigSchema.safeParse({ durationMs: MAX_DELAY_MS }).success).toBe(true);
    expect(DelayConfigSchema.safeParse({ durationMs: MAX_DELAY_MS + 1 }).success).toBe(false);
    expect(DelayConfigSchema.safeParse({ durationMs: 1.5 }).success).toBe(false);
  });

  it('runs once: no retries by default', () => {
    expect(delayNode.defaultRetry).toEqual({ maxAttempts: 1 });
  });
});
