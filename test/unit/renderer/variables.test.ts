// renderer/src/variables.ts: the variables a person types, as a JSON object or nothing.
import { describe, expect, it } from 'vitest';
import { parseVariables } from '../../../renderer/src/variables';

describe('parseVariables', () => {
  it('accepts an object or nothing, and names what is wrong otherwise', () => {
    expect(parseVariables('')).toEqual({ ok: true, value: undefined });
    expect(parseVariables(' {"a": 1} ')).toEqual({ ok: true, value: { a: 1 } });
    expect(parseVariables('[1]')).toMatchObject({ ok: false, message: expect.stringContaining('JSON object') });
    expect(parseVariables('{a:1}')).toMatchObject({ ok: false, message: expect.stringContaining('not valid JSON') });
  });
});
