/**
 * `runnel retry <id> [--wait]`: a FAILED instance runs again from its failed step. The step is an
 * http call to a real server on 127.0.0.1 that answers 503 until the test lets it succeed, so
 * the first run fails for good (one attempt) and the retry completes. Real bin, real file.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseJson, runBin } from '../../helpers/cli';
import { tempDir } from '../../helpers/temp-engine';

interface InstanceJson {
  id: number;
  status: string;
  nodes: Array<{ id: string; status: string; attempt: number }>;
}

describe('runnel retry', () => {
  let tmp: ReturnType<typeof tempDir>;
  let db: string;
  let wf: string;
  let server: http.Server;
  let healthy = false;
  let calls = 0;

  beforeEach(async () => {
    tmp = tempDir();
    db = path.join(tmp.dir, 'runnel.db');
    healthy = false;
    calls = 0;
    server = http.createServer((_req, res) => {
      calls++;
      res.writeHead(healthy ? 200 : 503, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: healthy }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    wf = path.join(tmp.dir, 'flaky.workflow.json');
    fs.writeFileSync(
      wf,
      JSON.stringify({
        name: 'flaky',
        nodes: [
          { id: 'first', type: 'pass', config: { result: 1 }, output: 'first' },
          { id: 'call', type: 'http', config: { url: `http://127.0.0.1:${port}/status` }, retry: { maxAttempts: 1 } },
          { id: 'after', type: 'pass' },
        ],
        edges: [
          { from: 'first', to: 'call' },
          { from: 'call', to: 'after' },
        ],
      }),
    );
  });
  afterEach(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    tmp.cleanup();
  });

  /** Runs the workflow once: it fails at `call` (exit 1) and says how to retry. */
  async function failedInstance(): Promise<number> {
    const run = await runBin(['run', wf, '--db', db]);
    expect(run.code, run.stderr).toBe(1);
    const id = Number(/^instance (\d+) \(flaky v1\) FAILED/.exec(run.stdout)?.[1]);
    expect(id).toBeGreaterThan(0);
    expect(run.stdout).toContain(`retry with: npx runnel retry ${id} --db ${db}`);
    return id;
  }

  it('without --wait: records the retry (exit 0) and leaves it RUNNING for a worker, which completes it', async () => {
    const id = await failedInstance();
    expect(calls).toBe(1);
    healthy = true;

    const retried = await runBin(['retry', String(id), '--actor', 'ops', '--db', db]);
    expect(retried.code, retried.stderr).toBe(0);
    expect(retried.stdout).toBe(
      `instance ${id}: retry recorded; now RUNNING (a worker carries it on: npx runnel worker, or pass --wait)\n`,
    );
    expect(calls).toBe(1); // nothing ran without a worker

    expect((await runBin(['worker', '--until-idle', '--db', db])).code).toBe(0);
    const shown = await runBin(['show', String(id), '--history', '--json', '--db', db]);
    const inst = parseJson<InstanceJson & { history: Array<{ type: string; actor: string | null; data?: unknown }> }>(shown);
    expect(inst.status).toBe('COMPLETED');
    expect(inst.nodes.find((n) => n.id === 'call')).toMatchObject({ status: 'COMPLETED', attempt: 2 });
    expect(inst.nodes.find((n) => n.id === 'after')?.status).toBe('COMPLETED');
    const event = inst.history.find((h) => h.type === 'instance.retried');
    expect(event).toMatchObject({ actor: 'ops', data: { nodes: ['call'] } });
    expect(calls).toBe(2);
  });

  it('with --wait: works it to its end and exits by its status (0), printing the instance', async () => {
    const id = await failedInstance();
    healthy = true;
    const waited = await runBin(['retry', String(id), '--wait', '--json', '--db', db]);
    expect(waited.code, waited.stderr).toBe(0);
    expect(waited.stderr).toBe('');
    expect(parseJson<InstanceJson>(waited)).toMatchObject({ id, status: 'COMPLETED' });

    // Failing again with --wait exits 1, and the human report says so
    healthy = false;
    const second = await failedInstance();
    const again = await runBin(['retry', String(second), '--wait', '--db', db]);
    expect(again.code).toBe(1);
    expect(again.stdout).toMatch(new RegExp(`^instance ${second} \\(flaky v1\\) FAILED`));
    expect(again.stderr).toMatch(/call {2}FAILED after attempt 2: HTTP_ERROR/);
  });

  it('refuses an instance that is not FAILED (exit 2, INVALID_STATE) and an unknown one (NOT_FOUND)', async () => {
    healthy = true;
    expect((await runBin(['run', wf, '--db', db])).code).toBe(0);
    const done = await runBin(['retry', '1', '--db', db]);
    expect(done.code).toBe(2);
    expect(done.stderr).toBe('error: INVALID_STATE: instance 1 is COMPLETED, not FAILED\n');
    const unknown = await runBin(['retry', '9', '--db', db]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe('error: NOT_FOUND: instance 9 does not exist\n');
  });
});
