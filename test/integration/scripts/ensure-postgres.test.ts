/**
 * `npm test`'s PostgreSQL check (scripts/ensure-postgres.ts), run for real as a child process: it
 * names the binaries it found (or the server RUNNEL_TEST_PG_URL names) and exits 0. (Its install
 * path is not run here: it would change the machine.)
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { pgBinDir } from '../../../scripts/postgres';
import { REPO_ROOT } from '../../helpers/cli';

const exec = promisify(execFile);
const SCRIPT = path.join(REPO_ROOT, 'scripts/ensure-postgres.ts');

describe('ensure-postgres', () => {
  it('names the binaries this machine has; with RUNNEL_TEST_PG_URL set it names that server instead', async () => {
    const env = { ...process.env };
    delete env.RUNNEL_TEST_PG_URL;
    const found = await exec(process.execPath, ['--import', 'tsx', SCRIPT], { cwd: REPO_ROOT, env, timeout: 30_000 });
    expect(pgBinDir()).not.toBe('');
    expect(found.stdout).toBe(`ensure-postgres: using ${pgBinDir()}\n`);
    const given = await exec(process.execPath, ['--import', 'tsx', SCRIPT], { cwd: REPO_ROOT, env: { ...env, RUNNEL_TEST_PG_URL: 'postgres://u@127.0.0.1:1/x' }, timeout: 30_000 });
    expect(given.stdout).toBe('ensure-postgres: using the server RUNNEL_TEST_PG_URL names\n');
  });
});
