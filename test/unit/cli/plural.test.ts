/**
 * The CLI's counted nouns (engine/cli/output.ts plural): `runnel check` on a file with one
 * instance said "1 instances" (a newcomer's trial); prune's summary used its own copy of the rule.
 */
import { describe, expect, it } from 'vitest';
import { plural } from '../../../engine/cli/output';

describe('plural', () => {
  it('is singular for exactly one, plural otherwise, numbers grouped', () => {
    expect(plural(1, 'instance')).toBe('1 instance');
    expect(plural(0, 'instance')).toBe('0 instances');
    expect(plural(13, 'history row')).toBe('13 history rows');
    expect(plural(1200, 'schedule row')).toBe('1,200 schedule rows');
    expect(plural(2, 'dead letter', 'dead letters')).toBe('2 dead letters');
    expect(plural(1, 'child', 'children')).toBe('1 child');
  });
});
