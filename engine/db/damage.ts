/**
 * What SQLite says about the file, as the engine's typed errors: a damaged file
 * (DATABASE_CORRUPT, with how to recover), a full disk (DATABASE_FULL), and a row or table that is
 * not what this build wrote (DATABASE_CORRUPT naming it). Issue 17: a malformed database answered
 * INTERNAL with a stack, and a full disk the raw SQLITE_FULL.
 */
import fs from 'node:fs';
import { EngineError } from '../errors';

/** The file beside a damaged database that says so, for every process that opens it: `<file>-damaged`. */
export function damageMarker(file: string): string {
  return `${file}-damaged`;
}

/**
 * Records that `file` was found damaged (best effort: a JSON note beside it, `<file>-damaged`), so
 * that no process writes to it until a person has checked or restored it and removed the note.
 */
export function recordDamage(file: string, error: EngineError): void {
  if (file === ':memory:') return;
  // What SQLite said, without the advice the error's message adds (the reader adds it again).
  const said = error.cause instanceof Error ? error.cause.message : error.message;
  try {
    fs.writeFileSync(damageMarker(file), `${JSON.stringify({ at: new Date().toISOString(), error: said }, null, 2)}\n`, { flag: 'wx' });
  } catch {
    // Already recorded, or the directory is not writable: this process stops writing all the same.
  }
}

/** The DATABASE_CORRUPT error of a damage recorded beside `file` by {@link recordDamage}, or undefined. */
export function damageFound(file: string): EngineError | undefined {
  if (file === ':memory:') return undefined;
  let note: { at?: string; error?: string };
  try {
    note = JSON.parse(fs.readFileSync(damageMarker(file), 'utf8')) as { at?: string; error?: string };
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT') return undefined;
    note = {};
  }
  return new EngineError(
    'DATABASE_CORRUPT',
    `${file} was found damaged${note.at ? ` at ${note.at}` : ''}${note.error ? ` (SQLite: ${note.error})` : ''}; Runnel does not write to it. To recover: ${recoveryAdvice(file)}. Once the file is sound or restored, delete ${damageMarker(file)}`,
    { kind: 'user', retryable: false },
  );
}

/** Whether `err` is SQLite saying the file's pages are damaged (SQLITE_CORRUPT*, SQLITE_NOTADB). */
export function isCorruptError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB');
}

/** How to get going again from a damaged file (said by every DATABASE_CORRUPT of a damaged file). */
export function recoveryAdvice(file: string): string {
  const q = `'${file.replace(/'/g, `'\\''`)}'`;
  return `see what is wrong with: npx runnel check --db ${q} (SQLite's integrity_check and the engine's own invariants); then restore a backup (\`npx runnel backup <dest>\` takes one of a sound file, even while workers run), or copy out what SQLite can still read with: sqlite3 ${q} .recover > recovered.sql`;
}

/**
 * The typed error of `err`, met while using the open database `file`, when it is about the
 * database itself; undefined for anything else (it is rethrown as it is):
 * - damaged pages (SQLITE_CORRUPT, SQLITE_NOTADB) → DATABASE_CORRUPT, and `damaged` is true: the
 *   engine stops writing to the file;
 * - a full disk, or the size limit reached (SQLITE_FULL) → DATABASE_FULL, transient;
 * - a table or column this build needs missing (dropped by hand) → DATABASE_CORRUPT;
 * - stored text that does not parse as JSON (a row edited by hand) → DATABASE_CORRUPT.
 */
export function databaseError(err: unknown, file: string): { error: EngineError; damaged: boolean } | undefined {
  if (err instanceof EngineError) return undefined;
  const code = (err as { code?: unknown } | null)?.code;
  const message = err instanceof Error ? err.message : String(err);
  if (isCorruptError(err)) {
    return {
      damaged: true,
      error: new EngineError('DATABASE_CORRUPT', `${file} is damaged (SQLite: ${message}); Runnel stopped writing to it. To recover: ${recoveryAdvice(file)}`, {
        cause: err,
        kind: 'user',
        retryable: false,
      }),
    };
  }
  if (code === 'SQLITE_FULL') {
    return {
      damaged: false,
      error: new EngineError('DATABASE_FULL', `${file}: the disk is full (or the database reached its size limit); nothing was written. Free some space: work goes on by itself`, {
        cause: err,
      }),
    };
  }
  if (code === 'SQLITE_ERROR' && /^no such (table|column)/.test(message)) {
    return {
      damaged: false,
      error: new EngineError('DATABASE_CORRUPT', `${file} is not the schema this Runnel wrote (${message}): was it changed by hand? To recover: ${recoveryAdvice(file)}`, {
        cause: err,
        kind: 'user',
        retryable: false,
      }),
    };
  }
  if (err instanceof SyntaxError && /JSON/.test(message)) {
    return {
      damaged: false,
      error: new EngineError('DATABASE_CORRUPT', `${file} holds a row whose JSON does not parse (${message}): was it edited by hand?`, {
        cause: err,
        kind: 'user',
        retryable: false,
      }),
    };
  }
  return undefined;
}
