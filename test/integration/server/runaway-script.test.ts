/**
 * A runaway script under `runnel serve` (issue 10's Done-when): a real `node bin/runnel.js serve`
 * child process, a workflow whose script is `while (true) {}` (timeLimitMs 5000, timeoutMs 300,
 * two attempts). Before scripts ran in the thread pool, `/api/health` answered after ~5 s per
 * attempt and each attempt ran to its 5 s time limit.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventually } from '../../helpers/browser-host';
import { tempDir } from '../../helpers/temp-engine';

const root = path.resolve(import.meta.dirname, '../../..');

const runaway = {
  name: 'runaway',
  nodes: [
    {
      id: 'loop',
      type: 'script',
      config: { code: 'while (true) {}', timeLimitMs: 5000 },
      timeoutMs: 300,
      retry: { maxAttempts: 2, initialIntervalMs: 200 },
    },
  ],
  edges: [],
};

const warm = { name: 'warm', nodes: [{ id: 'one', type: 'script', config: { code: 'return 1' } }], edges: [] };

interface HistoryEvent {
  type: string;
  attempt: number | null;
  data?: { error?: { code: string; message: string }; durationMs?: number };
}

describe('runnel serve with a runaway script', () => {
  it('answers /api/health within 100 ms while the script runs, and each attempt ends at its timeoutMs', async () => {
    // given a browser host in its own process
    const { dir, cleanup } = tempDir();
    const child = spawn(process.execPath, [path.join(root, 'bin/runnel.js'), 'serve', '--db', path.join(dir, 'served.db'), '--port', '0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const url = new URL(
        await eventually(() => /^(http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{32})$/m.exec(stdout)?.[1], 30_000, 'the URL'),
      );
      const headers = { authorization: `Bearer ${url.searchParams.get('token') ?? ''}` };
      const call = async <T>(channel: string, payload: unknown): Promise<T> => {
        const res = await fetch(`${url.origin}/api/${channel}`, { method: 'POST', headers, body: JSON.stringify(payload) });
        const body = (await res.json()) as { ok: boolean; value: T; error?: unknown };
        if (!body.ok) throw new Error(`${channel}: ${JSON.stringify(body.error)}`);
        return body.value;
      };
      const health = async (): Promise<number> => {
        const started = performance.now();
        const res = await fetch(`${url.origin}/api/health`, { headers });
        expect(await res.json()).toEqual({ ok: true, value: { status: 'ok' } });
        return performance.now() - started;
      };
      await call('workflow:save', { definition: runaway });
      await call('workflow:save', { definition: warm });
      // What is timed is the runaway script, not a pool thread's first start (from the sources
      // that loads tsx in the thread, competing for the 2 cores): one quick script runs first.
      const warmed = await call<{ id: number }>('instance:start', { workflow: 'warm' });
      await eventually(async () => ((await call<{ status: string }>('instance:get', { id: warmed.id })).status === 'COMPLETED' ? true : undefined), 20_000, 'warm-up COMPLETED');
      await health(); // the connection is warm before anything is timed

      // when an instance of it runs, /api/health is sampled every 40 ms until it ends
      const { id } = await call<{ id: number }>('instance:start', { workflow: 'runaway' });
      const started = performance.now();
      const samples: { atMs: number; ms: number }[] = [];
      let status = 'RUNNING';
      while (status !== 'FAILED' && performance.now() - started < 20_000) {
        samples.push({ atMs: Math.round(performance.now() - started), ms: Math.round(await health()) });
        status = (await call<{ status: string }>('instance:get', { id })).status;
        await new Promise((r) => setTimeout(r, 40));
      }

      // then every answer came within 100 ms, throughout both attempts
      expect(status).toBe('FAILED');
      expect(samples.length).toBeGreaterThanOrEqual(5);
      if (process.env.RUNNEL_TEST_VERBOSE) console.log(JSON.stringify(samples));
      expect(samples.filter((s) => s.ms >= 100)).toEqual([]);

      // and each of the two attempts ended at its 300 ms timeoutMs, not at the 5 s time limit
      const { events } = await call<{ events: HistoryEvent[] }>('instance:history', { id });
      const failed = events.filter((e) => e.type === 'node.failed');
      expect(failed.map((e) => [e.attempt, e.data?.error?.code])).toEqual([
        [1, 'TIMEOUT'],
        [2, 'TIMEOUT'],
      ]);
      for (const e of failed) {
        expect(e.data?.error?.message).toBe('attempt timed out after 300 ms');
        expect(e.data?.durationMs).toBeGreaterThanOrEqual(290);
        expect(e.data?.durationMs).toBeLessThan(1000);
      }
      const instance = await call<{ status: string; nodes: { id: string; status: string; attempt: number }[] }>('instance:get', { id });
      expect(instance.nodes).toEqual([expect.objectContaining({ id: 'loop', status: 'FAILED', attempt: 2 })]);
      child.kill('SIGINT');
      expect(await exited).toBe(130);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      cleanup();
    }
    expect(stderr).not.toMatch(/Error|at .*\.ts:\d+/);
  });
});
