import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { stringify as toYaml } from 'yaml';
import { example, parseJson, runCli } from '../../helpers/cli';
import { tempDir } from '../../helpers/temp-engine';

interface InstanceJson {
  id: number;
  status: string;
  version: number;
  variables: Record<string, unknown>;
  nodes: Array<{ id: string; status: string; attempt: number }>;
}

const PURCHASE = example('purchase-approval.workflow.json');

/** A workflow that needs no network: a script, a short delay, a pass. */
const LOCAL = {
  name: 'local-🌊',
  description: 'pass → script → delay → pass',
  nodes: [
    { id: 'seed', type: 'pass', config: { result: { n: 20 } }, output: 'seed' },
    {
      id: 'double',
      type: 'script',
      config: { code: 'return input.seed.n * 2 + (input.bonus || 0)' },
      output: 'answer',
    },
    { id: 'nap', type: 'delay', config: { durationMs: 30 } },
    { id: 'done', type: 'pass' },
  ],
  edges: [
    { from: 'seed', to: 'double' },
    { from: 'double', to: 'nap' },
    { from: 'nap', to: 'done', when: 'answer >= 40' },
  ],
  ui: {
    positions: {
      seed: { x: 0, y: 0 },
      double: { x: 200, y: 0 },
      nap: { x: 400, y: 0 },
      done: { x: 600, y: 0 },
    },
  },
};

/** Fails at `boom` (onFailure suspend) so resume can be exercised without a server. */
const INCIDENT = {
  name: 'incident',
  nodes: [
    {
      id: 'boom',
      type: 'script',
      config: { code: 'if (!input.fixed) throw new Error("not fixed yet"); return "ok"' },
      retry: { maxAttempts: 2, initialIntervalMs: 10 },
      onFailure: 'suspend',
      output: 'boom',
    },
    { id: 'after', type: 'pass' },
  ],
  edges: [{ from: 'boom', to: 'after' }],
};

