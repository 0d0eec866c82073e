/**
 * `runnel run`, `start` and `validate` with hostile regular expressions, as real child processes
 * on a temp file (issue 17: `$match("aaa…a!", /(a+)+$/)` on 30 characters ran 61 s in
 * `runnel run`, the expression's 1 s limit notwithstanding).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/temp-engine';

const root = path.resolve(import.meta.dirname, '../../..');
const HOSTILE = `${'a'.repeat(29)}!`;

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

const running = new Set<ReturnType<typeof spawn>>();

afterEach(() => {
  for (const child of running) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  running.clear();
});

/** Runs `runnel <args…>` as a child process; resolves when it exits. */
function runnel(...args: string[]): Promise<Ran> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [path.join(root, 'bin/runnel.js'), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) => {
    child.on('exit', (code) => resolve({ code, stdout, stderr, ms: performance.now() - t0 }));
  });
}

describe('runnel with catastrophic regexes', () => {
  it('run: $match, $contains, $replace and $split on "a…a!" complete at once with RE2\'s answers', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const file = path.join(dir, 'scan.workflow.json');
      fs.writeFileSync(
        file,
        JSON.stringify({
          format: 1,
          name: 'scan',
          inputSchema: { type: 'object', properties: { code: { type: 'string', pattern: '^(a|a)*$' } } },
          nodes: [
            {
              id: 'scan',
              type: 'pass',
              output:
                '{ "match": $match(s, /(a+)+$/), "contains": $contains(s, /^(a|a)*$/), ' +
                '"replaced": $replace(s, /(a+)+$/, "x"), "split": $split(s, /(a|a)*b/), ' +
                '"tail": $match(s, /a+!$/).match }',
            },
          ],
          edges: [],
        }),
      );
      const db = path.join(dir, 'scan.db');
      const run = await runnel('run', file, '--db', db, '--json', '--vars', JSON.stringify({ s: HOSTILE, code: 'aaaa' }));
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      const instance = JSON.parse(run.stdout) as { status: string; variables: Record<string, unknown> };
      expect(instance.status).toBe('COMPLETED');
      expect(instance.variables).toEqual({
        s: HOSTILE,
        code: 'aaaa',
        contains: false,
        replaced: HOSTILE,
        split: [HOSTILE],
        tail: HOSTILE,
      });
      // The process starts, deploys, runs and exits; the backtracking engine needed 61 s.
      expect(run.ms).toBeLessThan(15_000);

      // A start whose value fails the pattern is refused before any file is written, at once.
      const refused = await runnel('start', 'scan', '--db', db, '--vars', JSON.stringify({ code: HOSTILE }));
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('code must match pattern "^(a|a)*$"');
      expect(refused.stderr).not.toMatch(/\n\s+at /u);
      expect(refused.ms).toBeLessThan(15_000);
    } finally {
      cleanup();
    }
  });

  it('validate: a backreference or lookaround is a problem naming the node, the field and the construct', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const file = path.join(dir, 'bad.workflow.json');
      fs.writeFileSync(
        file,
        JSON.stringify({
          format: 1,
          name: 'bad',
          inputSchema: { type: 'object', properties: { code: { type: 'string', pattern: '^(?!x)' } } },
          nodes: [
            { id: 'a', type: 'pass', output: '{ "twice": $match($result, /(a)\\1/) }' },
            { id: 'b', type: 'pass' },
          ],
          edges: [{ from: 'a', to: 'b', when: '$contains(x, /(?<=a)b/)' }],
        }),
      );
      const r = await runnel('validate', file);
      expect(r.code).toBe(2);
      expect(r.stderr).not.toMatch(/\n\s+at /u);
      const out = r.stdout + r.stderr;
      expect(out).toContain('UNSUPPORTED_REGEX workflow: inputSchema.properties.code.pattern "^(?!x)" uses a negative lookahead `(?!`');
      expect(out).toContain('UNSUPPORTED_REGEX node "a": output cannot run: regular expression /(a)\\1/ uses a backreference `\\1`');
      expect(out).toMatch(/UNSUPPORTED_REGEX edge "a->b": when cannot run: regular expression \/\(\?<=a\)b\/ uses a lookbehind `\(\?<=`/u);
    } finally {
      cleanup();
    }
  });
});
