/**
 * Custom node types of the csv-pipeline example, plugged in through the registry's public
 * `register` API: `csv.read` (extract) and `sqlite.load` (load).
 *
 * The sandboxed `script` node cannot touch files, which is the point of the sandbox; reading and
 * writing files is what custom types are for. Load them into the CLI with
 * `runnel run examples/csv-pipeline.workflow.json --plugin examples/pipeline-nodes.ts …`.
 *
 * Data travels between steps in a compact columnar shape, `{ columns: string[], rows: unknown[][] }`,
 * so a few thousand rows stay well below the engine's 1 MiB result limit.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { z } from 'zod';
import { EngineError } from '../engine/errors';
import { throwIfAborted, type NodeRegistry, type NodeType } from '../engine/nodes/index';

/** Where `csv.read` looks for files: `examples/data`. Paths may not leave it. */
export const DATA_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'data');

/** A table of rows: what `csv.read` returns and `sqlite.load` takes. */
export interface Table {
  columns: string[];
  rows: unknown[][];
}

/**
 * Parses CSV text (RFC 4180: `,` separated, `"` quoted, `""` escapes a quote, quoted fields may
 * hold commas and newlines; `\r\n` or `\n` line ends). The first record is the header.
 *
 * @throws EngineError INVALID_INPUT (non-retryable) for an unterminated quote or a record whose
 * field count differs from the header's, naming the 1-based line.
 */
export function parseCsv(text: string): Table {
  const records: string[][] = [];
  let field = '';
  let record: string[] = [];
  let quoted = false;
  let line = 1;
  let recordLine = 1;
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (quoted) {
      if (c === '"') {
        if (body[i + 1] === '"') {
          field += '"';
          i++;
        } else quoted = false;
      } else {
        if (c === '\n') line++;
        field += c;
      }
    } else if (c === '"' && field === '') quoted = true;
    else if (c === ',') {
      record.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && body[i + 1] === '\n') i++;
      record.push(field);
      records.push(record);
      field = '';
      record = [];
      line++;
      recordLine = line;
    } else field += c;
  }
  if (quoted)
    throw new EngineError('INVALID_INPUT', `csv: line ${recordLine}: unterminated quoted field`, {
      retryable: false,
    });
  if (field !== '' || record.length > 0) {
    record.push(field);
    records.push(record);
  }
  const [header, ...rows] = records.filter((r) => !(r.length === 1 && r[0] === ''));
  if (!header) return { columns: [], rows: [] };
  rows.forEach((r, n) => {
    if (r.length !== header.length) {
      throw new EngineError(
        'INVALID_INPUT',
        `csv: record ${n + 2} has ${r.length} fields, the header has ${header.length}`,
        { retryable: false },
      );
    }
  });
  return { columns: header, rows };
}

/** Config of `csv.read`: `file`, a path relative to {@link DATA_DIR}. */
export const CsvReadConfigSchema = z.strictObject({
  file: z.string().min(1).describe('CSV file, relative to examples/data'),
});

/**
 * `csv.read`: reads a CSV file under {@link DATA_DIR} into a {@link Table} of strings (plus
 * `file` and `count`). A path that leaves the directory is refused (non-retryable).
 */
export const csvReadNode: NodeType<z.output<typeof CsvReadConfigSchema>> = {
  type: 'csv.read',
  title: 'Read CSV',
  description: 'Reads a CSV file from the examples data folder into rows',
  icon: 'file-text',
  group: 'Data',
  configSchema: CsvReadConfigSchema,
  defaultRetry: { maxAttempts: 2 },
  async execute(ctx) {
    const file = path.resolve(DATA_DIR, ctx.config.file);
    if (path.relative(DATA_DIR, file).startsWith('..') || path.isAbsolute(path.relative(DATA_DIR, file))) {
      throw new EngineError('INVALID_INPUT', `csv.read: "${ctx.config.file}" is outside examples/data`, {
        retryable: false,
      });
    }
    throwIfAborted(ctx.signal, 'csv.read');
    let text: string;
    try {
      text = await fs.promises.readFile(file, { encoding: 'utf8', signal: ctx.signal });
    } catch (err) {
      const code = (err as { code?: string }).code;
      throw new EngineError(
        'INVALID_INPUT',
        `csv.read: cannot read ${ctx.config.file}: ${(err as Error).message}`,
        {
          retryable: code !== 'ENOENT' && code !== 'EISDIR',
        },
      );
    }
    const table = parseCsv(text);
    ctx.log(`read ${table.rows.length} rows from ${ctx.config.file}`);
    return { output: { file: ctx.config.file, count: table.rows.length, ...table } };
  },
};

