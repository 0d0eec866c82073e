// renderer/src/monitor/virtual.ts: windowing arithmetic for lists of any length.
import { describe, expect, it } from 'vitest';
import { nearEnd, rowWindow } from '../../../../renderer/src/monitor/virtual';

describe('windowing', () => {
  it('renders only the rows in view plus the overscan, whatever the row count', () => {
    expect(rowWindow(0, 340, 34, 100_000, 5)).toEqual({ start: 0, end: 16, offsetTop: 0 });
    const deep = rowWindow(34 * 50_000, 340, 34, 100_000, 5);
    expect(deep).toEqual({ start: 49_995, end: 50_016, offsetTop: 49_995 * 34 });
    expect(deep.end - deep.start).toBeLessThan(30);
    expect(rowWindow(999_999, 340, 34, 10, 5)).toMatchObject({ end: 10 });
    expect(rowWindow(0, 340, 34, 0)).toEqual({ start: 0, end: 0, offsetTop: 0 });
    expect(nearEnd(34 * 170, 340, 34, 200)).toBe(true);
    expect(nearEnd(0, 340, 34, 200)).toBe(false);
  });
});
