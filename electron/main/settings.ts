/**
 * Where the desktop app keeps its database and remembers the user's choice.
 *
 * The database lives in the user-data folder (`<userData>/runnel.db`) unless chosen otherwise;
 * File → Open database… records the choice in `<userData>/settings.json`. No `electron` import:
 * the caller passes `app.getPath('userData')`.
 */
import fs from 'node:fs';
import path from 'node:path';

/** The persisted settings. Unknown keys are kept as they are. */
export interface DesktopSettings {
  /** The database chosen last (File → Open database…: an absolute path; Connect to PostgreSQL…: its URL). */
  databasePath?: string;
  [key: string]: unknown;
}

/** The default database file name inside the user-data folder. */
export const DEFAULT_DB_FILE = 'runnel.db';

/** The settings file inside the user-data folder. */
export const SETTINGS_FILE = 'settings.json';

/**
 * Reads `<userDataDir>/settings.json`; a missing, unreadable or malformed file gives `{}` (the app
 * must start even after a bad write).
 */
export function readSettings(userDataDir: string): DesktopSettings {
  try {
    const parsed: unknown = JSON.parse(fs.readFileSync(path.join(userDataDir, SETTINGS_FILE), 'utf8'));
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as DesktopSettings) : {};
  } catch {
    return {};
  }
}

/** Writes the settings atomically (temp file + rename), creating the folder if needed. */
export function writeSettings(userDataDir: string, settings: DesktopSettings): void {
  fs.mkdirSync(userDataDir, { recursive: true });
  const target = path.join(userDataDir, SETTINGS_FILE);
  const temp = `${target}.${process.pid}.tmp`;
  fs.writeFileSync(temp, `${JSON.stringify(settings, null, 2)}\n`);
  fs.renameSync(temp, target);
}

/**
 * The database the app opens, first match wins:
 * 1. `--db=FILE` or `--db FILE` on the command line (relative to `cwd`; a `postgres://` URL as given);
 * 2. the `RUNNEL_DB` environment variable;
 * 3. the last choice of File → Open database… (`settings.databasePath`);
 * 4. `<userDataDir>/runnel.db`.
 */
export function resolveDatabasePath(options: {
  argv: readonly string[];
  env: Readonly<Record<string, string | undefined>>;
  settings: DesktopSettings;
  userDataDir: string;
  cwd: string;
}): string {
  const { argv, env, settings, userDataDir, cwd } = options;
  // A PostgreSQL URL is kept as given; a file is made absolute.
  const at = (given: string): string => (/^postgres(ql)?:\/\//i.test(given) ? given : path.resolve(cwd, given));
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg.startsWith('--db=') && arg.length > 5) return at(arg.slice(5));
    const next = argv[i + 1];
    if (arg === '--db' && next !== undefined && !next.startsWith('--')) return at(next);
  }
  if (env.RUNNEL_DB) return at(env.RUNNEL_DB);
  if (typeof settings.databasePath === 'string' && settings.databasePath !== '') return settings.databasePath;
  return path.join(userDataDir, DEFAULT_DB_FILE);
}
