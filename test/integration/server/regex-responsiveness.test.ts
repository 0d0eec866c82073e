/**
 * `runnel serve` stays responsive while catastrophic regular expressions are evaluated (issue 17:
 * one `output` with `$match(…, /(a+)+$/)` froze the whole host for 48 s, `/api/health` included;
 * an `inputSchema` pattern `^(a|a)*$` and one start blocked it 11 s).
 *
 * A real `runnel serve` child process on a temp file: instances whose `output` and edge `when`
 * run `$match` (1000 times each), `$contains`, `$replace` and `$split` with backtracking-prone
 * patterns over a 5 000-character `aaa…!` (a backtracking engine needed 61 s for 30), and a start
 * checked against the hostile pattern, while `/api/health` is asked again and again.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { eventually } from '../../helpers/browser-host';
import { tempDir } from '../../helpers/temp-engine';

const root = path.resolve(import.meta.dirname, '../../..');

/** `a` × 4 999 and a `!`: every attempt of the patterns below fails at the very end. */
const HOSTILE = `${'a'.repeat(4_999)}!`;
const INSTANCES = 3;

const workflow = {
  format: 1,
  name: 'regex-load',
  inputSchema: {
    type: 'object',
    required: ['s', 'code'],
    properties: { s: { type: 'string' }, code: { type: 'string', pattern: '^(a|a)*$' } },
  },
  nodes: [
    {
      id: 'scan',
      type: 'pass',
      // 1000 rounds of $match (~0.06 ms each on RE2), so the evaluation lasts long enough for
      // many health checks, and well within its 1 s.
      output:
        '{ "matches": $count([1..1000][$exists($match($$.s, /(a+)+$/))]), "contains": $contains(s, /^(a|a)*$/), ' +
        '"replacedLength": $length($replace(s, /(a+)+$/, "x")), "parts": $count($split(s, /(a|a)*b/)) }',
    },
    { id: 'done', type: 'pass', config: { result: { ok: true } } },
  ],
  edges: [{ from: 'scan', to: 'done', when: '$not($contains(s, /^(a|a)*$/))' }],
};

interface Instance {
  id: number;
  status: string;
  variables?: Record<string, unknown>;
}

describe('runnel serve with catastrophic regexes', () => {
  it('answers /api/health within 100 ms while they are evaluated, with the right results', async () => {
    const { dir, cleanup } = tempDir();
    const child = spawn(
      process.execPath,
      [path.join(root, 'bin/runnel.js'), 'serve', '--db', path.join(dir, 'regex.db'), '--port', '0'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let finished = false;
    // Also when the test times out (a backtracking regex engine never lets it finish).
    onTestFinished(() => {
      finished = true;
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      cleanup();
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const url = new URL(
      await eventually(
        () => /^(http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{32})$/m.exec(stdout)?.[1],
        30_000,
        `the URL (stderr: ${stderr})`,
      ),
    );
    const headers = { authorization: `Bearer ${url.searchParams.get('token') ?? ''}` };
    const call = async <T>(channel: string, payload: unknown) =>
      (await (
        await fetch(`${url.origin}/api/${channel}`, { method: 'POST', headers, body: JSON.stringify(payload) })
      ).json()) as { ok: true; value: T } | { ok: false; error: { code: string; message: string; details?: unknown } };
    const health = async (): Promise<number> => {
      const t0 = performance.now();
      const res = await fetch(`${url.origin}/api/health`, { headers });
      expect(await res.json()).toEqual({ ok: true, value: { status: 'ok' } });
      return performance.now() - t0;
    };

    const start = async (): Promise<number> => {
      const started = await call<Instance>('instance:start', {
        workflow: 'regex-load',
        variables: { s: HOSTILE, code: 'a'.repeat(40) },
      });
      if (!started.ok) throw new Error(JSON.stringify(started.error));
      return started.value.id;
    };
    const completed = (ids: number[]) =>
      eventually(
        async () => {
          const all = await Promise.all(ids.map(async (id) => call<Instance>('instance:get', { id })));
          const values = all.map((r) => (r.ok ? r.value : undefined));
          return values.every((v) => v !== undefined && ['COMPLETED', 'FAILED', 'CANCELLED'].includes(v.status))
            ? (values as Instance[])
            : undefined;
        },
        60_000,
        'every instance ended',
      );

    expect((await call('workflow:save', { definition: workflow })).ok).toBe(true);
    // One untimed run first: a fresh process compiles the engine's code paths on first use
    // (~30-50 ms in one go, regexes or not), which is not what this test measures.
    expect((await completed([await start()]))[0]?.status).toBe('COMPLETED');
    await health();

    // given: instances whose expressions run the hostile patterns over 5 000 characters
    const latencies: number[] = [];
    const pinging = (async () => {
      while (!finished) {
        latencies.push(await health());
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    const ids: number[] = [];
    for (let i = 0; i < INSTANCES; i++) ids.push(await start());
    // and a start checked against the pattern with a 29-character value that fails it
    const t0 = performance.now();
    const refused = await call('instance:start', { workflow: 'regex-load', variables: { s: 'x', code: `${'a'.repeat(29)}!` } });
    const refusedMs = performance.now() - t0;

    // when: they all run to the end
    const done = await completed(ids);
    finished = true;
    await pinging;

    // then: the host answered every health check in time, and the expressions gave RE2's answers
    expect(latencies.length).toBeGreaterThan(5);
    expect(Math.max(...latencies), `health latencies (ms): ${latencies.map(Math.round).join(' ')}`).toBeLessThan(100);
    for (const instance of done) {
      expect(instance.status, JSON.stringify(instance)).toBe('COMPLETED');
      expect(instance.variables).toMatchObject({ matches: 0, contains: false, replacedLength: 5_000, parts: 1 });
    }
    expect(refused.ok).toBe(false);
    if (!refused.ok) {
      expect(refused.error.code).toBe('INVALID_VARIABLES');
      expect(refused.error.details).toEqual([{ field: 'code', message: 'must match pattern "^(a|a)*$"' }]);
    }
    expect(refusedMs).toBeLessThan(1000);
  });
});
