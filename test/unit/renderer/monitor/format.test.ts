// renderer/src/monitor/format.ts: durations and relative times as the monitor shows them.
import { describe, expect, it } from 'vitest';
import { formatDuration, formatRelative } from '../../../../renderer/src/monitor/format';

describe('durations and relative times', () => {
  it('formats durations and relative times', () => {
    expect([
      formatDuration(850),
      formatDuration(4200),
      formatDuration(200_000),
      formatDuration(7_500_000),
      formatDuration(null),
    ]).toEqual(['850 ms', '4.2 s', '3 min 20 s', '2 h 5 min', '—']);
    expect(formatRelative(10_000, 5_000)).toBe('in 5.0 s');
    expect(formatRelative(5_000, 65_000)).toBe('1 min ago');
  });
});
