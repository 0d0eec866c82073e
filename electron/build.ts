/**
 * Builds the Electron main process, the engine worker and the preload into `dist-electron/`:
 *
 * - `main.js` and `engine-worker.js`: ES modules for Node (Electron 45's main process loads ESM);
 *   `electron`, Node built-ins and the package's runtime `dependencies` stay external (they ship
 *   in the asar's `node_modules`, better-sqlite3's `.node` unpacked beside it);
 * - `thread-main.js` and `script-sandbox.js`: the engine's pool threads load these by URL (see
 *   {@link threadModules});
 * - `preload.cjs`: one CommonJS file with everything bundled but `electron` (a sandboxed preload
 *   can only `require` a few Electron modules, and cannot load ES modules).
 *
 * Run with `npm run build:electron` (`node --import tsx electron/build.ts`). Exported for tests.
 */
import fs from 'node:fs';
import path from 'node:path';
import { builtinModules } from 'node:module';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'vite';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Node built-ins with and without the `node:` prefix, plus `electron`. */
function platformExternals(): string[] {
  return ['electron', ...builtinModules, ...builtinModules.map((m) => `node:${m}`)];
}

/** Whether `id` is one of `deps` or a subpath of one (`zod/v4`). */
function isDependency(id: string, deps: readonly string[]): boolean {
  return deps.some((d) => id === d || id.startsWith(`${d}/`));
}

/**
 * Thread modules: in engine/, `new URL('./x.ts', import.meta.url)` names a module that a worker
 * thread loads by URL (the thread pool's entry, the script sandbox), which no import would pull
 * into the bundle. Each becomes an entry chunk of its own (`x.js` beside main.js), and the URL is
 * rewritten to the path from the chunk that names it (Vite renders `import.meta.ROLLUP_FILE_URL_*`
 * as a root-absolute path in a server build, which a `file:` URL cannot use).
 */
function threadModules(): Plugin {
  const engineDir = path.join(root, 'engine') + path.sep;
  const pattern = /new URL\(\s*['"](\.\.?\/[^'"]+)\.ts['"]\s*,\s*import\.meta\.url\s*\)/g;
  const marker = /__RUNNEL_THREAD_MODULE_([A-Za-z0-9_$-]+?)__/g;
  return {
    name: 'runnel-thread-modules',
    enforce: 'pre',
    transform(code, id) {
      if (!id.startsWith(engineDir) || !code.includes('import.meta.url')) return null;
      let changed = false;
      const out = code.replace(pattern, (_match, relative: string) => {
        const file = path.resolve(path.dirname(id), `${relative}.ts`);
        const ref = this.emitFile({ type: 'chunk', id: file, fileName: `${path.basename(relative)}.js` });
        changed = true;
        return `new URL('__RUNNEL_THREAD_MODULE_${ref}__', import.meta.url)`;
      });
      return changed ? { code: out, map: null } : null;
    },
    renderChunk(code, chunk) {
      if (!code.includes('__RUNNEL_THREAD_MODULE_')) return null;
      const from = path.posix.dirname(chunk.fileName);
      const out = code.replace(marker, (_match, ref: string) => {
        const relative = path.posix.relative(from, this.getFileName(ref));
        return relative.startsWith('.') ? relative : `./${relative}`;
      });
      return { code: out, map: null };
    },
  };
}

/**
 * Builds all three bundles into `outDir` (default `<repo>/dist-electron`), emptying it first.
 *
 * @returns the absolute paths of main.js, engine-worker.js and preload.cjs.
 */
export async function buildElectron(outDir = path.join(root, 'dist-electron')): Promise<{ main: string; worker: string; preload: string }> {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
  const deps = Object.keys(pkg.dependencies ?? {});
  const platform = new Set(platformExternals());
  fs.rmSync(outDir, { recursive: true, force: true });

  await build({
    configFile: false,
    root,
    logLevel: 'warn',
    plugins: [threadModules()],
    build: {
      ssr: true,
      target: 'node20',
      outDir,
      emptyOutDir: false,
      minify: false,
      sourcemap: true,
      rollupOptions: {
        input: { main: path.join(root, 'electron/main/main.ts'), 'engine-worker': path.join(root, 'electron/main/engine-worker.ts') },
        external: (id) => platform.has(id) || isDependency(id, deps),
        output: { format: 'es', entryFileNames: '[name].js', chunkFileNames: 'chunks/[name]-[hash].js' },
      },
    },
    ssr: { target: 'node', noExternal: true },
  });

  await build({
    configFile: false,
    root,
    logLevel: 'warn',
    build: {
      ssr: true,
      target: 'chrome140',
      outDir,
      emptyOutDir: false,
      minify: false,
      sourcemap: false,
      rollupOptions: {
        input: { preload: path.join(root, 'electron/preload/preload.ts') },
        external: ['electron'],
        output: { format: 'cjs', entryFileNames: '[name].cjs' },
      },
    },
    ssr: { target: 'webworker', noExternal: true },
  });

  return { main: path.join(outDir, 'main.js'), worker: path.join(outDir, 'engine-worker.js'), preload: path.join(outDir, 'preload.cjs') };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const out = await buildElectron();
  console.log(`built ${path.relative(root, out.main)}, ${path.relative(root, out.worker)}, ${path.relative(root, out.preload)}`);
}
