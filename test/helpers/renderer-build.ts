/**
 * The renderer the end-to-end tests serve: built once per run by the e2e project's global setup
 * (test/helpers/renderer-global-setup.ts: `RUNNEL_TEST_RENDERER_DIR`, read-only for the tests),
 * or, outside that project (the designer bench, a script), built here into the caller's folder.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'vite';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Builds the renderer (renderer/vite.config.ts, no source maps) into `outDir`, emptying it first.
 * `minify` false keeps names readable for a profile.
 */
export async function buildRenderer(outDir: string, minify = true): Promise<void> {
  await build({
    configFile: path.join(ROOT, 'renderer/vite.config.ts'),
    logLevel: 'warn',
    build: { outDir, emptyOutDir: true, sourcemap: false, minify },
  });
}

/**
 * The folder of a built renderer: the run's shared build when the global setup made one (and no
 * unminified build is asked for with RUNNEL_E2E_NO_MINIFY=1), else a new build in `<work>/renderer`.
 *
 * @returns the folder's absolute path.
 */
export async function rendererFor(work: string): Promise<string> {
  const minify = process.env.RUNNEL_E2E_NO_MINIFY !== '1';
  const shared = process.env.RUNNEL_TEST_RENDERER_DIR;
  if (minify && shared !== undefined && shared !== '') return shared;
  const dir = path.join(work, 'renderer');
  await buildRenderer(dir, minify);
  return dir;
}
