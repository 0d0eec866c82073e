/**
 * Vitest globalSetup of the projects that spawn worker processes (vitest.config.ts): bundles
 * test/helpers/worker-process.ts once per run into one ES module, so each of the run's hundreds
 * of worker children starts from it (`node <bundle>`, about 0.35 s and 0.35 s of CPU here) instead
 * of loading every TypeScript module through tsx's loader (`node --import tsx`, about 0.7 s and
 * 0.9 s of CPU). The crash and process tests start a child per kill, so this is most of their
 * time besides the kills' own delays.
 *
 * The bundle is the same code: esbuild is tsx's own transform. It keeps packages external and is
 * written under `node_modules/.cache/` so that they resolve from the repository as they would from
 * the sources. Every `import.meta.url` in a bundled source is replaced by that source file's own
 * URL, so `new URL('./thread-main.ts', import.meta.url)` (the thread pool, the script sandbox)
 * and `createRequire(import.meta.url)` name the same files as when run from source.
 *
 * The path reaches test/helpers/processes.ts as `RUNNEL_TEST_WORKER_BUNDLE` in the environment
 * (set here in the main process before the test processes start, which inherit it). Without it
 * (a test file run outside these projects) children start through tsx as before. Several
 * projects of one run list this file: the first builds, the others find the variable set.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ENTRY = fileURLToPath(new URL('./worker-process.ts', import.meta.url));

/** Replaces `import.meta.url` in the repository's own TypeScript sources by the file's URL. */
function sourceUrls(): Plugin {
  return {
    name: 'runnel-source-urls',
    setup(b) {
      b.onLoad({ filter: /\.ts$/ }, (args) => {
        if (args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
        const text = fs.readFileSync(args.path, 'utf8');
        if (!text.includes('import.meta.url')) return { contents: text, loader: 'ts' };
        return {
          contents: text.replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href)),
          loader: 'ts',
        };
      });
    },
  };
}

/**
 * Builds the worker bundle and sets RUNNEL_TEST_WORKER_BUNDLE; returns the teardown that removes
 * what it built (nothing when another project's setup built it).
 */
export default async function setup(): Promise<(() => void) | undefined> {
  const given = process.env.RUNNEL_TEST_WORKER_BUNDLE;
  if (given !== undefined && given !== '' && fs.existsSync(given)) return undefined;
  const dir = path.join(ROOT, 'node_modules', '.cache', 'runnel-test');
  fs.mkdirSync(dir, { recursive: true });
  const outfile = path.join(dir, `worker-process-${process.pid}.mjs`);
  await build({
    entryPoints: [ENTRY],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    outfile,
    logLevel: 'warning',
    plugins: [sourceUrls()],
  });
  process.env.RUNNEL_TEST_WORKER_BUNDLE = outfile;
  return () => {
    delete process.env.RUNNEL_TEST_WORKER_BUNDLE;
    fs.rmSync(outfile, { force: true });
  };
}
