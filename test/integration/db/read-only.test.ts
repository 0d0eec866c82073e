/**
 * Read-only database files, on real files in temp dirs: opened read-only, every read works and
 * every write fails with DATABASE_READONLY, leaving the file untouched; an empty file is "not a
 * Runnel database"; a file or directory the user cannot write is opened read-only by itself
 * (checked as an unprivileged user), or says what SQLite needs.
 */
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { EngineError } from '../../../engine/errors';
import { databaseAccess, openDatabase } from '../../../engine/db/open-database';
import { SqliteEngine } from '../../../engine/runtime/engine';
import { runToSettled, tempDir } from '../../helpers/temp-engine';
import { thrownBy } from '../../helpers/engine-errors';

async function rejected(promise: Promise<unknown>): Promise<EngineError> {
  const err: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(EngineError);
  return err as EngineError;
}


const sha = (file: string) => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
const REPO = path.resolve(import.meta.dirname, '../../..');
/** uid and gid of `nobody` on Debian. */
const NOBODY = 65534;

describe('read-only database files', () => {
  const cleanups: Array<() => void> = [];
  afterEach(() => {
    for (const c of cleanups.splice(0)) c();
  });

  /** A database with one completed instance, closed, its file made read-only (0444). */
  async function readonlyFile(): Promise<{ dir: string; file: string; id: number }> {
    const { dir, cleanup } = tempDir();
    cleanups.push(() => {
      fs.chmodSync(dir, 0o755);
      if (fs.existsSync(path.join(dir, 'runnel.db'))) fs.chmodSync(path.join(dir, 'runnel.db'), 0o644);
      cleanup();
    });
    const file = path.join(dir, 'runnel.db');
    const engine = SqliteEngine.open(file, { pollIntervalMs: 10 });
    await engine.deploy({ name: 'ro', nodes: [{ id: 'a', type: 'pass', config: { result: 7 }, output: 'seven' }] });
    const id = await engine.start('ro');
    await runToSettled(engine, id);
    await engine.close();
    fs.chmodSync(file, 0o444);
    return { dir, file, id };
  }

  it('opened read-only: list, show and export work; every write fails with DATABASE_READONLY; the file is untouched', async () => {
    // given a read-only file, opened read-only explicitly (tests run as root, which ignores modes)
    const { file, id } = await readonlyFile();
    const digest = sha(file);
    const errors = vi.spyOn(console, 'error');
    const engine = SqliteEngine.open(file, { readonly: true });
    try {
      expect(engine.db.readonly).toBe(true);
      // then reads work
      expect((await engine.listInstances()).map((r) => [r.id, r.status])).toEqual([[id, 'COMPLETED']]);
      expect((await engine.getInstance(id)).variables).toEqual({ seven: 7 });
      expect((await engine.history(id)).length).toBeGreaterThan(0);
      expect((await engine.exportWorkflow('ro')).name).toBe('ro');
      expect((await engine.metrics()).counts).toEqual({ COMPLETED: 1 });
      // and every kind of write is refused with a clear user error
      const writes: Array<() => Promise<unknown>> = [
        () => engine.deploy({ name: 'other', nodes: [{ id: 'a', type: 'pass' }] }),
        () => engine.start('ro'),
        () => engine.cancel(id),
        () => engine.retry(id),
      ];
      for (const write of writes) {
        const err = await rejected(write());
        expect(err.code).toBe('DATABASE_READONLY');
        expect(err.kind).toBe('user');
        expect(err.message).toMatch(/read-only/);
      }
      expect(() => engine.db.writeSync(() => 1)).toThrow(/read-only/);
    } finally {
      await engine.close();
    }
    // and nothing changed the file, and closing did not try a checkpoint
    expect(sha(file)).toBe(digest);
    expect(errors.mock.calls.filter((c) => String(c[0]).includes('checkpoint'))).toEqual([]);
    errors.mockRestore();
  });

  it('a read-only open of an empty file says "not a Runnel database (empty file)" and leaves it empty', () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const empty = path.join(dir, 'empty.db');
    fs.writeFileSync(empty, '');
    const err = thrownBy(() => openDatabase(empty, { readonly: true }));
    expect(err.code).toBe('DATABASE_CORRUPT');
    expect(err.kind).toBe('user');
    expect(err.message).toContain('not a Runnel database (empty file)');
    expect(fs.statSync(empty).size).toBe(0);
  });

  it('databaseAccess: read-only when the file, or its directory without writable -wal/-shm, is not writable', () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const file = path.join(dir, 'x.db');
    const only = (...writable: string[]) => (p: string) => writable.includes(p);
    // a missing file is for the caller to create
    expect(databaseAccess(file, only())).toBe('read-write');
    fs.writeFileSync(file, '');
    expect(databaseAccess(file, only(file, dir))).toBe('read-write');
    expect(databaseAccess(file, only(dir))).toBe('read-only');
    expect(databaseAccess(file, only(file))).toBe('read-only');
    // a read-only directory is fine when SQLite's companions exist and are writable
    fs.writeFileSync(`${file}-wal`, '');
    fs.writeFileSync(`${file}-shm`, '');
    expect(databaseAccess(file, only(file, `${file}-wal`, `${file}-shm`))).toBe('read-write');
    expect(databaseAccess(file, only(file, `${file}-wal`))).toBe('read-only');
    expect(databaseAccess(':memory:', only())).toBe('read-write');
  });

  /**
   * Runs test/helpers/readonly-probe.ts on `file` as an unprivileged user (`nobody` when the
   * tests run as root, as CI does: root ignores file modes), and returns what it printed.
   */
  const asRoot = process.getuid?.() === 0;

  /**
   * Runs `fn` while the probe's user may traverse to the repository and to `dir`: a clone inside
   * `mktemp -d` sits in a 0700 directory (and a clone made *as* `mktemp -d` is one), so search (x)
   * is granted on them and their ancestors that lack it for the duration of `fn` only, and every
   * mode is put back.
   */
  function withSearchAccess<T>(dir: string, fn: () => T): T {
    const opened: { dir: string; mode: number }[] = [];
    if (asRoot) {
      for (const start of [REPO, dir]) {
        for (let d = start; ; d = path.dirname(d)) {
          const mode = fs.statSync(d).mode;
          if ((mode & 0o001) === 0 && !opened.some((o) => o.dir === d)) {
            opened.push({ dir: d, mode });
            fs.chmodSync(d, mode | 0o001);
          }
          if (d === path.dirname(d)) break;
        }
      }
    }
    try {
      return fn();
    } finally {
      for (const o of opened.reverse()) fs.chmodSync(o.dir, o.mode & 0o7777);
    }
  }

  /** Runs `node <args…>` from the repository as `nobody` (when the tests run as root; else as this user). */
  function spawnAsUser(dir: string, args: string[]) {
    return withSearchAccess(dir, () =>
      spawnSync(process.execPath, args, {
        cwd: REPO,
        encoding: 'utf8',
        env: { ...process.env, HOME: os.tmpdir() },
        ...(asRoot ? { uid: NOBODY, gid: NOBODY } : {}),
        timeout: 30_000,
      }),
    );
  }

  function probeAsUser(dir: string, file: string, id: number): Record<string, unknown> {
    const r = spawnAsUser(dir, ['--import', 'tsx', path.join(REPO, 'test/helpers/readonly-probe.ts'), file, String(id)]);
    expect(r.status, r.stderr).toBe(0);
    return JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as Record<string, unknown>;
  }

  it('a 0444 file is opened read-only by itself for a user who cannot write it', async () => {
    const { dir, file, id } = await readonlyFile();
    // the directory is writable (SQLite creates -shm there); only the file is not
    fs.chmodSync(dir, 0o777);
    const digest = sha(file);
    expect(probeAsUser(dir, file, id)).toEqual({ readonly: true, status: 'COMPLETED', startCode: 'DATABASE_READONLY' });
    expect(sha(file)).toBe(digest);
  });

  it('in a 0555 directory without -shm, the error says SQLite needs to create it', async () => {
    const { dir, file, id } = await readonlyFile();
    for (const f of [`${file}-wal`, `${file}-shm`]) fs.rmSync(f, { force: true });
    fs.chmodSync(dir, 0o555);
    const out = probeAsUser(dir, file, id);
    expect(out.openCode).toBe('DATABASE_READONLY');
    expect(String(out.message)).toContain('-shm');
  });

  it('check, backup and vacuum on a WAL file in a directory the user cannot write: DATABASE_READONLY, exit 2, no stack; a backup into such a directory: INVALID_INPUT', async () => {
    // given: a closed WAL file (no -shm) in a 0555 directory, and a directory the user may write
    const { dir, file } = await readonlyFile();
    for (const f of [`${file}-wal`, `${file}-shm`]) fs.rmSync(f, { force: true });
    fs.chmodSync(file, 0o644);
    fs.chmodSync(dir, 0o555);
    const out = tempDir('runnel-ro-out-');
    cleanups.push(out.cleanup);
    fs.chmodSync(out.dir, 0o777);
    const digest = sha(file);
    const cli = (...args: string[]) => withSearchAccess(out.dir, () => spawnAsUser(dir, [path.join(REPO, 'bin', 'runnel.js'), ...args, '--db', file]));

    const because = `cannot read ${file}: it is a WAL database, and SQLite needs to create runnel.db-shm beside it`;
    for (const args of [['check'], ['check', '--json'], ['backup', path.join(out.dir, 'copy.db')]]) {
      const r = cli(...args);
      expect(r.status, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      // (with --json the error is one JSON line)
      if (args.includes('--json')) expect((JSON.parse(r.stderr) as { error: { code: string; message: string } }).error).toMatchObject({ code: 'DATABASE_READONLY', message: expect.stringContaining(because) });
      else expect(r.stderr).toContain(`DATABASE_READONLY: ${because}`);
      expect(r.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
    }
    const vacuum = cli('vacuum');
    expect(vacuum.status, vacuum.stderr).toBe(2);
    expect(vacuum.stderr).toMatch(/^error: DATABASE_READONLY: cannot vacuum .* is not writable; nothing was changed\n$/);
    // a backup whose destination directory the user may not write names it
    const into = cli('backup', path.join(dir, 'copy.db'));
    expect(into.status, into.stderr).toBe(2);
    expect(into.stderr).toBe(`error: INVALID_INPUT: cannot write the backup ${path.join(dir, 'copy.db')}: directory ${dir} is not writable (permission denied)\n`);
    expect(sha(file)).toBe(digest);
    expect(fs.readdirSync(dir)).toEqual(['runnel.db']);
  });

  it('vacuum --read-only is refused before anything is written', async () => {
    const { file } = await readonlyFile();
    fs.chmodSync(file, 0o644);
    const digest = sha(file);
    const r = spawnSync(process.execPath, [path.join(REPO, 'bin', 'runnel.js'), 'vacuum', '--read-only', '--db', file], { cwd: REPO, encoding: 'utf8', timeout: 30_000 });
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toBe(`error: DATABASE_READONLY: vacuum rewrites ${file}, and --read-only forbids changing it: run it without --read-only\n`);
    expect(sha(file)).toBe(digest);
  });

  it('a new file in a directory the user cannot write: DATABASE_READONLY naming the directory, exit 2, nothing created', () => {
    // given: a 0555 directory, and a workflow file the user can read
    const { dir, cleanup } = tempDir('runnel-ro-create-');
    cleanups.push(cleanup);
    const ro = path.join(dir, 'ro');
    fs.mkdirSync(ro);
    const wf = path.join(dir, 'plain.workflow.json');
    fs.writeFileSync(wf, JSON.stringify({ name: 'plain', nodes: [{ id: 'a', type: 'pass' }] }));
    fs.chmodSync(dir, 0o755);
    fs.chmodSync(wf, 0o644);
    fs.chmodSync(ro, 0o555);
    const file = path.join(ro, 'new.db');

    for (const args of [['init'], ['run', wf], ['deploy', wf]]) {
      // when: a command that creates the file runs as a user who may not write there
      const r = spawnAsUser(dir, [path.join(REPO, 'bin', 'runnel.js'), ...args, '--db', file]);

      // then: the typed error naming the directory, exit 2, no stack, no file
      expect(r.status, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toContain(`DATABASE_READONLY: cannot create ${file}: directory ${ro} is not writable`);
      expect(r.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
    }
    expect(fs.readdirSync(ro)).toEqual([]);
  });

  it('a new file where no file can be: NOT_FOUND naming why (a file as its directory, a directory refusing new files)', () => {
    const { dir, cleanup } = tempDir('runnel-ro-create-');
    cleanups.push(cleanup);
    const notADir = path.join(dir, 'plain.txt');
    fs.writeFileSync(notADir, 'x');
    const underFile = thrownBy(() => openDatabase(path.join(notADir, 'x.db')));
    expect(underFile.code).toBe('NOT_FOUND');
    expect(underFile.message).toMatch(/is a regular file, not a directory|a part of the path above it is a file/);

    // /proc takes no new files, whoever asks (access(2) says root may write it)
    const proc = thrownBy(() => openDatabase('/proc/runnel-test.db'));
    expect(proc.code).toBe('NOT_FOUND');
    expect(proc.message).toMatch(/^cannot create \/proc\/runnel-test\.db: \/proc does not accept new files/);
  });
});
