/**
 * `npm test`'s `pretest` (scripts/ensure-chromium.ts), run for real as a child process: it names
 * the Chromium it found, and with a CHROMIUM_PATH that points nowhere it fails at once with the
 * one message, before anything else runs. (The install path is decided by the same plan,
 * test/unit/scripts/chromium.test.ts; it is not run here: it would change the machine.)
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findChromium } from '../../../scripts/chromium';
import { REPO_ROOT } from '../../helpers/cli';
import { tempDir } from '../../helpers/temp-engine';

const exec = promisify(execFile);
const SCRIPT = path.join(REPO_ROOT, 'scripts/ensure-chromium.ts');

/** Runs the script with `env` added to this process's environment. */
async function ensure(env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string; ms: number }> {
  const started = Date.now();
  try {
    const r = await exec(process.execPath, ['--import', 'tsx', SCRIPT], { cwd: REPO_ROOT, env: { ...process.env, ...env }, timeout: 30_000 });
    return { code: 0, stdout: r.stdout, stderr: r.stderr, ms: Date.now() - started };
  } catch (err) {
    const e = err as { code?: number; stdout: string; stderr: string };
    return { code: e.code ?? -1, stdout: e.stdout, stderr: e.stderr, ms: Date.now() - started };
  }
}

let tmp: ReturnType<typeof tempDir>;
beforeEach(() => {
  tmp = tempDir('runnel-ensure-');
});
afterEach(() => tmp.cleanup());

describe('scripts/ensure-chromium.ts', () => {
  it('present (this machine): exits 0 naming the Chromium the e2e helpers will drive', async () => {
    const found = findChromium();
    expect(found, 'the end-to-end tests need Chromium on this machine').toHaveProperty('path');
    const r = await ensure({});
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toBe(`ensure-chromium: using ${(found as { path: string }).path}\n`);
  });

  it('CHROMIUM_PATH naming an executable: uses exactly that one', async () => {
    const chrome = path.join(tmp.dir, 'my chrome');
    fs.writeFileSync(chrome, '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    const r = await ensure({ CHROMIUM_PATH: chrome });
    expect(r).toMatchObject({ code: 0, stdout: `ensure-chromium: using ${chrome}\n`, stderr: '' });
  });

  it('missing (CHROMIUM_PATH points nowhere): exits 1 at once with one message, installs nothing', async () => {
    const nowhere = path.join(tmp.dir, 'no-such-chromium');
    const r = await ensure({ CHROMIUM_PATH: nowhere });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      `ensure-chromium: CHROMIUM_PATH=${nowhere} is not an executable file: the end-to-end tests need Chromium. ` +
        'Point CHROMIUM_PATH at a Chromium or Chrome binary, or unset it.\n',
    );
    // no apt-get ran: that takes seconds at best
    expect(r.ms).toBeLessThan(10_000);
  });
});

describe('package.json and .ci/run', () => {
  it('`npm test` and `npm run test:e2e` make sure of Chromium, then PostgreSQL, with the commands `npm run ensure:*` run; `test:integration` of PostgreSQL; .ci/run calls both', () => {
    const scripts = (JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    expect(scripts['ensure:chromium']).toBe('node --import tsx scripts/ensure-chromium.ts');
    expect(scripts['ensure:postgres']).toBe('node --import tsx scripts/ensure-postgres.ts');
    expect(scripts.pretest).toBe(`${scripts['ensure:chromium']} && ${scripts['ensure:postgres']}`);
    expect(scripts['pretest:e2e']).toBe(scripts.pretest);
    expect(scripts['pretest:integration']).toBe(scripts['ensure:postgres']);
    const ci = fs.readFileSync(path.join(REPO_ROOT, '.ci/run'), 'utf8');
    expect(ci).toContain('npm run ensure:chromium');
    expect(ci).toContain('npm run ensure:postgres');
    // The installs live in the scripts, not in .ci/run.
    expect(ci).not.toMatch(/apt-get/);
  });
});
