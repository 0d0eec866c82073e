/**
 * What `npm test` does about Chromium (scripts/chromium.ts), decided over real directories:
 * a PATH of temp dirs holding executable files (or not), and the user id as the process gives it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  chromiumPath,
  chromiumPlan,
  findChromium,
  INSTALL_COMMANDS,
  KNOWN_CHROMIUM_PATHS,
  processProbe,
  type ChromiumProbe,
} from '../../../scripts/chromium';
import { tempDir } from '../../helpers/temp-engine';

let tmp: ReturnType<typeof tempDir>;
beforeEach(() => {
  tmp = tempDir('runnel-chromium-');
});
afterEach(() => tmp.cleanup());

/** A directory under the temp dir holding executables (mode 755) and plain files (644) by name. */
function bin(name: string, executables: string[], plain: string[] = []): string {
  const dir = path.join(tmp.dir, name);
  fs.mkdirSync(dir, { recursive: true });
  for (const e of executables) fs.writeFileSync(path.join(dir, e), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
  for (const p of plain) fs.writeFileSync(path.join(dir, p), 'not a program\n', { mode: 0o644 });
  return dir;
}

/** The real probe with its PATH, user and known paths replaced. */
function probe(options: { path: string[]; uid: number | undefined; known?: string[]; chromiumEnv?: string }): ChromiumProbe {
  const env: Record<string, string | undefined> = { PATH: options.path.join(path.delimiter) };
  if (options.chromiumEnv !== undefined) env.CHROMIUM_PATH = options.chromiumEnv;
  return { ...processProbe(), env, uid: options.uid, knownPaths: options.known ?? [] };
}

describe('finding Chromium', () => {
  it('takes the first executable chromium or chromium-browser on PATH, skipping files that are not executable', () => {
    const plain = bin('plain', [], ['chromium']);
    const browser = bin('browser', ['chromium-browser']);
    const later = bin('later', ['chromium']);
    expect(findChromium(probe({ path: [plain, browser, later], uid: 1000 }))).toEqual({ path: path.join(later, 'chromium') });
    expect(findChromium(probe({ path: [plain, browser], uid: 1000 }))).toEqual({ path: path.join(browser, 'chromium-browser') });
  });

  it('looks at the known paths first, and CHROMIUM_PATH alone when it is set', () => {
    const known = path.join(bin('known', ['chrome']), 'chrome');
    const onPath = bin('on-path', ['chromium']);
    expect(findChromium(probe({ path: [onPath], uid: 0, known: [known] }))).toEqual({ path: known });
    const chosen = path.join(bin('chosen', ['my-chrome']), 'my-chrome');
    expect(findChromium(probe({ path: [onPath], uid: 0, known: [known], chromiumEnv: chosen }))).toEqual({ path: chosen });
    // a wrong CHROMIUM_PATH is reported, not replaced by another browser
    expect(findChromium(probe({ path: [onPath], uid: 0, known: [known], chromiumEnv: '/no/such/chrome' }))).toEqual({
      missing: 'CHROMIUM_PATH=/no/such/chrome is not an executable file',
    });
  });

  it('uses Debian’s paths by default', () => {
    expect(KNOWN_CHROMIUM_PATHS).toEqual(['/usr/bin/chromium', '/usr/bin/chromium-browser']);
  });
});

describe('the plan before `npm test`', () => {
  it('present: uses it', () => {
    const dir = bin('present', ['chromium']);
    expect(chromiumPlan(probe({ path: [dir], uid: 1000 }))).toEqual({ action: 'present', path: path.join(dir, 'chromium') });
  });

  it('missing, root, apt-get on PATH: installs Debian’s chromium, saying so', () => {
    const apt = bin('apt', ['apt-get']);
    const plan = chromiumPlan(probe({ path: [apt], uid: 0 }));
    expect(plan).toEqual({
      action: 'install',
      commands: INSTALL_COMMANDS,
      announcement:
        "Chromium is not installed (looked at chromium and chromium-browser on PATH); the end-to-end tests need it, so installing Debian's chromium: apt-get update && apt-get install -y chromium",
    });
    expect(INSTALL_COMMANDS).toEqual([
      ['apt-get', 'update'],
      ['apt-get', 'install', '-y', 'chromium'],
    ]);
  });

  it('missing, not root, apt-get on PATH: fails at once, naming the sudo command', () => {
    const apt = bin('apt', ['apt-get']);
    expect(chromiumPlan(probe({ path: [apt], uid: 1000 }))).toEqual({
      action: 'fail',
      message:
        'Chromium is not installed (looked at chromium and chromium-browser on PATH): the end-to-end tests need Chromium. ' +
        'To fix it, run `sudo apt-get update && sudo apt-get install -y chromium`, or set CHROMIUM_PATH to a Chromium or Chrome binary.',
    });
  });

  it('missing, root, no apt-get (or no user id at all): fails at once, asking for a package manager or CHROMIUM_PATH', () => {
    const empty = bin('empty', []);
    for (const uid of [0, undefined]) {
      expect(chromiumPlan(probe({ path: [empty], uid, known: ['/nowhere/chromium'] }))).toEqual({
        action: 'fail',
        message:
          'Chromium is not installed (looked at /nowhere/chromium, chromium and chromium-browser on PATH): the end-to-end tests need Chromium. ' +
          'To fix it, install Chromium with your package manager, or set CHROMIUM_PATH to a Chromium or Chrome binary.',
      });
    }
  });

  it('a wrong CHROMIUM_PATH: fails, even as root with apt-get (installing would not fix the setting)', () => {
    const apt = bin('apt', ['apt-get', 'chromium']);
    expect(chromiumPlan(probe({ path: [apt], uid: 0, chromiumEnv: '/no/such/chrome' }))).toEqual({
      action: 'fail',
      message:
        'CHROMIUM_PATH=/no/such/chrome is not an executable file: the end-to-end tests need Chromium. Point CHROMIUM_PATH at a Chromium or Chrome binary, or unset it.',
    });
  });
});

describe('chromiumPath (what the e2e helpers call)', () => {
  it('gives the path, or throws the same one message the plan gives', () => {
    const dir = bin('present', ['chromium']);
    expect(chromiumPath(probe({ path: [dir], uid: 1000 }))).toBe(path.join(dir, 'chromium'));
    const apt = bin('apt', ['apt-get']);
    const missing = probe({ path: [apt], uid: 1000 });
    const plan = chromiumPlan(missing);
    expect(plan.action).toBe('fail');
    expect(() => chromiumPath(missing)).toThrow(new Error(plan.action === 'fail' ? plan.message : ''));
  });
});