const IDENT = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/**
 * Config of `sqlite.load`.
 *
 * - `file`: the output SQLite file (absolute, or relative to the working directory);
 * - `table`: the table to write, created when missing;
 * - `key`: the column that identifies a row; rows are upserted on it, so a rerun of the step
 *   (handlers run at least once) loads nothing twice;
 * - `failAttempts`: simulate a transient failure ("database is locked") on the first N attempts,
 *   so the example shows a retry (default 0).
 */
export const SqliteLoadConfigSchema = z.strictObject({
  file: z.string().min(1).describe('Output SQLite file'),
  table: z.string().regex(IDENT, 'must be a plain SQL identifier').describe('Table name'),
  key: z.string().regex(IDENT, 'must be a plain SQL identifier').describe('Key column (upsert)'),
  failAttempts: z.number().int().min(0).max(10).default(0).describe('Simulated transient failures'),
});

const TableSchema = z.object({
  columns: z.array(z.string().regex(IDENT)).min(1),
  rows: z.array(z.array(z.union([z.string(), z.number(), z.boolean(), z.null()]))),
});

/**
 * `sqlite.load`: writes the node's input (a {@link Table}) into a table of a separate SQLite file
 * in one transaction. Output: `{ file, table, rows, total }` (rows written, rows in the table).
 *
 * Errors: INVALID_INPUT (non-retryable) when the input is not a table or lacks the key column;
 * DATABASE_BUSY (retryable) for the simulated failures of `failAttempts`.
 */
export const sqliteLoadNode: NodeType<z.output<typeof SqliteLoadConfigSchema>> = {
  type: 'sqlite.load',
  title: 'Load into SQLite',
  description: 'Upserts rows into a table of a SQLite file',
  icon: 'database',
  group: 'Data',
  configSchema: SqliteLoadConfigSchema,
  async execute(ctx) {
    const { file, table, key, failAttempts } = ctx.config;
    throwIfAborted(ctx.signal, 'sqlite.load');
    if (ctx.attempt <= failAttempts) {
      throw new EngineError(
        'DATABASE_BUSY',
        `sqlite.load: ${path.basename(file)} is locked by another writer (simulated, attempt ${ctx.attempt})`,
        {
          retryable: true,
        },
      );
    }
    const parsed = TableSchema.safeParse(ctx.input);
    if (!parsed.success) {
      throw new EngineError(
        'INVALID_INPUT',
        `sqlite.load: input is not a table: ${parsed.error.issues[0]?.message ?? ''}`,
        { retryable: false },
      );
    }
    const { columns, rows } = parsed.data;
    const keyAt = columns.indexOf(key);
    if (keyAt < 0)
      throw new EngineError('INVALID_INPUT', `sqlite.load: no column "${key}" in the input`, {
        retryable: false,
      });
    const db = new Database(path.resolve(file));
    try {
      db.pragma('journal_mode = WAL');
      const cols = columns.map((c) => `"${c}"${c === key ? ' PRIMARY KEY' : ''}`).join(', ');
      db.exec(`CREATE TABLE IF NOT EXISTS "${table}" (${cols})`);
      const insert = db.prepare(
        `INSERT INTO "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) VALUES (${columns.map(() => '?').join(', ')})
         ON CONFLICT("${key}") DO UPDATE SET ${columns
           .filter((c) => c !== key)
           .map((c) => `"${c}" = excluded."${c}"`)
           .join(', ')}`,
      );
      db.transaction(() => {
        for (const row of rows) insert.run(...row.map((v) => (typeof v === 'boolean' ? Number(v) : v)));
      })();
      const total = (db.prepare(`SELECT count(*) AS n FROM "${table}"`).get() as { n: number }).n;
      ctx.log(`loaded ${rows.length} rows into ${table}`);
      return { output: { file: path.resolve(file), table, rows: rows.length, total } };
    } finally {
      db.close();
    }
  },
};

/** The example's custom node types. */
export const pipelineNodeTypes = [csvReadNode, sqliteLoadNode] as const;

/**
 * Adds `csv.read` and `sqlite.load` to `registry` (skipping types already there, so calling it
 * twice is harmless). This is the plug-in entry point `runnel --plugin` calls.
 */
export function register(registry: NodeRegistry): void {
  for (const type of pipelineNodeTypes) if (!registry.has(type.type)) registry.register(type);
}
