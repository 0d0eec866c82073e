/**
 * `runnel backup <dest>` (issue 14): a consistent copy taken while a `runnel worker` child keeps
 * committing holds every instance committed before it began, and passes SQLite's integrity_check
 * and `runnel check`; an existing destination is refused unless `--force`.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { checkDatabase } from '../../../engine/db/check';
import { Engine } from '../../../engine/runtime/engine';
import { parseJson, runCli } from '../../helpers/cli';
import { killChildren, REPO_ROOT, spawnScript, waitFor } from '../../helpers/processes';
import { tempDir } from '../../helpers/temp-engine';

let tmp: ReturnType<typeof tempDir> | undefined;
afterEach(async () => {
  await killChildren();
  tmp?.cleanup();
  tmp = undefined;
});

const CHAIN = {
  name: 'chain',
  nodes: [
    { id: 'a', type: 'pass' },
    { id: 'b', type: 'pass' },
    { id: 'c', type: 'pass' },
  ],
  edges: [
    { from: 'a', to: 'b' },
    { from: 'b', to: 'c' },
  ],
};

/** A file with `n` PENDING instances of the 3-node chain. */
async function fileWith(n: number): Promise<string> {
  tmp = tempDir('runnel-backup-');
  const file = path.join(tmp.dir, 'runnel.db');
  const engine = Engine.open(file);
  await engine.deploy(CHAIN);
  for (let i = 0; i < n; i += 1000) await engine.startMany('chain', Array.from({ length: Math.min(1000, n - i) }, (_, j) => ({ n: i + j, pad: 'x'.repeat(300) })));
  await engine.close();
  return file;
}

type Row = { id: number; status: string; version: number };

describe('runnel backup', () => {
  it('copies a file a worker process keeps committing to: everything committed before it began, integrity ok, check ok', { timeout: 120_000 }, async () => {
    // given: 12,000 instances being worked by a real `runnel worker` child
    const file = await fileWith(12_000);
    const worker = spawnScript(path.join(REPO_ROOT, 'bin', 'runnel.js'), ['worker', '--db', file]);
    const reader = new Database(file, { readonly: true });
    reader.pragma('busy_timeout = 5000');
    const completed = reader.prepare(`SELECT count(*) AS n FROM instance WHERE status = 'COMPLETED'`).pluck();
    const maxHistory = reader.prepare(`SELECT max(id) FROM history`).pluck();
    await waitFor(() => (completed.get() as number) >= 200, 60_000, 'the worker to complete 200 instances');

    // when: the backup is taken while it commits
    const before = reader.prepare(`SELECT id, status, version FROM instance ORDER BY id`).all() as Row[];
    const beforeMax = maxHistory.get() as number;
    const dest = path.join(tmp?.dir ?? '', 'backup.db');
    const r = await runCli('backup', dest, '--db', file);
    const afterMax = maxHistory.get() as number;
    const doneAtEnd = completed.get() as number;
    reader.close();

    // then: it succeeded and said how far it got
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/backup: [\d.]+ MiB of about [\d.]+ MiB written/);
    expect(r.stdout).toMatch(/^backed up .+runnel\.db to .+backup\.db: [\d.]+ MiB in [\d.]+ s \(check it with: npx runnel check --db .+backup\.db\)\n$/);
    // and: the worker kept committing while it ran, and was still at work after it
    expect(afterMax).toBeGreaterThan(beforeMax);
    expect(doneAtEnd).toBeLessThan(12_000);
    expect(worker.done).toBe(false);

    // and: every instance committed before the backup began is in it, at least as far along
    const copy = new Database(dest, { readonly: true });
    const inCopy = new Map((copy.prepare(`SELECT id, status, version FROM instance`).all() as Row[]).map((x) => [x.id, x]));
    expect(inCopy.size).toBe(12_000);
    const behind = before.filter((b) => (inCopy.get(b.id)?.version ?? 0) < b.version);
    expect(behind).toEqual([]);
    const copyMax = copy.prepare(`SELECT max(id) FROM history`).pluck().get() as number;
    expect(copyMax).toBeGreaterThanOrEqual(beforeMax);
    expect(copyMax).toBeLessThanOrEqual(afterMax);
    expect(copy.prepare(`SELECT count(*) FROM history WHERE id <= ?`).pluck().get(beforeMax)).toBe(beforeMax - (copy.prepare(`SELECT min(id) FROM history`).pluck().get() as number) + 1);
    expect(copy.pragma('integrity_check', { simple: true })).toBe('ok');
    copy.close();

    // and: it passes the engine's own check, and opens as a Runnel database
    expect(checkDatabase(dest).violations).toEqual([]);
    const check = await runCli('check', '--db', dest);
    expect(check.code, check.stdout).toBe(0);
    const engine = Engine.open(dest, { readonly: true });
    expect((await engine.countByStatus()).COMPLETED).toBeGreaterThanOrEqual(before.filter((b) => b.status === 'COMPLETED').length);
    await engine.close();

    // and: the live file, checked while the worker still commits, shows no violation either
    for (let i = 0; i < 3; i++) expect(checkDatabase(file).violations).toEqual([]);
    expect(worker.done).toBe(false);

    worker.kill('SIGTERM');
    expect((await worker.exited).code).toBe(130);
  });

  it('refuses an existing destination unless --force, and replaces it whole with --force', async () => {
    const file = await fileWith(50);
    const dest = path.join(tmp?.dir ?? '', 'backup.db');
    fs.writeFileSync(dest, 'not a database');
    fs.writeFileSync(`${dest}-wal`, 'a stale WAL of the file replaced');

    const refused = await runCli('backup', dest, '--db', file);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe(`error: CONFLICT: backup destination ${dest} exists; pass --force to replace it\n`);
    expect(fs.readFileSync(dest, 'utf8')).toBe('not a database');

    const forced = await runCli('backup', dest, '--db', file, '--force', '--json');
    expect(forced.code, forced.stderr).toBe(0);
    const out = parseJson<{ source: string; dest: string; bytes: number }>(forced);
    expect(out).toMatchObject({ source: file, dest, bytes: fs.statSync(dest).size });
    expect(forced.stderr).toBe('');
    expect(fs.existsSync(`${dest}-wal`)).toBe(false);
    expect(fs.existsSync(`${dest}.partial`)).toBe(false);
    expect(checkDatabase(dest).ok).toBe(true);
    const copy = new Database(dest, { readonly: true });
    expect(copy.prepare(`SELECT count(*) FROM instance`).pluck().get()).toBe(50);
    copy.close();
  });

  it('refuses the database itself as the destination, and a missing directory', async () => {
    const file = await fileWith(1);
    const self = await runCli('backup', file, '--db', file, '--force');
    expect(self.code).toBe(2);
    expect(self.stderr).toMatch(/^error: INVALID_INPUT: backup destination .+ is the database itself/);
    const nowhere = await runCli('backup', path.join(tmp?.dir ?? '', 'no', 'such', 'b.db'), '--db', file);
    expect(nowhere.code).toBe(2);
    expect(nowhere.stderr).toMatch(/^error: NOT_FOUND: cannot write the backup .+: directory .+ does not exist/);
  });
});
