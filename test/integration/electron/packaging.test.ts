// Packaging smoke test, offline: the real build (renderer + Electron bundles), then
// electron-builder `--linux --dir` against a stand-in Electron (a dummy binary and a version file,
// since no Electron binary can be downloaded here) and no native rebuild. It checks what
// electron-builder.yml puts in the asar — not that the app runs (that needs Electron itself).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { builtinModules } from 'node:module';
import { fileURLToPath } from 'node:url';
import asar from '@electron/asar';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildElectron } from '../../../electron/build';
import { EngineHost } from '../../../electron/main/engine-host';
import { tempDir } from '../../helpers/temp-engine';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const ELECTRON_VERSION = '45.5.0';

let work: { dir: string; cleanup: () => void };
let resources: string;
let files: string[];
let builderLog = '';

beforeAll(async () => {
  work = tempDir('runnel-packaging-');
  await build({ configFile: path.join(root, 'renderer/vite.config.ts'), logLevel: 'warn' });
  await buildElectron();

  const electronDist = path.join(work.dir, 'electron-dist');
  fs.mkdirSync(electronDist);
  fs.writeFileSync(path.join(electronDist, 'electron'), '#!/bin/sh\necho "stand-in Electron for the packaging test"\n', { mode: 0o755 });
  fs.writeFileSync(path.join(electronDist, 'version'), ELECTRON_VERSION);
  const out = path.join(work.dir, 'release');
  const run = spawnSync(
    path.join(root, 'node_modules/.bin/electron-builder'),
    ['--linux', '--dir', '--publish', 'never', `-c.electronDist=${electronDist}`, '-c.npmRebuild=false', `-c.directories.output=${out}`],
    { cwd: root, encoding: 'utf8', timeout: 50_000, env: { ...process.env, CI: 'true' } },
  );
  builderLog = `${run.stdout}\n${run.stderr}`;
  if (run.status !== 0) throw new Error(`electron-builder failed (${run.status ?? run.signal}):\n${builderLog}`);
  resources = path.join(out, 'linux-unpacked', 'resources');
  files = asar.listPackage(path.join(resources, 'app.asar'), { isPack: false }).map((f) => f.split(path.sep).join('/'));
}, 90_000);

afterAll(() => work?.cleanup());

/** The packages a bundle imports by bare name (`from "zod"`, `from "@jitl/x/y"` → `@jitl/x`). */
function bareImports(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  const builtins = new Set([...builtinModules, ...builtinModules.map((m) => `node:${m}`), 'electron']);
  const names = new Set<string>();
  for (const m of text.matchAll(/(?:from\s+|import\s*\(\s*|require\(\s*)["']([^"'./][^"']*)["']/g)) {
    const spec = m[1] ?? '';
    if (builtins.has(spec) || builtins.has(spec.split('/')[0] ?? '')) continue;
    names.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : (spec.split('/')[0] ?? spec));
  }
  return [...names].sort();
}

describe('electron-builder package (stand-in Electron, no rebuild)', () => {
  it('holds the main process, the engine worker, its pool threads\' modules, the CommonJS preload and the renderer', () => {
    for (const f of ['/package.json', '/dist-electron/main.js', '/dist-electron/engine-worker.js', '/dist-electron/thread-main.js', '/dist-electron/script-sandbox.js', '/dist-electron/preload.cjs', '/dist/renderer/index.html']) {
      expect(files, f).toContain(f);
    }
    expect(files.some((f) => /^\/dist\/renderer\/assets\/index-.*\.js$/.test(f))).toBe(true);
    const pkg = JSON.parse(asar.extractFile(path.join(resources, 'app.asar'), 'package.json').toString('utf8')) as { main: string };
    expect(pkg.main).toBe('dist-electron/main.js');
  });

  it('holds build output only: no sources, tests, examples, maps or dev tooling', () => {
    const outside = files.filter((f) => !/^\/(node_modules|dist-electron|dist)(\/|$)/.test(f) && f !== '/package.json');
    expect(outside).toEqual([]);
    expect(files.filter((f) => f.startsWith('/dist') && (f.endsWith('.map') || f.endsWith('.ts')))).toEqual([]);
    for (const dev of ['electron', 'electron-builder', 'vite', 'vitest', 'typescript', 'playwright-core', 'react', 'tsx']) {
      expect(files.some((f) => f.startsWith(`/node_modules/${dev}/`)), dev).toBe(false);
    }
  });

  it('unpacks better-sqlite3\'s native module beside the asar', () => {
    const node = path.join(resources, 'app.asar.unpacked', 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node');
    expect(fs.existsSync(node)).toBe(true);
    expect(fs.statSync(node).size).toBeGreaterThan(100_000);
  });

  it('holds every package the main process and the engine worker import', () => {
    const bundles = ['main.js', 'engine-worker.js', 'thread-main.js', 'script-sandbox.js', ...fs.readdirSync(path.join(root, 'dist-electron/chunks')).filter((f) => f.endsWith('.js')).map((f) => `chunks/${f}`)];
    const needed = [...new Set(bundles.flatMap((b) => bareImports(path.join(root, 'dist-electron', b))))];
    expect(needed).toEqual(expect.arrayContaining(['better-sqlite3', 'zod', 'quickjs-emscripten']));
    expect(needed.filter((pkg) => !files.includes(`/node_modules/${pkg}/package.json`))).toEqual([]);
  });

  it('bundles the preload into one CommonJS file that requires nothing but electron', () => {
    const preload = fs.readFileSync(path.join(root, 'dist-electron/preload.cjs'), 'utf8');
    expect([...preload.matchAll(/require\(\s*["']([^"']+)["']\s*\)/g)].map((m) => m[1])).toEqual(['electron']);
    expect(preload).not.toMatch(/^\s*(import|export)\s/m);
  });
});

describe('the built engine worker', () => {
  it('runs in a plain Node worker thread: opens a database, answers the contract, and runs a script in its bundled pool thread', async () => {
    const t = tempDir('runnel-bundle-');
    const host = await EngineHost.start({ dbPath: path.join(t.dir, 'runnel.db'), workerUrl: new URL('dist-electron/engine-worker.js', `file://${root}/`) });
    try {
      await expect(host.invoke('workflow:list', undefined)).resolves.toEqual({ ok: true, value: [] });
      await expect(host.invoke('node:types', undefined)).resolves.toMatchObject({ ok: true, value: expect.arrayContaining([expect.objectContaining({ type: 'pass' })]) });
      // the pool thread starts from dist-electron/thread-main.js (no tsx in the package) and
      // loads dist-electron/script-sandbox.js
      const definition = { name: 'bundled-script', nodes: [{ id: 's', type: 'script', config: { code: 'return input.a + 1' }, output: 'b' }], edges: [] };
      await expect(host.invoke('workflow:save', { definition })).resolves.toMatchObject({ ok: true });
      const started = (await host.invoke('instance:start', { workflow: 'bundled-script', variables: { a: 41 } })) as { ok: true; value: { id: number } };
      let instance: { status: string; variables: Record<string, unknown> } | undefined;
      for (let i = 0; i < 200 && instance?.status !== 'COMPLETED'; i++) {
        await new Promise((r) => setTimeout(r, 50));
        const got = (await host.invoke('instance:get', { id: started.value.id })) as { ok: true; value: typeof instance };
        instance = got.value;
      }
      expect(instance).toMatchObject({ status: 'COMPLETED', variables: { a: 41, b: 42 } });
    } finally {
      await host.close();
      t.cleanup();
    }
  });
});
