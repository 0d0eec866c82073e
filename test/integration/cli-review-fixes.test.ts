/**
 * CLI fixes from a newcomer review: refusals that used to write, a read-only database, output
 * files that cannot be written, closed pipes, the demo's time limit, hints and wide characters.
 * Real database files in temp dirs; the pipe tests run the real `bin/runnel.js` under bash.
 */
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { displayWidth } from '../../engine/cli/output';
import { demoTimeLimitMs, runExamples } from '../../examples/run-examples';
import { REPO_ROOT, parseJson, runCli } from '../helpers/cli';
import { tempDir } from '../helpers/temp-engine';

const APPROVAL_YAML = `name: appr
inputSchema:
  type: object
  required: [amount]
  properties:
    amount: { type: number, minimum: 0 }
nodes:
  - id: total
    type: pass
    config: { result: "{{ amount }}" }
    output: total
`;

const sha = (file: string) => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');

describe('runnel: refusals write nothing', () => {
  let tmp: ReturnType<typeof tempDir>;
  let db: string;
  let appr: string;
  beforeEach(() => {
    tmp = tempDir();
    db = path.join(tmp.dir, 'r.db');
    appr = path.join(tmp.dir, 'appr.yaml');
    fs.writeFileSync(appr, APPROVAL_YAML);
  });
  afterEach(() => tmp.cleanup());

  it('run with --vars failing the inputSchema exits 2 before any database is created or deployed to', async () => {
    const r = await runCli('run', appr, '--db', db, '--vars', '{"amount":-1}');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error: INVALID_VARIABLES: variables do not match the inputSchema of appr: amount must be >= 0/);
    expect(fs.existsSync(db)).toBe(false);
    // and into an existing database nothing is deployed
    expect((await runCli('init', '--db', db)).code).toBe(0);
    expect((await runCli('run', appr, '--db', db, '--vars', '{}')).code).toBe(2);
    const raw = new Database(db, { readonly: true });
    try {
      expect(raw.prepare('SELECT count(*) AS n FROM workflow').get()).toEqual({ n: 0 });
    } finally {
      raw.close();
    }
    // and good variables still run
    expect((await runCli('run', appr, '--db', db, '--vars', '{"amount":5}')).code).toBe(0);
  });

  it.each([['list'], ['show', '1'], ['export', 'appr'], ['start', 'appr'], ['worker', '--until-idle']])(
    '%s on a 0-byte file says "not a Runnel database (empty file)", exits 2 and leaves it empty',
    async (...args) => {
      fs.writeFileSync(db, '');
      const r = await runCli(...args, '--db', db);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('not a Runnel database (empty file)');
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect(fs.statSync(db).size).toBe(0);
    },
  );

  it('export -o into a missing directory exits 2 naming the path, and writes nothing', async () => {
    expect((await runCli('run', appr, '--db', db, '--vars', '{"amount":5}')).code).toBe(0);
    const target = path.join(tmp.dir, 'nonexistent', 'dir', 'x.json');
    const r = await runCli('export', 'appr', '--db', db, '-o', target);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(target);
    expect(r.stderr).toContain('does not exist');
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(fs.existsSync(path.join(tmp.dir, 'nonexistent'))).toBe(false);
    const onDir = await runCli('export', 'appr', '--db', db, '-o', tmp.dir);
    expect(onDir.code).toBe(2);
    expect(onDir.stderr).toContain('it is a directory');
  });
});

describe('runnel on a read-only database', () => {
  let tmp: ReturnType<typeof tempDir>;
  let db: string;
  beforeEach(async () => {
    tmp = tempDir();
    db = path.join(tmp.dir, 'r.db');
    const appr = path.join(tmp.dir, 'appr.yaml');
    fs.writeFileSync(appr, APPROVAL_YAML);
    expect((await runCli('run', appr, '--db', db, '--vars', '{"amount":5}')).code).toBe(0);
  });
  afterEach(() => tmp.cleanup());

  it('list, show and export work; commands that change it exit 2 with DATABASE_READONLY; the file is untouched', async () => {
    const digest = sha(db);
    expect((await runCli('list', '--db', db, '--read-only')).stdout).toContain('appr v1');
    expect(parseJson(await runCli('show', '1', '--db', db, '--read-only', '--json'))).toMatchObject({ status: 'COMPLETED' });
    expect(parseJson(await runCli('export', 'appr', '--db', db, '--read-only'))).toMatchObject({ name: 'appr' });
    for (const args of [['start', 'appr', '--vars', '{"amount":1}'], ['cancel', '1'], ['worker', '--until-idle'], ['deploy', path.join(tmp.dir, 'appr.yaml')]]) {
      const r = await runCli(...args, '--db', db, '--read-only');
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(/^error: DATABASE_READONLY: .* is open read-only \(--read-only was given\)/);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
    expect(sha(db)).toBe(digest);
  });
});

/** Runs a bash pipeline from the repository root; returns runnel's own exit code and its stderr. */
function pipeline(command: string): { runnelCode: number; stderr: string; stdout: string } {
  const r = spawnSync('bash', ['-c', `${command}; echo "runnel-exit=\${PIPESTATUS[0]}" >&2`], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    timeout: 60_000,
  });
  const code = /runnel-exit=(\d+)/.exec(r.stderr)?.[1];
  return { runnelCode: Number(code ?? NaN), stderr: r.stderr, stdout: r.stdout };
}

