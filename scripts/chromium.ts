/**
 * Where the end-to-end tests find Chromium, and what to do when it is missing: the one place
 * both `npm test` (through scripts/ensure-chromium.ts, its `pretest`) and the tests' helpers ask.
 *
 * playwright-core never downloads a browser: the tests drive an installed Chromium (Debian's
 * `chromium` package on the machines and in CI). The decision is a pure function of a
 * {@link ChromiumProbe}, so tests can hand it a PATH of their own.
 */
import fs from 'node:fs';
import path from 'node:path';

/** The environment variable that names the browser to use (the only candidate when set). */
export const CHROMIUM_ENV = 'CHROMIUM_PATH';

/** Where Debian and Ubuntu put Chromium, looked at before PATH. */
export const KNOWN_CHROMIUM_PATHS: readonly string[] = ['/usr/bin/chromium', '/usr/bin/chromium-browser'];

/** The npm script that installs Chromium when it may (root with apt-get), else says how. */
export const ENSURE_COMMAND = 'npm run ensure:chromium';

/** What the install runs, one command per entry (as root, non-interactive). */
export const INSTALL_COMMANDS: readonly (readonly string[])[] = [
  ['apt-get', 'update'],
  ['apt-get', 'install', '-y', 'chromium'],
];

/** {@link INSTALL_COMMANDS} as one shell line, for messages. */
export const INSTALL_LINE = INSTALL_COMMANDS.map((c) => c.join(' ')).join(' && ');

/** What the decision looks at: the environment, the user, and the file system. */
export interface ChromiumProbe {
  /** `process.env` by default: CHROMIUM_PATH and PATH are read. */
  env: Readonly<Record<string, string | undefined>>;
  /** The user id (`process.getuid()`), undefined where there is none (Windows). */
  uid: number | undefined;
  /** Paths looked at before PATH (default {@link KNOWN_CHROMIUM_PATHS}). */
  knownPaths: readonly string[];
  /** Whether `file` is an executable regular file (default: stat + access X_OK). */
  isExecutable(file: string): boolean;
}

/** What {@link chromiumPlan} decided. */
export type ChromiumPlan =
  | { action: 'present'; path: string }
  | { action: 'install'; commands: readonly (readonly string[])[]; announcement: string }
  | { action: 'fail'; message: string };

function isExecutableFile(file: string): boolean {
  try {
    if (!fs.statSync(file).isFile()) return false;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The probe of this process: its environment, its user, the real file system. */
export function processProbe(): ChromiumProbe {
  return {
    env: process.env,
    uid: typeof process.getuid === 'function' ? process.getuid() : undefined,
    knownPaths: KNOWN_CHROMIUM_PATHS,
    isExecutable: isExecutableFile,
  };
}

/** The first executable called `name` on the probe's PATH, if any. */
export function onPath(name: string, probe: ChromiumProbe): string | undefined {
  for (const dir of (probe.env.PATH ?? '').split(path.delimiter)) {
    if (dir === '') continue;
    const candidate = path.join(dir, name);
    if (probe.isExecutable(candidate)) return candidate;
  }
  return undefined;
}

/**
 * The Chromium to drive: CHROMIUM_PATH when set (then nothing else is tried, so a wrong setting
 * is reported rather than silently replaced), else the first of {@link KNOWN_CHROMIUM_PATHS},
 * `chromium` and `chromium-browser` on PATH that is an executable file.
 */
export function findChromium(probe: ChromiumProbe = processProbe()): { path: string } | { missing: string } {
  const chosen = probe.env[CHROMIUM_ENV];
  if (chosen !== undefined && chosen !== '') {
    return probe.isExecutable(chosen) ? { path: chosen } : { missing: `${CHROMIUM_ENV}=${chosen} is not an executable file` };
  }
  for (const candidate of probe.knownPaths) if (probe.isExecutable(candidate)) return { path: candidate };
  for (const name of ['chromium', 'chromium-browser']) {
    const found = onPath(name, probe);
    if (found !== undefined) return { path: found };
  }
  return { missing: `Chromium is not installed (looked at ${[...probe.knownPaths, 'chromium and chromium-browser on PATH'].join(', ')})` };
}

/** The one message of a missing Chromium: why, and the command that fixes it. */
export function missingChromiumMessage(why: string, probe: ChromiumProbe = processProbe()): string {
  if (probe.env[CHROMIUM_ENV]) return `${why}: the end-to-end tests need Chromium. Point ${CHROMIUM_ENV} at a Chromium or Chrome binary, or unset it.`;
  const root = probe.uid === 0;
  const apt = onPath('apt-get', probe) !== undefined;
  const fix = apt
    ? root
      ? `run \`${ENSURE_COMMAND}\` (it runs \`${INSTALL_LINE}\`)`
      : `run \`${INSTALL_COMMANDS.map((c) => `sudo ${c.join(' ')}`).join(' && ')}\``
    : 'install Chromium with your package manager';
  return `${why}: the end-to-end tests need Chromium. To fix it, ${fix}, or set ${CHROMIUM_ENV} to a Chromium or Chrome binary.`;
}

/**
 * What `npm test` does about Chromium before it runs: nothing when it is there; install Debian's
 * package when it is missing and this process may (root, apt-get on PATH, CHROMIUM_PATH unset);
 * otherwise fail at once with {@link missingChromiumMessage}.
 */
export function chromiumPlan(probe: ChromiumProbe = processProbe()): ChromiumPlan {
  const found = findChromium(probe);
  if ('path' in found) return { action: 'present', path: found.path };
  const mayInstall = !probe.env[CHROMIUM_ENV] && probe.uid === 0 && onPath('apt-get', probe) !== undefined;
  if (!mayInstall) return { action: 'fail', message: missingChromiumMessage(found.missing, probe) };
  return {
    action: 'install',
    commands: INSTALL_COMMANDS,
    announcement: `${found.missing}; the end-to-end tests need it, so installing Debian's chromium: ${INSTALL_LINE}`,
  };
}

/**
 * The Chromium executable for playwright-core's `executablePath`.
 *
 * @throws Error with {@link missingChromiumMessage} when there is none.
 */
export function chromiumPath(probe: ChromiumProbe = processProbe()): string {
  const found = findChromium(probe);
  if ('path' in found) return found.path;
  throw new Error(missingChromiumMessage(found.missing, probe));
}
