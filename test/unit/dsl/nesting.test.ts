// findNestingProblem: the limit exactly, one past it, circular values, arrays, and a value far too
// deep for any recursive walk (the check itself must not overflow).
import { describe, expect, it } from 'vitest';
import { findNestingProblem, formatNestingPath, MAX_NESTING_DEPTH } from '../../../engine/dsl/nesting';

function chain(levels: number, key: string | number = 'a'): unknown {
  let v: unknown = 'leaf';
  for (let i = 0; i < levels; i++) v = typeof key === 'number' ? [v] : { [key]: v };
  return v;
}

describe('findNestingProblem', () => {
  it('accepts a value exactly at the limit and names the first level past it', () => {
    expect(findNestingProblem(chain(MAX_NESTING_DEPTH))).toBeUndefined();
    expect(findNestingProblem(chain(MAX_NESTING_DEPTH + 1))).toEqual({ kind: 'deep', path: Array<string>(MAX_NESTING_DEPTH).fill('a') });
    expect(findNestingProblem(chain(5, 0), 3)).toEqual({ kind: 'deep', path: [0, 0, 0] });
    expect(formatNestingPath(['nodes', 0, 'config', 'x'])).toBe('nodes[0].config.x');
  });

  it('finds a value that contains itself, but not one shared by two branches', () => {
    const shared = { x: 1 };
    expect(findNestingProblem({ a: shared, b: [shared, shared] })).toBeUndefined();
    const loop: Record<string, unknown> = { name: 'l' };
    loop.nodes = [{ config: { result: loop } }];
    expect(findNestingProblem(loop)).toEqual({ kind: 'circular', path: ['nodes', 0, 'config', 'result'] });
  });

  it('walks 200,000 levels without overflowing the stack', () => {
    expect(findNestingProblem(chain(200_000))?.path).toHaveLength(MAX_NESTING_DEPTH);
    expect(findNestingProblem(chain(200_000), 300_000)).toBeUndefined();
    expect(findNestingProblem('text')).toBeUndefined();
  });
});
