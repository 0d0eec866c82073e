// findValueProblem: the limit exactly, one past it, circular values, arrays, and a value far too
// deep for any recursive walk (the check itself must not overflow).
import { describe, expect, it } from 'vitest';
import { findValueProblem, formatValuePath, MAX_NESTING_DEPTH } from '../../../engine/dsl/value-limits';

function chain(levels: number, key: string | number = 'a'): unknown {
  let v: unknown = 'leaf';
  for (let i = 0; i < levels; i++) v = typeof key === 'number' ? [v] : { [key]: v };
  return v;
}

describe('findValueProblem', () => {
  it('accepts a value exactly at the limit and names the first level past it', () => {
    expect(findValueProblem(chain(MAX_NESTING_DEPTH))).toBeUndefined();
    expect(findValueProblem(chain(MAX_NESTING_DEPTH + 1))).toEqual({ kind: 'deep', path: Array<string>(MAX_NESTING_DEPTH).fill('a') });
    expect(findValueProblem(chain(5, 0), 3)).toEqual({ kind: 'deep', path: [0, 0, 0] });
    expect(formatValuePath(['nodes', 0, 'config', 'x'])).toBe('nodes[0].config.x');
  });

  it('finds a value that contains itself, but not one shared by two branches', () => {
    const shared = { x: 1 };
    expect(findValueProblem({ a: shared, b: [shared, shared] })).toBeUndefined();
    const loop: Record<string, unknown> = { name: 'l' };
    loop.nodes = [{ config: { result: loop } }];
    expect(findValueProblem(loop)).toEqual({ kind: 'circular', path: ['nodes', 0, 'config', 'result'] });
  });

  it('walks 200,000 levels without overflowing the stack', () => {
    expect(findValueProblem(chain(200_000))?.path).toHaveLength(MAX_NESTING_DEPTH);
    expect(findValueProblem(chain(200_000), 300_000)).toBeUndefined();
    expect(findValueProblem('text')).toBeUndefined();
  });
});
