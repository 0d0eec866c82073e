/**
 * Stack traces only with `RUNNEL_DEBUG=1` (or `true`), as the README says: `RUNNEL_DEBUG=0`, empty
 * or `false` printed them too, since any value at all turned them on.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { debugEnabled } from '../../../engine/debug';
import { EngineError } from '../../../engine/errors';
import { reportError } from '../../../engine/cli/output';

afterEach(() => vi.unstubAllEnvs());

/** What reportError prints for an unexpected typed error (exit 1) with RUNNEL_DEBUG set to `value`. */
function printed(value: string | undefined): string {
  vi.stubEnv('RUNNEL_DEBUG', value);
  let out = '';
  const code = reportError(new EngineError('INTERNAL', 'boom'), { stdout: () => undefined, stderr: (t) => (out += t) });
  expect(code).toBe(1);
  return out;
}

describe('RUNNEL_DEBUG', () => {
  it('is on for 1 and true (any case, spaces around ignored) only', () => {
    for (const on of ['1', 'true', 'TRUE', ' 1 ']) expect(debugEnabled({ RUNNEL_DEBUG: on }), on).toBe(true);
    for (const off of [undefined, '', '0', 'false', 'no', 'off', '2', 'yes']) expect(debugEnabled({ RUNNEL_DEBUG: off }), String(off)).toBe(false);
  });

  it('prints an error without its stack when 0, empty, false or unset; with it when 1', () => {
    for (const off of ['0', '', 'false', undefined]) {
      const out = printed(off);
      expect(out, String(off)).toBe('error: INTERNAL: boom\n');
    }
    expect(printed('1')).toMatch(/^error: INTERNAL: boom\nEngineError: boom\n\s+at /);
  });
});