describe('runnel into a closed pipe', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir();
  });
  afterEach(() => tmp.cleanup());

  it('`run --json | head -c 100` and `run 2>&1 | head -2` finish cleanly: no EPIPE crash, the exit code of the instance', () => {
    const wf = path.join(tmp.dir, 'big.json');
    fs.writeFileSync(
      wf,
      JSON.stringify({
        name: 'big',
        nodes: [
          { id: 'first', type: 'pass' },
          { id: 'pause', type: 'delay', config: { durationMs: 400 } },
          { id: 'big', type: 'script', config: { code: "return 'x'.repeat(300000)" }, output: 'blob' },
        ],
        edges: [
          { from: 'first', to: 'pause' },
          { from: 'pause', to: 'big' },
        ],
      }),
    );
    const db = path.join(tmp.dir, 'r.db');
    const json = pipeline(`node bin/runnel.js run ${wf} --json --db ${db} 2>${tmp.dir}/err.txt | head -c 100`);
    expect(json.stdout).toHaveLength(100);
    expect(json.runnelCode).toBe(0);
    expect(fs.readFileSync(path.join(tmp.dir, 'err.txt'), 'utf8')).not.toMatch(/EPIPE|Unhandled|\n\s+at /);

    const human = pipeline(`node bin/runnel.js run ${wf} --db ${db} 2>&1 | head -2`);
    expect(human.stdout.trimEnd().split('\n')).toHaveLength(2);
    expect(human.runnelCode).toBe(0);
    // and the run finished its work: two completed instances in the file
    const raw = new Database(db, { readonly: true });
    try {
      expect(raw.prepare(`SELECT count(*) AS n FROM instance WHERE status = 'COMPLETED'`).get()).toEqual({ n: 2 });
    } finally {
      raw.close();
    }
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

describe('runnel hints and tables', () => {
  let tmp: ReturnType<typeof tempDir>;
  let db: string;
  beforeEach(() => {
    tmp = tempDir();
    db = path.join(tmp.dir, 'r.db');
  });
  afterEach(() => tmp.cleanup());

  it('hints after run say `npx runnel …` (runnel is not on PATH)', async () => {
    const wf = path.join(tmp.dir, 'suspends.json');
    fs.writeFileSync(
      wf,
      JSON.stringify({
        name: 'suspends',
        nodes: [{ id: 'boom', type: 'script', config: { code: 'throw new Error("no")' }, retry: { maxAttempts: 1 }, onFailure: 'suspend' }],
      }),
    );
    const r = await runCli('run', wf, '--db', db);
    expect(r.code).toBe(3);
    expect(r.stdout).toContain(`resume with: npx runnel resume 1 --action retry|skip|fail --db ${db}`);
    expect(r.stderr).toContain(`details: npx runnel show 1 --history --db ${db}`);
    expect(`${r.stdout}${r.stderr}`).not.toMatch(/(^|[^x] )runnel (resume|show|worker|approve) /m);
  });

  it('displayWidth counts wide characters and emoji as two columns, combining marks as none', () => {
    expect(displayWidth('abc')).toBe(3);
    expect(displayWidth('设备升级')).toBe(8);
    expect(displayWidth('한국')).toBe(4);
    expect(displayWidth('🚀')).toBe(2);
    expect(displayWidth('👩‍💻')).toBe(2);
    expect(displayWidth('e\u0301')).toBe(1);
    expect(displayWidth('ｱ')).toBe(1);
  });

  it('list lines up its columns by display width with CJK and emoji workflow names', async () => {
    for (const name of ['设备升级 🚀', 'ota']) {
      const wf = path.join(tmp.dir, `${name}.json`);
      fs.writeFileSync(wf, JSON.stringify({ name, nodes: [{ id: 'a', type: 'pass' }] }));
      expect((await runCli('run', wf, '--db', db)).code).toBe(0);
    }
    const lines = (await runCli('list', '--db', db)).stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    const statusColumn = lines.map((line) => {
      const at = line.search(/STATUS|COMPLETED/);
      return displayWidth(line.slice(0, at));
    });
    expect(new Set(statusColumn).size).toBe(1);
  });
});
