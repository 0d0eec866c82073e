// renderer/src/monitor/diff.ts: the diff of an edit of the variables, and the JSON a person types.
import { describe, expect, it } from 'vitest';
import { diffVariables, isEmptyDiff, parseJsonObject } from '../../../../renderer/src/monitor/diff';

describe('variables diff and JSON input', () => {
  it('names what was added, removed and changed; an unchanged edit is empty', () => {
    expect(diffVariables({ a: 1, b: { x: 1 }, c: 3 }, { a: 1, b: { x: 2 }, d: 'new' })).toEqual({
      added: { d: 'new' },
      removed: ['c'],
      changed: { b: { from: { x: 1 }, to: { x: 2 } } },
    });
    expect(isEmptyDiff(diffVariables({ a: [1] }, { a: [1] }))).toBe(true);
    expect(parseJsonObject('[1]')).toMatchObject({ ok: false });
    expect(parseJsonObject('{"a": ')).toMatchObject({
      ok: false,
      message: expect.stringMatching(/^Not valid JSON/),
    });
    expect(parseJsonObject('{"a": 1}')).toEqual({ ok: true, value: { a: 1 } });
  });

  it('a variable named like an Object.prototype member is added, removed or changed like any other', () => {
    expect(diffVariables({ toString: 1, keep: 0 }, { constructor: 'c', valueOf: 2, keep: 0 })).toEqual({
      added: { constructor: 'c', valueOf: 2 },
      removed: ['toString'],
      changed: {},
    });
    expect(diffVariables({ hasOwnProperty: 1 }, { hasOwnProperty: 2 })).toEqual({
      added: {},
      removed: [],
      changed: { hasOwnProperty: { from: 1, to: 2 } },
    });
  });
});
