/**
 * `npm start`'s preparation step: makes sure an Electron-ABI build of better-sqlite3 exists in the
 * cache (see native-binding.ts), compiling it once if needed. Needs internet the first time
 * (Electron's headers, or better-sqlite3's prebuilt Electron binary); afterwards it is instant.
 *
 * The installed Node build in node_modules/better-sqlite3 is never touched: the rebuild runs on a
 * copy in a temp folder, and `npm_config_nodedir` is removed from its environment (a user npmrc
 * that sets it would otherwise compile against Node's headers while reporting success).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { addonTargetsAbi, electronNativeBinding } from './native-binding';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function readJson<T>(file: string): T {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as T;
}

/**
 * Ensures the Electron build exists and targets Electron's ABI; returns its path.
 *
 * @throws Error naming the cause (offline, no compiler) when the build cannot be made.
 */
export async function prepareNative(): Promise<string> {
  const electronVersion = readJson<{ version: string }>(path.join(root, 'node_modules/electron/package.json')).version;
  const abi = fs.readFileSync(path.join(root, 'node_modules/electron/abi_version'), 'utf8').trim();
  const target = electronNativeBinding(root, electronVersion);
  if (fs.existsSync(target) && addonTargetsAbi(fs.readFileSync(target), abi)) return target;

  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'runnel-electron-native-'));
  try {
    const source = path.join(root, 'node_modules/better-sqlite3');
    const copy = path.join(work, 'node_modules/better-sqlite3');
    fs.cpSync(source, copy, { recursive: true, filter: (f) => !f.startsWith(path.join(source, 'build')) });
    const { version } = readJson<{ version: string }>(path.join(source, 'package.json'));
    fs.writeFileSync(path.join(work, 'package.json'), JSON.stringify({ name: 'runnel-native', version: '0.0.0', private: true, dependencies: { 'better-sqlite3': version } }));
    for (const key of Object.keys(process.env)) if (key.toLowerCase() === 'npm_config_nodedir') delete process.env[key];
    // @electron/rebuild forks node-gyp with this process's execArgv: tsx's `--import tsx` would
    // not resolve from the temp folder, so the children run plain Node.
    process.execArgv = process.execArgv.filter((arg, i, all) => arg !== '--import' && all[i - 1] !== '--import' && !arg.startsWith('--import='));
    console.log(`runnel: building better-sqlite3 ${version} for Electron ${electronVersion} (ABI ${abi}); this needs internet once…`);
    const { rebuild } = await import('@electron/rebuild');
    await rebuild({ buildPath: work, electronVersion, onlyModules: ['better-sqlite3'], force: true });
    const built = path.join(copy, 'build/Release/better_sqlite3.node');
    if (!fs.existsSync(built)) throw new Error('the rebuild produced no build/Release/better_sqlite3.node');
    if (!addonTargetsAbi(fs.readFileSync(built), abi)) throw new Error(`the rebuilt addon does not target Electron's ABI ${abi} (compiled against the wrong headers?)`);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.copyFileSync(built, target);
    return target;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    const file = await prepareNative();
    console.log(`runnel: Electron build of better-sqlite3 ready: ${path.relative(root, file)}`);
  } catch (error) {
    console.error(`runnel: cannot build better-sqlite3 for Electron: ${error instanceof Error ? error.message : String(error)}`);
    console.error('runnel: `npm start` needs internet on its first run (Electron and its headers); the browser app (`npm run web`) works offline.');
    process.exitCode = 1;
  }
}
