/**
 * Test helpers: a fresh real database per test (STYLE.md habit 7) — a file in its own temp dir,
 * or, with `RUNNEL_TEST_BACKEND=postgres` (the `integration-pg` vitest project), a database of its
 * own on the run's PostgreSQL cluster (test/helpers/postgres.ts), so one test file runs on both
 * backends. Nothing is mocked.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Engine, type EngineOptions, SqliteEngine } from '../../engine/runtime/engine';
import { tempPostgresSync } from './postgres';

/** The backend `tempEngine()` opens: `RUNNEL_TEST_BACKEND=postgres` gives PostgreSQL, anything else SQLite. */
export const TEST_BACKEND: 'sqlite' | 'postgres' = process.env.RUNNEL_TEST_BACKEND === 'postgres' ? 'postgres' : 'sqlite';

/** A new empty temp directory; removed by `cleanup`. */
export function tempDir(prefix = 'runnel-test-'): { dir: string; cleanup: () => void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  return { dir, cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/**
 * A new empty database of the run's backend ({@link TEST_BACKEND}) for a test that opens engines
 * on it itself (reopening, several engines, child processes): `location` is a file path in the
 * temp dir `dir`, or a fresh PostgreSQL database's URL. `cleanup()` removes the database and `dir`
 * (close what uses it first).
 */
export function tempLocation(prefix = 'runnel-test-'): { location: string; dir: string; cleanup: () => Promise<void> } {
  const { dir, cleanup } = tempDir(prefix);
  if (TEST_BACKEND === 'sqlite') return { location: path.join(dir, 'runnel.db'), dir, cleanup: async () => cleanup() };
  const database = tempPostgresSync();
  return {
    location: database.url,
    dir,
    cleanup: async () => {
      try {
        await database.drop();
      } finally {
        cleanup();
      }
    },
  };
}

/** What {@link tempEngine} and {@link tempSqliteEngine} give. */
export interface TempEngine<E extends Engine = Engine> {
  engine: E;
  /** Where the database is: the file's path, or (PostgreSQL) the database's URL; what `--db` and `Engine.open` take. */
  file: string;
  /** A temp dir of the test's own (removed by `close`), for other files it needs. */
  dir: string;
  /** Closes the engine and removes the database (file or PostgreSQL database) and `dir`. */
  close: () => Promise<void>;
}

/**
 * An engine on a new database of the run's backend ({@link TEST_BACKEND}), polling every 10 ms
 * unless `options` say otherwise. Call `close()` in afterEach. Tests that need SQLite's internals
 * (`engine.db`, raw SQL, the file itself) use {@link tempSqliteEngine}.
 */
export function tempEngine(options: EngineOptions = {}): TempEngine {
  if (TEST_BACKEND === 'sqlite') return tempSqliteEngine(options);
  const { dir, cleanup } = tempDir();
  const database = tempPostgresSync();
  let engine: Engine;
  try {
    engine = Engine.open(database.url, { pollIntervalMs: 10, ...options });
  } catch (err) {
    cleanup();
    void database.drop();
    throw err;
  }
  return {
    engine,
    file: database.url,
    dir,
    close: async () => {
      try {
        await engine.close();
      } finally {
        await database.drop();
        cleanup();
      }
    },
  };
}

/** An engine on a new SQLite file in a temp dir, whatever the run's backend. Call `close()` in afterEach. */
export function tempSqliteEngine(options: EngineOptions = {}): TempEngine<SqliteEngine> {
  const { dir, cleanup } = tempDir();
  const file = path.join(dir, 'runnel.db');
  const engine = SqliteEngine.open(file, { pollIntervalMs: 10, ...options });
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
export async function runToSettled(engine: Engine, id: number, timeoutMs = 20_000): Promise<Awaited<ReturnType<Engine['getInstance']>>> {
  await engine.runUntil(() => engine.isSettled(id), timeoutMs);
  return engine.getInstance(id);
}
