/**
 * The options every command takes may come before the command (`runnel --db x.db list`, as `git -C`
 * users type them): engine/cli/options.ts commonOptionsLast moves them after it.
 */
import { describe, expect, it } from 'vitest';
import { commonOptionsLast } from '../../../engine/cli/options';

describe('common options before the command', () => {
  it('moves --db (with its value, or =value), --json, --sync, --plugin and --read-only after the command and its words', () => {
    expect(commonOptionsLast(['--db', 'x.db', 'list'])).toEqual(['list', '--db', 'x.db']);
    expect(commonOptionsLast(['--db=x.db', '--json', 'show', '3', '--history'])).toEqual(['show', '3', '--history', '--db=x.db', '--json']);
    expect(commonOptionsLast(['--sync', 'normal', '--plugin', 'p.ts', '--read-only', 'schedule', 'pause', 'w:s'])).toEqual([
      'schedule',
      'pause',
      'w:s',
      '--sync',
      'normal',
      '--plugin',
      'p.ts',
      '--read-only',
    ]);
  });

  it('keeps the words after -- last, and leaves everything as typed when no command follows or another word comes first', () => {
    expect(commonOptionsLast(['--json', 'run', 'f.json', '--', '--db'])).toEqual(['run', 'f.json', '--json', '--', '--db']);
    expect(commonOptionsLast(['--db', 'x.db'])).toEqual(['--db', 'x.db']);
    expect(commonOptionsLast(['--bogus', '--db', 'x.db', 'list'])).toEqual(['--bogus', '--db', 'x.db', 'list']);
    expect(commonOptionsLast(['list', '--db', 'x.db'])).toEqual(['list', '--db', 'x.db']);
  });
});
