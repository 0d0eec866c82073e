// renderer/src/monitor/format.ts: durations and relative times as the monitor shows them.
import { describe, expect, it } from 'vitest';
import { errorText, formatDuration, formatRelative } from '../../../../renderer/src/monitor/format';

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
