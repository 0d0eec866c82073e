/**
 * `npm run dist`: packages the desktop app for the current platform.
 *
 * 1. builds the renderer and the Electron bundles (the caller's npm script does that first);
 * 2. runs electron-builder with `npmRebuild=true`, which recompiles better-sqlite3 against
 *    Electron's ABI — this downloads Electron and its headers, so it needs internet;
 * 3. always runs `npm rebuild better-sqlite3` afterwards, even when step 2 failed (a failed
 *    Electron rebuild deletes the Node build), so tests and the CLI keep working.
 *
 * Extra arguments go to electron-builder (`npm run dist -- --linux AppImage`). Exit code:
 * electron-builder's, or the rebuild's if only that failed.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const shell = process.platform === 'win32';
const run = (command: string, args: string[]): number => spawnSync(command, args, { cwd: root, stdio: 'inherit', shell }).status ?? 1;

const builder = run(path.join(root, 'node_modules', '.bin', 'electron-builder'), ['--publish', 'never', '-c.npmRebuild=true', ...process.argv.slice(2)]);
const rebuild = run('npm', ['rebuild', 'better-sqlite3']);
process.exitCode = builder !== 0 ? builder : rebuild;
