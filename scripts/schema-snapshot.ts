/**
 * The committed schema snapshot (test/fixtures/schema.sql): what a fresh database file holds after
 * every migration, as sorted, normalized SQL, so a schema change shows in review (graphile-worker
 * keeps such a dump; STYLE.md habit 6).
 *
 * `npm run schema:snapshot` rewrites the file; test/integration/db/schema-snapshot.test.ts fails
 * while it differs from what the migrations make.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type Database from 'better-sqlite3';
import { openDatabase } from '../engine/db/open-database';

/** Where the snapshot is committed. */
export const SCHEMA_SNAPSHOT_FILE = fileURLToPath(new URL('../test/fixtures/schema.sql', import.meta.url));

/** The command that rewrites {@link SCHEMA_SNAPSHOT_FILE}. */
export const SCHEMA_SNAPSHOT_COMMAND = 'npm run schema:snapshot';

/** Objects in the order a reader looks for them. */
const TYPE_ORDER = ['table', 'index', 'view', 'trigger'];

/**
 * The schema of an open file as text: `PRAGMA user_version`, then every table, index, view and
 * trigger (SQLite's own `sqlite_*` objects left out), ordered by kind, then name.
 *
 * Each statement is SQLite's stored text (`sqlite_master.sql`, which an `ALTER TABLE` edits in
 * place) with line ends normalized to `\n` and trailing spaces cut, then `;`.
 * The same schema always gives the same text, whatever the order its objects were created in.
 */
export function schemaSnapshot(db: Database.Database): string {
  const rows = db
    .prepare(`SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'`)
    .all() as { type: string; name: string; sql: string }[];
  rows.sort((a, b) => TYPE_ORDER.indexOf(a.type) - TYPE_ORDER.indexOf(b.type) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const version = db.pragma('user_version', { simple: true }) as number;
  const statements = rows.map((r) => {
    const text = r.sql
      .replace(/\r\n?/g, '\n')
      .split('\n')
      .map((line) => line.trimEnd())
      .join('\n')
      .trim();
    return `-- ${r.type} ${r.name}\n${text};`;
  });
  const header = [
    `-- Runnel's schema after every migration (user_version ${version}). Generated: do not edit.`,
    `-- Rewrite with \`${SCHEMA_SNAPSHOT_COMMAND}\` when a migration changes the schema.`,
    `PRAGMA user_version = ${version};`,
  ].join('\n');
  return `${[header, ...statements].join('\n\n')}\n`;
}

/** The snapshot of a fresh file: a new database in a temp dir, opened (so migrated) and removed. */
export function freshSchemaSnapshot(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'runnel-schema-'));
  try {
    const db = openDatabase(path.join(dir, 'fresh.db'));
    try {
      return schemaSnapshot(db.raw);
    } finally {
      db.close();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const text = freshSchemaSnapshot();
  const before = fs.existsSync(SCHEMA_SNAPSHOT_FILE) ? fs.readFileSync(SCHEMA_SNAPSHOT_FILE, 'utf8') : undefined;
  fs.writeFileSync(SCHEMA_SNAPSHOT_FILE, text);
  const shown = path.relative(process.cwd(), SCHEMA_SNAPSHOT_FILE);
  console.log(before === text ? `${shown}: unchanged` : `${shown}: written (${text.split('\n').length} lines); commit it with the migration`);
}
