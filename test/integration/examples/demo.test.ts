import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { demoTimeLimitMs, runExamples, type DemoSummary } from '../../../examples/run-examples';
import { REPO_ROOT, parseJson, runCli } from '../../helpers/cli';
import { tempDir } from '../../helpers/temp-engine';

describe('runnel demo: the three examples on one fresh file', () => {
  let tmp: ReturnType<typeof tempDir>;
  let db: string;
  beforeEach(() => {
    tmp = tempDir();
    db = path.join(tmp.dir, 'runnel.db');
  });
  afterEach(() => tmp.cleanup());

  it('reaches every expected end, loses no instance, and exits 0 well under a minute', async () => {
    const t0 = Date.now();
    const r = await runCli('demo', '--db', db, '--json');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    const s = parseJson<DemoSummary>(r);
    expect(s.ok).toBe(true);
    expect(s.unexpected).toEqual([]);
    expect(s.launched).toBe(23);
    expect(s.noInstanceLost).toBe(true);
    expect(s.tallies['ota-upgrade']).toEqual({
      launched: 20,
      completed: 16,
      compensated: 2,
      failed: 0,
      cancelled: 0,
      suspended: 2,
      waiting: 0,
      unsettled: 0,
    });
    expect(s.ota).toMatchObject({ upgraded: 14, alreadyCurrent: 2, rolledBack: 2, suspended: 2 });
    expect(s.purchases).toEqual({ ordered: 1, rejected: 1, waiting: 0 });
    expect(s.pipeline).toMatchObject({ rowsRead: 3600, rowsLoaded: 3550, tableRows: 3550, loadAttempts: 2 });
    expect(Date.now() - t0).toBeLessThan(30_000);
  });

  it('prints a human summary with progress on stderr, and the instances stay in the file for `list`', async () => {
    const r = await runCli('demo', '--db', db, '--devices', '10');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      'ota-upgrade        10 devices: 8 completed (7 upgraded, 1 already current), 1 compensated (flash rolled back), 1 suspended for a person',
    );
    expect(r.stdout).toContain('no instance lost: all 13 launched instances');
    expect(r.stdout).toContain('every instance reached its expected end');
    expect(r.stderr).toContain('demo: launched 13 instances');
    const list = parseJson<Array<{ status: string; workflow: string }>>(
      await runCli('list', '--db', db, '--json', '--status', 'suspended'),
    );
    expect(list.map((i) => [i.workflow, i.status])).toEqual([['ota-upgrade', 'SUSPENDED']]);

    // and: it says how long they wait (the workflow's deadline keeps running while suspended)
    expect(r.stdout).toContain("suspended instances wait for a person until ota-upgrade's deadline, 10 min after each started (it fails them then): ");
    // and: the resume command it prints works as printed, in a shell, from where the demo ran
    const printed = /npx runnel resume [^;(]*?(?= \(or |$)/m.exec(r.stdout)?.[0];
    expect(printed, r.stdout).toMatch(/^npx runnel resume \d+ --action retry --plugin examples\/demo-plugin\.ts --db /);
    const shell = spawnSync('sh', ['-c', `${printed ?? 'false'} --wait --json`], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 60_000 });
    // the flaky device fails verify again: retried, it is SUSPENDED once more (exit 3), having reached the fleet
    expect(shell.status, shell.stderr).toBe(3);
    const resumed = JSON.parse(shell.stdout) as { status: string; nodes: Array<{ id: string; attempt: number }> };
    expect(resumed.status).toBe('SUSPENDED');
  });
});

describe('runnel demo time limit', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir();
  });
  afterEach(() => tmp.cleanup());

  it('scales with the fleet, and unfinished instances are reported as not finished (exit 1), not as lost', async () => {
    expect(demoTimeLimitMs(20)).toBe(52_000);
    expect(demoTimeLimitMs(2000)).toBeGreaterThanOrEqual(200_000);
    const { exitCode, summary } = await runExamples({ db: path.join(tmp.dir, 'demo.db'), devices: 2, timeoutMs: 1 });
    expect(exitCode).toBe(1);
    expect(summary.unfinished).toBeGreaterThan(0);
    expect(summary.timeLimitMs).toBe(1);
    expect(summary.report).toContain(`NOT FINISHED within 0.0 s: ${summary.unfinished} of ${summary.launched} instances are still working`);
    expect(summary.report).toContain('npx runnel worker --until-idle');
    expect(summary.report).not.toMatch(/LOST/);
  });
});
