/**
 * Test helpers: a fresh real database file per test in its own temp dir (STYLE.md habit 7).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { SqliteEngine} from '../../engine/runtime/engine';
import { Engine, type EngineOptions } from '../../engine/runtime/engine';

/** A new empty temp directory; removed by `cleanup`. */
export function tempDir(prefix = 'runnel-test-'): { dir: string; cleanup: () => void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  return { dir, cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/** An engine on a new database file in a temp dir. Call `close()` in afterEach. */
export function tempEngine(options: EngineOptions = {}): { engine: SqliteEngine; file: string; dir: string; close: () => Promise<void> } {
  const { dir, cleanup } = tempDir();
  const file = path.join(dir, 'runnel.db');
  const engine = Engine.open(file, { pollIntervalMs: 10, ...options });
  return {
    engine,
    file,
    dir,
    close: async () => {
      await engine.close();
      cleanup();
    },
  };
}

/** Runs the worker until instance `id` is settled (ended, suspended or waiting for a person). */
export async function runToSettled(engine: SqliteEngine, id: number, timeoutMs = 20_000): Promise<Awaited<ReturnType<SqliteEngine['getInstance']>>> {
  await engine.runUntil(() => engine.isSettled(id), timeoutMs);
  return engine.getInstance(id);
}
