// renderer/src/monitor/format.ts: durations and relative times as the monitor shows them.
import { describe, expect, it } from 'vitest';
import { errorText, formatDuration, formatDurationShort, formatRelative, formatRelativeShort } from '../../../../renderer/src/monitor/format';

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

  it('formats them short for the instance table: two units at most, no spaces inside', () => {
    expect([850, 4200, 42_000, 200_000, 4_560_000, 7_200_000, 100_800_000, null].map(formatDurationShort)).toEqual([
      '850ms',
      '4.2s',
      '42s',
      '3m 20s',
      '1h 16m',
      '2h',
      '1d 4h',
      '—',
    ]);
    expect(formatRelativeShort(10_000, 5_000)).toBe('in 5.0s');
    expect(formatRelativeShort(5_000, 4_565_000)).toBe('1h 16m ago');
    expect(formatRelativeShort(5_000, 5_500)).toBe('now');
  });
});

describe('errorText', () => {
  it('says where a script error is in the code (line 1 and line 3), once', () => {
    // given a runtime error placed by the sandbox, then a syntax error whose message has its place
    expect(errorText({ code: 'SCRIPT_ERROR', message: 'script threw Error: boom', details: { line: 1, column: 16 } })).toBe(
      'SCRIPT_ERROR: script threw Error: boom (line 1, column 16)',
    );
    expect(errorText({ code: 'SCRIPT_ERROR', message: 'script threw TypeError: t', details: { line: 3 } })).toBe('SCRIPT_ERROR: script threw TypeError: t (line 3)');
    expect(
      errorText({ code: 'SCRIPT_ERROR', message: 'script has a syntax error: x (line 3, column 11)', details: { line: 3, column: 11 } }),
    ).toBe('SCRIPT_ERROR: script has a syntax error: x (line 3, column 11)');
    // other errors' details are not read as places
    expect(errorText({ code: 'HTTP_ERROR', message: 'm', details: { line: 2 } })).toBe('HTTP_ERROR: m');
  });
});