describe('runnel commands on a real file', () => {
  let tmp: ReturnType<typeof tempDir>;
  let db: string;
  const write = (name: string, content: unknown) => {
    const file = path.join(tmp.dir, name);
    fs.writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
    return file;
  };
  beforeEach(() => {
    tmp = tempDir();
    db = path.join(tmp.dir, 'runnel.db');
  });
  afterEach(() => tmp.cleanup());

  it('init creates the file once and reports it as JSON', async () => {
    const first = parseJson<{ created: boolean; schemaVersion: number; file: string }>(
      await runCli('init', '--db', db, '--json'),
    );
    expect(first).toMatchObject({ created: true, file: db });
    expect(first.schemaVersion).toBeGreaterThanOrEqual(1);
    const again = await runCli('init', '--db', db);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('is a Runnel database');
  });

  it('deploy makes a new version only when the definition changed; export round-trips with deploy', async () => {
    const file = write('local.workflow.json', LOCAL);
    expect(parseJson(await runCli('deploy', file, '--db', db, '--json'))).toMatchObject({
      name: 'local-🌊',
      version: 1,
      created: true,
    });
    expect(parseJson(await runCli('deploy', file, '--db', db, '--json'))).toMatchObject({
      version: 1,
      created: false,
    });

    // Export to stdout and to a file: the same JSON, lossless (ui positions included)
    const printed = await runCli('export', 'local-🌊', '--db', db);
    expect(printed.code).toBe(0);
    const exported = JSON.parse(printed.stdout) as typeof LOCAL;
    expect(exported).toEqual(LOCAL);
    const out = path.join(tmp.dir, 'exported.json');
    expect((await runCli('export', 'local-🌊', '--version', '1', '-o', out, '--db', db)).code).toBe(0);
    expect(fs.readFileSync(out, 'utf8')).toBe(printed.stdout);

    // Deploying the export again changes nothing; deploying it into a fresh file gives the same export
    expect(parseJson(await runCli('deploy', out, '--db', db, '--json'))).toMatchObject({
      version: 1,
      created: false,
    });
    const other = path.join(tmp.dir, 'other.db');
    expect((await runCli('deploy', out, '--db', other)).code).toBe(0);
    expect((await runCli('export', 'local-🌊', '--db', other)).stdout).toBe(printed.stdout);

    // A changed definition makes version 2; version 1 stays exportable
    const changed = write('local2.workflow.json', { ...LOCAL, description: 'changed' });
    expect(parseJson(await runCli('deploy', changed, '--db', db, '--json'))).toMatchObject({
      version: 2,
      created: true,
    });
    expect(JSON.parse((await runCli('export', 'local-🌊', '--version', '1', '--db', db)).stdout)).toEqual(
      LOCAL,
    );
  });

  it('accepts YAML workflow files', async () => {
    const file = write('local.workflow.yaml', toYaml(LOCAL));
    expect((await runCli('validate', file)).stdout).toContain('valid workflow "local-🌊" (4 nodes, 3 edges)');
    const r = await runCli('run', file, '--db', db, '--json');
    expect(r.code).toBe(0);
  });

  it('run prints progress per node on stderr and the final instance on stdout; --json prints only JSON', async () => {
    const file = write('local.workflow.json', LOCAL);
    const human = await runCli('run', file, '--db', db, '--vars', '{"bonus": 2}');
    expect(human.code).toBe(0);
    expect(human.stderr).toContain('run: deployed local-🌊 v1; started instance 1');
    expect(human.stderr).toMatch(/double {2}RUNNING \(attempt 1\)/);
    expect(human.stderr).toMatch(/nap {2}WAITING/);
    expect(human.stderr).toMatch(/instance COMPLETED/);
    expect(human.stdout).toMatch(/^instance 1 \(local-🌊 v1\) COMPLETED in [\d.]+ s\n/);

    const machine = await runCli('run', file, '--db', db, '--json', '--vars', '{"bonus": 2}');
    expect(machine.code).toBe(0);
    expect(machine.stderr).toBe('');
    const inst = parseJson<InstanceJson>(machine);
    expect(inst).toMatchObject({
      id: 2,
      status: 'COMPLETED',
      variables: { bonus: 2, seed: { n: 20 }, answer: 42 },
    });
    expect(Object.fromEntries(inst.nodes.map((n) => [n.id, n.status]))).toEqual({
      seed: 'COMPLETED',
      double: 'COMPLETED',
      nap: 'COMPLETED',
      done: 'COMPLETED',
    });
  });

  it('start queues an instance that `worker --until-idle` then runs; list filters by status and workflow', async () => {
    expect((await runCli('deploy', write('local.workflow.json', LOCAL), '--db', db)).code).toBe(0);
    expect((await runCli('deploy', PURCHASE, '--db', db)).code).toBe(0);
    const started = parseJson<{ id: number }>(
      await runCli(
        'start',
        'local-🌊',
        '--db',
        db,
        '--json',
        '--vars',
        '{"bonus": 1}',
        '--business-key',
        'order-7',
      ),
    );
    expect(started.id).toBe(1);
    expect(parseJson<InstanceJson>(await runCli('show', '1', '--db', db, '--json')).status).toBe('PENDING');
    expect((await runCli('start', 'purchase-approval', '--priority', '-2', '--db', db)).stdout).toBe(
      'started instance 2 of purchase-approval\n',
    );
    expect(parseJson<InstanceJson & { priority: number }>(await runCli('show', '2', '--db', db, '--json')).priority).toBe(-2);

    const worker = await runCli('worker', '--until-idle', '--concurrency', '4', '--db', db);
    expect(worker.code).toBe(0);
    expect(worker.stderr).toMatch(/worker: \d+ node transitions; instances ended: 1 COMPLETED/);

    const all = parseJson<Array<{ id: number; status: string; businessKey: string | null }>>(
      await runCli('list', '--db', db, '--json'),
    );
    expect(all.map((i) => [i.id, i.status])).toEqual([
      [2, 'WAITING'],
      [1, 'COMPLETED'],
    ]);
    expect(all[1]?.businessKey).toBe('order-7');
    expect(
      parseJson<unknown[]>(await runCli('list', '--status', 'waiting,suspended', '--db', db, '--json')),
    ).toHaveLength(1);
    expect(
      parseJson<unknown[]>(await runCli('list', '--workflow', 'local-🌊', '--db', db, '--json')),
    ).toHaveLength(1);
    expect(parseJson<unknown[]>(await runCli('list', '--limit', '1', '--db', db, '--json'))).toHaveLength(1);
    const table = await runCli('list', '--db', db);
    expect(table.stdout.split('\n')[0]).toMatch(/^ID\s+WORKFLOW\s+STATUS\s+CREATED\s+ENDED\s+NOTE$/);

    // start --wait works it at once and exits by its status
    const waited = await runCli('start', 'local-🌊', '--wait', '--db', db, '--json');
    expect(waited.code).toBe(0);
    expect(parseJson<InstanceJson>(waited).status).toBe('COMPLETED');
  });

  it('resume: retry after editing variables completes (exit 0); the diff and actor land in history', async () => {
    const file = write('incident.workflow.json', INCIDENT);
    const run = await runCli('run', file, '--db', db, '--json');
    expect(run.code).toBe(3);
    const inst = parseJson<InstanceJson & { suspension: { nodeId: string; attempts: number } }>(run);
    expect(inst.status).toBe('SUSPENDED');
    expect(inst.suspension).toMatchObject({ nodeId: 'boom', attempts: 2 });

    const human = await runCli('show', String(inst.id), '--db', db);
    expect(human.stdout).toContain('suspended at "boom" (its retries ran out after 2 attempts)');
    expect(human.stdout).toContain(`resume with: npx runnel resume ${inst.id} --action retry --db `);

    const resumed = await runCli(
      'resume',
      String(inst.id),
      '--action',
      'retry',
      '--vars',
      '{"fixed": true}',
      '--actor',
      'ops-🧑‍🔧',
      '--wait',
      '--json',
      '--db',
      db,
    );
    expect(resumed.code).toBe(0);
    expect(parseJson<InstanceJson>(resumed)).toMatchObject({
      status: 'COMPLETED',
      variables: { fixed: true, boom: 'ok' },
    });
    const h = parseJson<{
      history: Array<{ type: string; actor: string | null; data?: { diff?: unknown } }>;
    }>(await runCli('show', String(inst.id), '--history', '--json', '--db', db));
    const ev = h.history.find((e) => e.type === 'instance.resumed');
    expect(ev?.actor).toBe('ops-🧑‍🔧');
    expect(ev?.data?.diff).toEqual({ added: { fixed: true }, removed: [], changed: {} });

    // Resuming an instance that is no longer SUSPENDED is refused
    const again = await runCli('resume', String(inst.id), '--action', 'retry', '--db', db);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/^error: INVALID_STATE: /);
  });

  it('resume: skip with a result continues downstream; fail ends FAILED (exit 1)', async () => {
    const file = write('incident.workflow.json', INCIDENT);
    const a = parseJson<InstanceJson>(await runCli('run', file, '--db', db, '--json'));
    const skipped = await runCli(
      'resume',
      String(a.id),
      '--action',
      'skip',
      '--result',
      '"by hand"',
      '--wait',
      '--json',
      '--db',
      db,
    );
    expect(skipped.code).toBe(0);
    expect(parseJson<InstanceJson>(skipped).variables.boom).toBe('by hand');

    const b = parseJson<InstanceJson>(await runCli('run', file, '--db', db, '--json'));
    const failed = await runCli('resume', String(b.id), '--action', 'fail', '--wait', '--db', db);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toMatch(/FAILED/);
    // --result is only for skip; bad --result JSON names the flag
    const c = parseJson<InstanceJson>(await runCli('run', file, '--db', db, '--json'));
    expect(
      (await runCli('resume', String(c.id), '--action', 'retry', '--result', '1', '--db', db)).stderr,
    ).toMatch(/--result is only for --action skip/);
    const badResult = await runCli(
      'resume',
      String(c.id),
      '--action',
      'skip',
      '--result',
      'by hand',
      '--db',
      db,
    );
    expect(badResult.code).toBe(2);
    expect(badResult.stderr).toMatch(/^error: INVALID_INPUT: --result is not valid JSON/);
  });

  it('cancel ends a waiting instance CANCELLED; a second cancel is refused', async () => {
    const run = await runCli('run', PURCHASE, '--db', db, '--json');
    expect(run.code).toBe(3);
    const id = String(parseJson<InstanceJson>(run).id);
    const cancelled = await runCli('cancel', id, '--db', db, '--json');
    expect(cancelled.code).toBe(0);
    expect(parseJson<InstanceJson>(cancelled).status).toBe('CANCELLED');
    const again = await runCli('cancel', id, '--db', db);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/^error: INVALID_STATE: instance \d+ already ended CANCELLED/);
    // The exit code of a run/--wait for a cancelled instance is 1
    const shown = await runCli('show', id, '--db', db);
    expect(shown.stdout).toMatch(/CANCELLED/);
  });

  it('cancel --compensate undoes completed steps; a second cancel while compensating is refused', async () => {
    const file = write('comp.workflow.json', {
      name: 'comp',
      nodes: [
        { id: 'a', type: 'pass', compensate: { type: 'pass', config: { result: 'undone' } } },
        { id: 'ask', type: 'approval' },
      ],
      edges: [{ from: 'a', to: 'ask' }],
    });
    // Without --wait the compensation waits for a worker
    const first = String(parseJson<InstanceJson>(await runCli('run', file, '--db', db, '--json')).id);
    const cancelling = await runCli('cancel', first, '--compensate', '--db', db);
    expect(cancelling.code).toBe(0);
    expect(cancelling.stdout).toContain('COMPENSATING');
    const again = await runCli('cancel', first, '--compensate', '--db', db);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/^error: INVALID_STATE: instance \d+ is already COMPENSATING/);
    expect((await runCli('worker', '--until-idle', '--db', db)).code).toBe(0);
    const after = parseJson<InstanceJson>(await runCli('show', first, '--db', db, '--json'));
    expect(after.status).toBe('CANCELLED');
    expect(after.nodes.find((n) => n.id === 'a')?.status).toBe('COMPENSATED');

    // With --wait it works the compensations and exits 1 (CANCELLED)
    const second = String(parseJson<InstanceJson>(await runCli('run', file, '--db', db, '--json')).id);
    const waited = await runCli('cancel', second, '--compensate', '--wait', '--db', db, '--json');
    expect(waited.code).toBe(1);
    expect(parseJson<InstanceJson>(waited).nodes.find((n) => n.id === 'a')?.status).toBe('COMPENSATED');
  });

  it('--sync normal works on every kind of command', async () => {
    const file = write('local.workflow.json', LOCAL);
    expect((await runCli('run', file, '--db', db, '--sync', 'normal')).code).toBe(0);
    expect((await runCli('list', '--db', db, '--sync', 'normal')).code).toBe(0);
  });
});
