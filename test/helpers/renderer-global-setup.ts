/**
 * Vitest globalSetup of the e2e project (vitest.config.ts): builds the renderer once for the run
 * (about 1.5–3 s a build here; the project opens the app some forty times) and names the folder
 * in `RUNNEL_TEST_RENDERER_DIR`, which the test processes inherit (test/helpers/renderer-build.ts
 * reads it). The tests only serve the folder, never write to it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildRenderer } from './renderer-build';

/** Builds the renderer and sets RUNNEL_TEST_RENDERER_DIR; returns the teardown that removes it. */
export default async function setup(): Promise<() => void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'runnel-e2e-renderer-'));
  await buildRenderer(dir);
  process.env.RUNNEL_TEST_RENDERER_DIR = dir;
  return () => {
    delete process.env.RUNNEL_TEST_RENDERER_DIR;
    fs.rmSync(dir, { recursive: true, force: true });
  };
}
