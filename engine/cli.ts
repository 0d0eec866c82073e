/**
 * The `runnel` command line: one host of the engine, like the desktop app and the browser host.
 *
 * Every command takes `--db FILE` (default `./runnel.db`), `--json` (machine-readable output on
 * stdout, no progress on stderr) and `--sync full|normal`. Exit codes, stable for scripts:
 *
 * | code | meaning |
 * |---|---|
 * | 0 | COMPLETED, or success of a command that runs no instance |
 * | 1 | FAILED or CANCELLED (and unexpected engine errors) |
 * | 2 | bad usage: unknown option, invalid workflow, bad `--vars`, missing, empty, corrupt or read-only database, unwritable `-o` file, unknown id |
 * | 3 | SUSPENDED, or waiting for a person (an approval) |
 * | 130 | interrupted (Ctrl-C): the worker stopped cleanly and released its claims |
 *
 * Errors print `error: <CODE>: message` on stderr, never a stack trace for user errors. Files are
 * validated, flags parsed and `run`'s variables checked against the workflow's `inputSchema`
 * before the database is opened, so bad input writes nothing; commands that read (show, list,
 * start, worker, resume, approve, cancel, export) never create a file. A database whose file or
 * directory is not writable (or `--read-only`) is opened read-only: list, show and export work,
 * commands that change it exit 2 with DATABASE_READONLY.
 *
 * A closed pipe (`runnel run x.json --json | head -c 100`) does not crash the command: output to
 * it is dropped and the command finishes its work.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { EngineError } from './errors';
import { INSTANCE_STATUSES } from './vocabulary';
import { parseWorkflowText } from './dsl/parse';
import { validateWorkflow, type Problem } from './dsl/validate';
import { checkVariables } from './dsl/input-schema';
import type { Workflow } from './dsl/schema';
import { openDatabase } from './db/open-database';
import { SCHEMA_VERSION } from './db/migrations/index';
import { Engine, type EngineOptions } from './runtime/engine';
import type { EngineEvent } from './runtime/events';
import { createDefaultRegistry, type AnyNodeType, type NodeRegistry } from './nodes/index';

/** Where the CLI writes: stdout carries results, stderr carries progress and errors. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
}

/** Streams found closed (EPIPE: the reader went away); output to them is dropped. */
const closedStreams = new WeakSet<NodeJS.WriteStream>();
/** Streams with the EPIPE guard of {@link guardStream}. */
const guardedStreams = new WeakSet<NodeJS.WriteStream>();

/**
 * Makes a closed pipe harmless on a process stream. An EPIPE (`| head -2`) arrives as an 'error'
 * event, which crashes the process when nothing handles it (and a listener someone else added,
 * such as `pipe()`'s, may rethrow it): this one swallows it and marks the stream closed, and the
 * command goes on (its exit code still tells the outcome).
 */
function guardStream(stream: NodeJS.WriteStream): void {
  if (guardedStreams.has(stream)) return;
  guardedStreams.add(stream);
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE' || err.code === 'ERR_STREAM_DESTROYED') closedStreams.add(stream);
    else throw err;
  });
}

/** Writes to a process stream unless its reader went away (see {@link guardStream}). */
function writeTo(stream: NodeJS.WriteStream, text: string): void {
  guardStream(stream);
  if (closedStreams.has(stream) || stream.destroyed) return;
  stream.write(text);
}

/** The process's own streams (a closed pipe is ignored: see {@link writeTo}). */
export const processIo: CliIo = {
  stdout: (text) => writeTo(process.stdout, text),
  stderr: (text) => writeTo(process.stderr, text),
};

/** Exit codes of the CLI (see the module comment). */
export const ExitCode = {
  OK: 0,
  FAILED: 1,
  USAGE: 2,
  NEEDS_PERSON: 3,
  INTERRUPTED: 130,
} as const;

/** State shared by the commands of one {@link main} call. */
export interface CliRun {
  io: CliIo;
  /** Set by the command that ran. */
  exitCode: number;
  /** Aborted on SIGINT / SIGTERM: long commands stop their worker and return 130. */
  signal: AbortSignal;
}

/** Options every command takes. */
interface CommonOptions {
  db: string;
  json?: boolean;
  sync: 'full' | 'normal';
  plugin: string[];
  readOnly?: boolean;
}

/**
 * What a command does with the database: `read` (an existing file, read-only is fine), `write`
 * (an existing file it changes) or `create` (changes it, creating it when missing).
 */
type DbAccess = 'read' | 'write' | 'create';


const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

// ------------------------------------------------------------------------------------ helpers

/** A user error of bad command-line input: exit code 2. */
function usage(message: string, details?: unknown): EngineError {
  return new EngineError('INVALID_INPUT', message, { kind: 'user', retryable: false, details });
}

function positiveInt(flag: string) {
  return (value: string): number => {
    if (!/^\d+$/.test(value) || Number(value) < 1 || !Number.isSafeInteger(Number(value))) {
      throw new InvalidArgumentError(`${flag} must be a positive integer (got "${value}")`);
    }
    return Number(value);
  };
}

function portNumber(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 65_535) {
    throw new InvalidArgumentError(`--port must be 0–65535 (got "${value}")`);
  }
  return Number(value);
}

/**
 * What `runnel serve` uses of server/index.ts. The server is its own TypeScript project that
 * builds on this one, so it is loaded at run time; test/types checks that it satisfies this.
 */
export interface ServeModule {
  startServer(options: { engine: Engine; port?: number }): Promise<{ url: string; port: number; token: string; close(): Promise<void> }>;
}

const SERVER_MODULE = new URL('../server/index.ts', import.meta.url).href;

/** Opens `url` in the system browser; failing to is only a warning. */
function openBrowser(url: string, io: CliIo): void {
  const [cmd, args]: [string, string[]] =
    process.platform === 'darwin'
      ? ['open', [url]]
      : process.platform === 'win32'
        ? ['cmd', ['/c', 'start', '""', url]]
        : ['xdg-open', [url]];
  const warn = (why: string) => io.stderr(`warning: could not open a browser (${why}); open the URL above yourself\n`);
  try {
    const child = spawn(cmd, args, { stdio: 'ignore', detached: true });
    child.on('error', (err) => warn(err.message));
    child.unref();
  } catch (err) {
    warn((err as Error).message);
  }
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function describeJsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

/** Parses a flag's JSON value, naming the flag in the error. */
function parseJsonFlag(flag: string, text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw usage(`${flag} is not valid JSON: ${(err as Error).message}`, { flag });
  }
}

function jsonObjectFlag(flag: string, value: unknown): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw usage(
      `${flag} must be a JSON object such as '{"deviceId":"dev-01"}', got ${describeJsonType(value)}`,
      { flag },
    );
  }
  return value as Record<string, unknown>;
}

/**
 * The variables of `--vars-file F` and `--vars JSON`: both must hold a JSON object; `--vars`
 * keys win. `undefined` when neither was given.
 *
 * @throws EngineError INVALID_INPUT naming the flag.
 */
export function parseVariables(opts: {
  vars?: string;
  varsFile?: string;
}): Record<string, unknown> | undefined {
  let out: Record<string, unknown> | undefined;
  if (opts.varsFile !== undefined) {
    let text: string;
    try {
      text = fs.readFileSync(opts.varsFile, 'utf8');
    } catch (err) {
      throw usage(`--vars-file: cannot read ${opts.varsFile}: ${(err as Error).message}`, {
        flag: '--vars-file',
      });
    }
    out = jsonObjectFlag('--vars-file', parseJsonFlag('--vars-file', text));
  }
  if (opts.vars !== undefined)
    out = { ...out, ...jsonObjectFlag('--vars', parseJsonFlag('--vars', opts.vars)) };
  return out;
}

function defaultActor(): string {
  try {
    return os.userInfo().username || 'cli';
  } catch {
    return 'cli';
  }
}

function instanceIdArg(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1 || !Number.isSafeInteger(Number(value))) {
    throw new InvalidArgumentError(`an instance id is a positive integer (got "${value}")`);
  }
  return Number(value);
}

/**
 * Loads `--plugin` modules into a registry of the built-ins.
 *
 * A plug-in is an ES module (TypeScript works through the bin's tsx loader) that exports
 * `register(registry)`, or `nodeTypes`, an array of node types.
 *
 * @throws EngineError INVALID_INPUT naming the plug-in when it cannot be loaded or exports neither.
 */
export async function loadRegistry(plugins: readonly string[]): Promise<NodeRegistry> {
  const registry = createDefaultRegistry();
  for (const plugin of plugins) {
    const file = path.resolve(plugin);
    if (!fs.existsSync(file)) throw usage(`--plugin ${plugin}: no such file`, { flag: '--plugin' });
    let mod: { register?: unknown; nodeTypes?: unknown };
    try {
      mod = (await import(pathToFileURL(file).href)) as typeof mod;
    } catch (err) {
      throw usage(`--plugin ${plugin}: cannot load it: ${(err as Error).message}`, { flag: '--plugin' });
    }
    if (typeof mod.register === 'function') await (mod.register as (r: NodeRegistry) => unknown)(registry);
    else if (Array.isArray(mod.nodeTypes))
      for (const t of mod.nodeTypes as AnyNodeType[]) registry.register(t);
    else
      throw usage(`--plugin ${plugin}: exports neither register(registry) nor nodeTypes`, {
        flag: '--plugin',
      });
  }
  return registry;
}

/**
 * Checks `--db` before SQLite touches it: a missing file (when it must exist) or directory is a
 * clear error, and an existing file must be a Runnel database or an empty one. The probe opens
 * the file read-only, so a corrupt or foreign file is never written to.
 *
 * @throws EngineError NOT_FOUND (missing file or directory), DATABASE_CORRUPT (not SQLite, or a
 * SQLite file of another application).
 */
export function probeDatabase(file: string, mustExist: boolean): void {
  const resolved = path.resolve(file);
  const stat = fs.statSync(resolved, { throwIfNoEntry: false });
  if (!stat) {
    if (mustExist)
      throw new EngineError(
        'NOT_FOUND',
        `database file ${resolved} does not exist (run "npx runnel init" or pass --db)`,
      );
    const dir = path.dirname(resolved);
    if (!fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory()) {
      throw new EngineError('NOT_FOUND', `cannot create ${resolved}: directory ${dir} does not exist`);
    }
    return;
  }
  if (!stat.isFile()) throw usage(`--db ${resolved} is not a file`, { flag: '--db' });
  if (stat.size === 0) {
    // An empty file may become a database (init, deploy, run), but a command that needs one
    // must not write the schema into it.
    if (mustExist) {
      throw new EngineError('DATABASE_CORRUPT', `${resolved} is not a Runnel database (empty file); nothing was written`, {
        kind: 'user',
        retryable: false,
      });
    }
    return;
  }
  let db: Database.Database | undefined;
  try {
    db = new Database(resolved, { readonly: true, fileMustExist: true });
    const version = db.pragma('user_version', { simple: true }) as number;
    const tables = (
      db.prepare(`SELECT count(*) AS n FROM sqlite_master WHERE type = 'table'`).get() as { n: number }
    ).n;
    if (version === 0 && tables > 0) {
      throw new EngineError(
        'DATABASE_CORRUPT',
        `${resolved} is a SQLite database but not a Runnel one (it has ${tables} other tables); refusing to touch it`,
        { kind: 'user' },
      );
    }
  } catch (err) {
    if (err instanceof EngineError) throw err;
    const code = (err as { code?: string }).code ?? '';
    // A file SQLite cannot read without writing beside it (a WAL file in a read-only directory):
    // opening it says so in full (openDatabase).
    if (code.startsWith('SQLITE_READONLY') || code.startsWith('SQLITE_CANTOPEN')) return;
    if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT') {
      throw new EngineError(
        'DATABASE_CORRUPT',
        `${resolved} is not a Runnel database: the file is not SQLite or is damaged (${(err as Error).message}); nothing was written`,
        {
          kind: 'user',
          retryable: false,
        },
      );
    }
    throw err;
  } finally {
    db?.close();
  }
}

async function openEngine(
  o: CommonOptions,
  access: DbAccess,
  extra: EngineOptions = {},
  registry?: NodeRegistry,
): Promise<Engine> {
  const reg = registry ?? (await loadRegistry(o.plugin));
  const mustExist = access !== 'create';
  probeDatabase(o.db, mustExist);
  const engine = Engine.open(o.db, {
    registry: reg,
    synchronous: o.sync === 'normal' ? 'NORMAL' : 'FULL',
    mustExist,
    ...(o.readOnly ? { readonly: true } : {}),
    ...extra,
  });
  if (access !== 'read' && engine.db.readonly) {
    await engine.close();
    throw new EngineError(
      'DATABASE_READONLY',
      `${engine.db.file} is open read-only (${o.readOnly ? '--read-only was given' : 'the file or its directory is not writable'}), and this command changes it; list, show and export still work`,
      { retryable: false },
    );
  }
  return engine;
}

/** The error of an output file that cannot be written: exit 2, naming the path. */
function outputFileError(file: string, err: unknown): EngineError {
  const code = (err as { code?: unknown } | null)?.code;
  const why =
    code === 'ENOENT'
      ? `directory ${path.dirname(path.resolve(file))} does not exist`
      : code === 'EACCES' || code === 'EPERM'
        ? 'permission denied'
        : code === 'EISDIR'
          ? 'it is a directory'
          : (err as Error).message;
  return usage(`-o ${file}: cannot write ${path.resolve(file)}: ${why}`, { flag: '-o', file });
}

/**
 * Checks that `-o FILE` can be created before any work starts: its directory exists and it is
 * not a directory itself.
 *
 * @throws EngineError INVALID_INPUT naming the path.
 */
function checkOutputFile(file: string): void {
  const resolved = path.resolve(file);
  const dir = path.dirname(resolved);
  if (!fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory()) {
    throw outputFileError(file, Object.assign(new Error('no such directory'), { code: 'ENOENT' }));
  }
  if (fs.statSync(resolved, { throwIfNoEntry: false })?.isDirectory()) {
    throw outputFileError(file, Object.assign(new Error('is a directory'), { code: 'EISDIR' }));
  }
}

/** Reads and validates a workflow file (JSON or YAML) against `registry`; nothing is opened. */
async function readWorkflowFile(
  file: string,
  registry: NodeRegistry,
): Promise<{ raw: unknown; workflow: Workflow }> {
  let text: string;
  try {
    text = await fs.promises.readFile(file, 'utf8');
  } catch (err) {
    throw new EngineError('NOT_FOUND', `cannot read workflow file ${file}: ${(err as Error).message}`);
  }
  const raw = parseWorkflowText(text, file);
  const result = validateWorkflow(raw, registry.catalog());
  if (!result.ok) {
    const n = result.problems.length;
    throw new EngineError('INVALID_WORKFLOW', `${file}: ${n} problem${n === 1 ? '' : 's'}`, {
      details: result.problems,
    });
  }
  return { raw, workflow: result.workflow };
}

function isProblemList(v: unknown): v is Problem[] {
  return (
    Array.isArray(v) && v.every((p) => typeof p === 'object' && p !== null && 'code' in p && 'message' in p)
  );
}

/**
 * Prints an error as `error: <CODE>: message` (plus one line per validation problem) and returns
 * the exit code: 2 for user errors, 1 otherwise. Stack traces only for unexpected errors.
 */
export function reportError(err: unknown, io: CliIo): number {
  if (err instanceof EngineError) {
    io.stderr(`error: ${err.code}: ${err.message}\n`);
    if (isProblemList(err.details)) for (const p of err.details) io.stderr(`  ${p.code} ${p.message}\n`);
    if (err.kind !== 'user' && err.stack && process.env.RUNNEL_DEBUG) io.stderr(`${err.stack}\n`);
    return err.kind === 'user' ? ExitCode.USAGE : ExitCode.FAILED;
  }
  const e = err instanceof Error ? err : new Error(String(err));
  io.stderr(`error: INTERNAL: ${e.message}\n${e.stack ?? ''}\n`);
  return ExitCode.FAILED;
}

/** The exit code an instance's status maps to (see the module comment). */
export function exitCodeForStatus(status: string): number {
  if (status === 'COMPLETED') return ExitCode.OK;
  if (status === 'FAILED' || status === 'CANCELLED') return ExitCode.FAILED;
  return ExitCode.NEEDS_PERSON;
}

function json(io: CliIo, value: unknown): void {
  io.stdout(`${JSON.stringify(value, null, 2)}\n`);
}

/** East Asian Wide and Fullwidth ranges (Unicode UAX #11): two terminal columns each. */
const WIDE =
  /[\u1100-\u115f\u231a\u231b\u2329\u232a\u23e9-\u23ec\u23f0\u23f3\u25fd\u25fe\u2614\u2615\u2648-\u2653\u267f\u2693\u26a1\u26aa\u26ab\u26bd\u26be\u26c4\u26c5\u26ce\u26d4\u26ea\u26f2\u26f3\u26f5\u26fa\u26fd\u2705\u270a\u270b\u2728\u274c\u274e\u2753-\u2755\u2757\u2795-\u2797\u27b0\u27bf\u2b1b\u2b1c\u2b50\u2b55\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\ua960-\ua97f\uac00-\ud7a3\uf900-\ufaff\ufe10-\ufe19\ufe30-\ufe6f\uff00-\uff60\uffe0-\uffe6\u{16fe0}-\u{1b2ff}\u{1f004}\u{1f0cf}\u{1f18e}\u{1f191}-\u{1f19a}\u{1f1e6}-\u{1f1ff}\u{1f200}-\u{1f251}\u{1f300}-\u{1f64f}\u{1f680}-\u{1f6ff}\u{1f7e0}-\u{1f7eb}\u{1f90c}-\u{1f9ff}\u{1fa70}-\u{1faff}\u{20000}-\u{2fffd}\u{30000}-\u{3fffd}]/u;
/**
 * Characters that take no column: combining marks (variation selectors included) and format
 * characters (zero-width spaces and joiners).
 */
const ZERO_WIDTH = /^[\p{Mn}\p{Me}\p{Cf}]+$/u;

let graphemes: Intl.Segmenter | undefined;

/**
 * How many terminal columns `text` takes: per grapheme (user-perceived character), 2 for East
 * Asian wide or fullwidth characters and emoji (an emoji presentation selector or a ZWJ sequence
 * counts once), 0 for combining marks and other zero-width characters, else 1.
 */
export function displayWidth(text: string): number {
  if (/^[\x20-\x7e]*$/.test(text)) return text.length;
  graphemes ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' });
  let width = 0;
  for (const { segment } of graphemes.segment(text)) {
    if (ZERO_WIDTH.test(segment)) continue;
    if (WIDE.test(segment) || segment.includes('\ufe0f') || /\p{Extended_Pictographic}\u200d/u.test(segment)) width += 2;
    else width += 1;
  }
  return width;
}

/** Rows as aligned columns (two spaces apart), padded by display width so CJK and emoji line up. */
function table(rows: string[][]): string {
  const widths: number[] = [];
  for (const r of rows) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, displayWidth(c))));
  return rows
    .map((r) =>
      r
        .map((c, i) => (i === r.length - 1 ? c : c + ' '.repeat((widths[i] ?? 0) - displayWidth(c))))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

function time(ms: number | null | undefined): string {
  return ms === null || ms === undefined ? '-' : new Date(ms).toISOString().replace('T', ' ').slice(0, 23);
}

function short(value: unknown, max = 200): string {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function errorText(e: unknown): string {
  if (typeof e !== 'object' || e === null) return short(e);
  const { code, message } = e as { code?: unknown; message?: unknown };
  return `${typeof code === 'string' ? `${code}: ` : ''}${typeof message === 'string' ? message : short(e)}`;
}

/**
 * Stderr progress, throttled: at most `perSecond` lines a second; lines over the budget are
 * counted and reported as one line when the budget refills. Silent when disabled (`--json`).
 */
class Progress {
  private windowStart = 0;
  private inWindow = 0;
  private dropped = 0;

  constructor(
    private readonly io: CliIo,
    readonly enabled: boolean,
    private readonly perSecond = 20,
  ) {}

  line(text: string): void {
    if (!this.enabled) return;
    const now = Date.now();
    if (now - this.windowStart >= 1000) {
      if (this.dropped > 0)
        this.io.stderr(`  … ${this.dropped} more transition${this.dropped === 1 ? '' : 's'} not shown\n`);
      this.windowStart = now;
      this.inWindow = 0;
      this.dropped = 0;
    }
    if (this.inWindow >= this.perSecond) {
      this.dropped++;
      return;
    }
    this.inWindow++;
    this.io.stderr(`${text}\n`);
  }

  flush(): void {
    if (this.enabled && this.dropped > 0)
      this.io.stderr(`  … ${this.dropped} more transition${this.dropped === 1 ? '' : 's'} not shown\n`);
    this.dropped = 0;
  }
}

/**
 * Runs the worker until `done()` or the run's signal aborts. Returns false when interrupted.
 * The worker is always stopped (claims committed or released) before this returns.
 */
async function workUntil(
  engine: Engine,
  done: () => boolean,
  signal: AbortSignal,
  pollMs = 10,
): Promise<boolean> {
  engine.startWorker();
  try {
    while (!done()) {
      if (signal.aborted) return false;
      await sleep(pollMs);
    }
    return true;
  } finally {
    await engine.stopWorker();
  }
}

type Instance = ReturnType<Engine['getInstance']>;

/** Per-node progress lines of one instance, with the error of a failed attempt. */
function followInstance(
  engine: Engine,
  progress: Progress,
  instanceId: () => number | undefined,
): () => void {
  if (!progress.enabled) return () => undefined;
  const t0 = Date.now();
  const asked = new Set<string>();
  return engine.on((e: EngineEvent) => {
    if (!('instanceId' in e) || e.instanceId !== instanceId()) return;
    const at = `+${((Date.now() - t0) / 1000).toFixed(2)}s`;
    if (e.type === 'node.changed') {
      // The approval's own line already said it waits.
      if (e.status === 'WAITING' && asked.delete(e.nodeId)) return;
      let extra = e.attempt !== undefined && e.status === 'RUNNING' ? ` (attempt ${e.attempt})` : '';
      if (e.status === 'RETRYING' || e.status === 'FAILED') {
        const node = engine.getInstance(e.instanceId).nodes.find((n) => n.id === e.nodeId);
        extra = ` after attempt ${e.attempt ?? node?.attempt ?? '?'}${node?.error ? `: ${short(errorText(node.error), 160)}` : ''}`;
      }
      progress.line(`  ${at}  ${e.nodeId}  ${e.status}${extra}`);
    } else if (e.type === 'approval.requested') {
      asked.add(e.nodeId);
      progress.line(`  ${at}  ${e.nodeId}  waits for a person${e.prompt ? `: ${short(e.prompt, 160)}` : ''}`);
    } else if (e.type === 'instance.changed' || e.type === 'instance.finished') {
      progress.line(`  ${at}  instance ${e.status}`);
    }
  });
}

/** `value` quoted for a POSIX shell when it needs it, for the hints we print. */
function shellQuote(value: string): string {
  return /^[\w./:@%+=-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

/** The human report of an instance: status line, nodes, and what a person can do next. */
function describeInstance(engine: Engine, inst: Instance, dbFlag: string): string {
  const lines: string[] = [];
  const db = shellQuote(dbFlag);
  let order: string[] = [];
  try {
    order = engine.getWorkflow(inst.workflow, inst.workflowVersion).definition.nodes.map((n) => n.id);
  } catch {
    // A report without the definition's order is still a report.
  }
  const rank = (id: string) => (order.includes(id) ? order.indexOf(id) : order.length);
  const took =
    inst.endedAt !== null && inst.startedAt !== null
      ? ` in ${((inst.endedAt - inst.startedAt) / 1000).toFixed(2)} s`
      : '';
  lines.push(`instance ${inst.id} (${inst.workflow} v${inst.workflowVersion}) ${inst.status}${took}`);
  const rows = inst.nodes
    .slice()
    .sort((a, b) => rank(a.id) - rank(b.id) || a.id.localeCompare(b.id))
    .map((n) => [
      `  ${n.id}`,
      n.status,
      n.attempt > 0 ? `attempt ${n.attempt}/${n.maxAttempts}` : '',
      n.error && n.status !== 'COMPLETED' ? short(errorText(n.error), 120) : '',
    ]);
  if (rows.length > 0) lines.push(table(rows));
  if (inst.error) lines.push(`error: ${errorText(inst.error)}`);
  const waiting = inst.nodes.filter(
    (n) => n.status === 'WAITING' && (n.wait as { kind?: string } | undefined)?.kind === 'approval',
  );
  for (const n of waiting) {
    const prompt = (n.wait as { prompt?: string }).prompt;
    lines.push(`waiting for a person at "${n.id}"${prompt ? `: ${prompt}` : ''}`);
    lines.push(`  decide with: npx runnel approve ${inst.id} ${shellQuote(n.id)} --approve|--reject --db ${db}`);
  }
  if (inst.status === 'SUSPENDED' && inst.suspension) {
    const s = inst.suspension;
    lines.push(
      `suspended at "${s.nodeId}" (${s.kind === 'incident' ? 'its retries ran out' : 'its compensation failed'} after ${s.attempts} attempt${s.attempts === 1 ? '' : 's'}): ${errorText(s.error)}`,
    );
    lines.push(`  resume with: npx runnel resume ${inst.id} --action retry|skip|fail --db ${db}`);
  }
  return `${lines.join('\n')}\n`;
}

// ------------------------------------------------------------------------------------ commands

function common(cmd: Command): Command {
  return cmd
    .option('--db <file>', 'database file', './runnel.db')
    .option('--json', 'machine-readable output on stdout (no progress)')
    .addOption(
      new Option(
        '--sync <mode>',
        'SQLite synchronous level: full, or normal (faster; may lose the last transactions on power loss, never corrupts)',
      )
        .choices(['full', 'normal'])
        .default('full'),
    )
    .option('--plugin <module>', 'a module that registers custom node types (repeatable)', collect, [])
    .option(
      '--read-only',
      'open the database read-only: list, show and export work, changes are refused (automatic when the file or its directory is not writable)',
    );
}

/**
 * Builds the `runnel` program. Actions set `run.exitCode`; errors propagate to the caller
 * (see {@link main}), so tests can drive it in-process.
 */
export function buildProgram(run: CliRun): Command {
  const { io } = run;
  const program = new Command('runnel')
    .description('Runnel: a durable workflow engine whose whole runtime is one SQLite file')
    .version('0.1.0', '-V, --version', 'print the version of runnel')
    .enablePositionalOptions()
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({ writeOut: (s) => io.stdout(s), writeErr: (s) => io.stderr(s) })
    .exitOverride();

  common(program.command('init').description('create (or migrate) the database file')).action(
    async (o: CommonOptions) => {
      probeDatabase(o.db, false);
      const existed = fs.existsSync(path.resolve(o.db));
      const db = openDatabase(o.db, {
        synchronous: o.sync === 'normal' ? 'NORMAL' : 'FULL',
        ...(o.readOnly ? { readonly: true } : {}),
      });
      const file = db.file;
      db.close();
      if (o.json) json(io, { file, schemaVersion: SCHEMA_VERSION, created: !existed });
      else
        io.stdout(
          existed
            ? `${file} is a Runnel database (schema version ${SCHEMA_VERSION})\n`
            : `created ${file} (schema version ${SCHEMA_VERSION})\n`,
        );
      await Promise.resolve();
    },
  );

  common(
    program
      .command('validate')
      .argument('<file>', 'workflow file (JSON or YAML)')
      .description('check a workflow file and print every problem'),
  ).action(async (file: string, o: CommonOptions) => {
    const registry = await loadRegistry(o.plugin);
    try {
      const { workflow } = await readWorkflowFile(file, registry);
      if (o.json)
        json(io, {
          ok: true,
          name: workflow.name,
          nodes: workflow.nodes.length,
          edges: workflow.edges.length,
          problems: [],
        });
      else
        io.stdout(
          `${file}: valid workflow "${workflow.name}" (${workflow.nodes.length} nodes, ${workflow.edges.length} edges)\n`,
        );
    } catch (err) {
      if (o.json && err instanceof EngineError && err.code === 'INVALID_WORKFLOW') {
        json(io, {
          ok: false,
          problems: isProblemList(err.details)
            ? err.details
            : [{ code: 'SYNTAX', message: err.message, path: [] }],
        });
      }
      throw err;
    }
  });

  common(
    program
      .command('deploy')
      .argument('<file>', 'workflow file (JSON or YAML)')
      .description('save a workflow (a new version only when it changed)'),
  ).action(async (file: string, o: CommonOptions) => {
    const registry = await loadRegistry(o.plugin);
    const { raw } = await readWorkflowFile(file, registry);
    const engine = await openEngine(o, 'create', {}, registry);
    try {
      const r = await engine.deploy(raw);
      if (o.json) json(io, r);
      else
        io.stdout(
          r.created
            ? `deployed ${r.name} v${r.version}\n`
            : r.uiUpdated
              ? `${r.name} v${r.version}: definition unchanged (no new version); its designer positions (ui) were updated\n`
              : `${r.name} v${r.version} is unchanged (no new version)\n`,
        );
    } finally {
      await engine.close();
    }
  });

  common(
    program
      .command('start')
      .argument('<workflow>', 'workflow name')
      .description('start an instance of a deployed workflow')
      .option('--version <n>', 'workflow version (default: the latest)', positiveInt('--version'))
      .option('--vars <json>', 'initial variables, a JSON object')
      .option('--vars-file <file>', 'initial variables from a JSON file (--vars keys win)')
      .option('--business-key <key>', 'a key of your own to find the instance by')
      .option('--actor <name>', 'who starts it', defaultActor())
      .option('--wait', 'work the instance until it ends or needs a person; exit code by its status'),
  ).action(
    async (
      name: string,
      o: CommonOptions & {
        version?: number;
        vars?: string;
        varsFile?: string;
        businessKey?: string;
        actor: string;
        wait?: boolean;
      },
    ) => {
      const variables = parseVariables(o);
      const engine = await openEngine(o, 'write');
      try {
        const id = await engine.start(name, {
          version: o.version,
          variables,
          businessKey: o.businessKey,
          actor: o.actor,
        });
        if (!o.wait) {
          if (o.json) json(io, { id });
          else io.stdout(`started instance ${id} of ${name}\n`);
          return;
        }
        run.exitCode = await waitAndReport(engine, id, o, run);
      } finally {
        await engine.close();
      }
    },
  );

  common(
    program
      .command('run')
      .argument('<file>', 'workflow file (JSON or YAML)')
      .description('deploy a workflow, start it, and work it until it ends or waits for a person')
      .option('--vars <json>', 'initial variables, a JSON object')
      .option('--vars-file <file>', 'initial variables from a JSON file (--vars keys win)')
      .option('--business-key <key>', 'a key of your own to find the instance by')
      .option('--actor <name>', 'who starts it', defaultActor())
      .option('--concurrency <n>', 'handlers running at once', positiveInt('--concurrency')),
  ).action(
    async (
      file: string,
      o: CommonOptions & {
        vars?: string;
        varsFile?: string;
        businessKey?: string;
        actor: string;
        concurrency?: number;
      },
    ) => {
      const variables = parseVariables(o);
      const registry = await loadRegistry(o.plugin);
      const { raw, workflow } = await readWorkflowFile(file, registry);
      // Refused variables must not leave a database or a deployed workflow behind.
      checkVariables(workflow, variables ?? {});
      const engine = await openEngine(
        o,
        'create',
        o.concurrency === undefined ? {} : { concurrency: o.concurrency },
        registry,
      );
      try {
        const dep = await engine.deploy(raw);
        const id = await engine.start(dep.name, {
          version: dep.version,
          variables,
          businessKey: o.businessKey,
          actor: o.actor,
        });
        if (!o.json)
          io.stderr(
            `run: ${dep.created ? 'deployed' : 'using'} ${dep.name} v${dep.version}; started instance ${id}\n`,
          );
        run.exitCode = await waitAndReport(engine, id, o, run);
        if (!o.json) io.stderr(`details: npx runnel show ${id} --history --db ${shellQuote(o.db)}\n`);
      } finally {
        await engine.close();
      }
    },
  );

  common(
    program
      .command('worker')
      .description('work every instance in the database (until Ctrl-C, or until idle)')
      .option('--concurrency <n>', 'handlers running at once', positiveInt('--concurrency'), 32)
      .option('--until-idle', 'stop when no step is ready, retrying or on a timer (approvals do not count)'),
  ).action(async (o: CommonOptions & { concurrency: number; untilIdle?: boolean }) => {
    const engine = await openEngine(o, 'write', { concurrency: o.concurrency });
    const progress = new Progress(io, !o.json);
    const finished: Record<string, number> = {};
    let transitions = 0;
    const off = engine.on((e) => {
      if (e.type === 'node.changed') transitions++;
      if (e.type === 'instance.finished') finished[e.status] = (finished[e.status] ?? 0) + 1;
      if (e.type === 'instance.changed' && e.status === 'SUSPENDED')
        finished.SUSPENDED = (finished.SUSPENDED ?? 0) + 1;
    });
    const summary = () =>
      `worker: ${transitions} node transitions; instances ended: ${
        Object.entries(finished)
          .map(([k, v]) => `${v} ${k}`)
          .join(', ') || 'none'
      }`;
    let last = summary();
    const timer = setInterval(() => {
      const s = summary();
      if (s !== last) progress.line(s);
      last = s;
    }, 1000);
    const t0 = Date.now();
    let completed: boolean;
    try {
      if (!o.json)
        io.stderr(
          `worker: working ${engine.db.file} with concurrency ${o.concurrency}${o.untilIdle ? ' until idle' : ' (Ctrl-C stops)'}\n`,
        );
      completed = await workUntil(engine, () => (o.untilIdle ? engine.isIdle() : false), run.signal, 50);
    } finally {
      clearInterval(timer);
      off();
      await engine.close();
    }
    if (o.json) json(io, { transitions, finished, elapsedMs: Date.now() - t0, interrupted: !completed });
    else io.stderr(`${summary()} (${((Date.now() - t0) / 1000).toFixed(1)} s)\n`);
    run.exitCode = completed ? ExitCode.OK : ExitCode.INTERRUPTED;
  });

  common(
    program
      .command('list')
      .description('list instances, newest first')
      .option('--status <statuses>', `comma-separated statuses (${INSTANCE_STATUSES.join(', ')})`)
      .option('--workflow <name>', 'only instances of this workflow')
      .option('--limit <n>', 'at most this many (1–1000)', positiveInt('--limit'), 50)
      .option('--before <id>', 'only instances with a smaller id (paging)', positiveInt('--before')),
  ).action(
    async (o: CommonOptions & { status?: string; workflow?: string; limit: number; before?: number }) => {
      const status = o.status
        ?.split(',')
        .map((s) => s.trim().toUpperCase())
        .filter((s) => s !== '');
      const bad = status?.filter((s) => !(INSTANCE_STATUSES as readonly string[]).includes(s)) ?? [];
      if (bad.length > 0)
        throw usage(`--status: unknown status ${bad.join(', ')} (one of ${INSTANCE_STATUSES.join(', ')})`, {
          flag: '--status',
        });
      if (o.limit > 1000) throw usage(`--limit must be at most 1000 (got ${o.limit})`, { flag: '--limit' });
      const engine = await openEngine(o, 'read');
      try {
        const rows = engine.listInstances({
          status,
          workflow: o.workflow,
          limit: o.limit,
          beforeId: o.before,
        });
        if (o.json) return json(io, rows);
        if (rows.length === 0) return io.stdout('no instances\n');
        io.stdout(
          `${table([
            ['ID', 'WORKFLOW', 'STATUS', 'CREATED', 'ENDED', 'NOTE'],
            ...rows.map((r) => [
              String(r.id),
              `${r.workflow} v${r.workflowVersion}`,
              r.status,
              time(r.createdAt),
              time(r.endedAt),
              r.suspension
                ? `at ${(r.suspension as { nodeId?: string }).nodeId ?? '?'}: ${short(errorText((r.suspension as { error?: unknown }).error), 80)}`
                : r.error
                  ? short(errorText(r.error), 80)
                  : (r.businessKey ?? ''),
            ]),
          ])}\n`,
        );
      } finally {
        await engine.close();
      }
    },
  );

  common(
    program
      .command('show')
      .argument('<id>', 'instance id', instanceIdArg)
      .description('show an instance: status, nodes, variables, and what it waits for')
      .option('--history', 'also print its history, oldest first'),
  ).action(async (id: number, o: CommonOptions & { history?: boolean }) => {
    const engine = await openEngine(o, 'read');
    try {
      const inst = engine.getInstance(id);
      const history = o.history ? engine.history(id) : undefined;
      if (o.json) return json(io, history ? { ...inst, history } : inst);
      io.stdout(describeInstance(engine, inst, o.db));
      io.stdout(
        `created ${time(inst.createdAt)}, started ${time(inst.startedAt)}, ended ${time(inst.endedAt)}${inst.businessKey ? `, business key ${inst.businessKey}` : ''}\n`,
      );
      io.stdout(`variables: ${short(inst.variables, 2000)}\n`);
      if (history) {
        io.stdout('history:\n');
        io.stdout(
          `${table(
            history.map((h) => [
              `  ${h.id}`,
              time(h.at),
              h.nodeId ?? '-',
              h.type,
              h.attempt === null ? '' : `attempt ${h.attempt}`,
              h.actor ? `by ${h.actor}` : '',
              h.data === undefined ? '' : short(h.data, 160),
            ]),
          )}\n`,
        );
      }
    } finally {
      await engine.close();
    }
  });

  common(
    program
      .command('resume')
      .argument('<id>', 'instance id', instanceIdArg)
      .description('resume a SUSPENDED instance: retry the failed step, skip it with a result, or fail')
      .addOption(
        new Option('--action <action>', 'what to do')
          .choices(['retry', 'skip', 'fail'])
          .makeOptionMandatory(),
      )
      .option('--result <json>', "for skip: the failed step's result (JSON)")
      .option('--vars <json>', 'variables to merge into the globals first (a JSON object)')
      .option('--vars-file <file>', 'variables to merge, from a JSON file (--vars keys win)')
      .option('--actor <name>', 'who acts (recorded in history)', defaultActor())
      .option('--wait', 'work the instance until it ends or needs a person; exit code by its status'),
  ).action(
    async (
      id: number,
      o: CommonOptions & {
        action: 'retry' | 'skip' | 'fail';
        result?: string;
        vars?: string;
        varsFile?: string;
        actor: string;
        wait?: boolean;
      },
    ) => {
      const edits = parseVariables(o);
      const result = o.result === undefined ? undefined : parseJsonFlag('--result', o.result);
      if (result !== undefined && o.action !== 'skip')
        throw usage('--result is only for --action skip', { flag: '--result' });
      const engine = await openEngine(o, 'write');
      try {
        const inst = engine.getInstance(id);
        await engine.resume(id, {
          action: o.action,
          result,
          variables: edits === undefined ? undefined : { ...inst.variables, ...edits },
          expectedVersion: inst.version,
          actor: o.actor,
        });
        await reportAfterAction(engine, id, o, run, (status) =>
          `instance ${id}: ${o.action} recorded; now ${status}${status === 'RUNNING' || status === 'COMPENSATING' ? CARRIES_ON : ''}`,
        );
      } finally {
        await engine.close();
      }
    },
  );

  common(
    program
      .command('approve')
      .argument('<id>', 'instance id', instanceIdArg)
      .argument('<node>', 'the approval node id')
      .description('decide an approval an instance waits for')
      .option('--approve', 'approve')
      .option('--reject', 'reject')
      .option('--data <json>', 'data attached to the decision (JSON)')
      .option('--comment <text>', 'a comment kept with the decision')
      .option('--actor <name>', 'who decides (recorded in history)', defaultActor())
      .option('--wait', 'work the instance until it ends or needs a person; exit code by its status'),
  ).action(
    async (
      id: number,
      node: string,
      o: CommonOptions & {
        approve?: boolean;
        reject?: boolean;
        data?: string;
        comment?: string;
        actor: string;
        wait?: boolean;
      },
    ) => {
      if (Boolean(o.approve) === Boolean(o.reject)) throw usage('give exactly one of --approve or --reject');
      const data = o.data === undefined ? undefined : parseJsonFlag('--data', o.data);
      const engine = await openEngine(o, 'write');
      try {
        await engine.approve(id, node, {
          approved: o.approve === true,
          data,
          comment: o.comment,
          actor: o.actor,
        });
        await reportAfterAction(engine, id, o, run, (status) => `instance ${id}: "${node}" ${o.approve ? 'approved' : 'rejected'}; now ${status}${CARRIES_ON}`);
      } finally {
        await engine.close();
      }
    },
  );

  common(
    program
      .command('cancel')
      .argument('<id>', 'instance id', instanceIdArg)
      .description('cancel a live instance')
      .option('--compensate', 'run the compensations of completed steps first')
      .option('--actor <name>', 'who cancels (recorded in history)', defaultActor())
      .option('--wait', 'with --compensate: work the compensations until the instance ends'),
  ).action(async (id: number, o: CommonOptions & { compensate?: boolean; actor: string; wait?: boolean }) => {
    const engine = await openEngine(o, 'write');
    try {
      await engine.cancel(id, { compensate: o.compensate === true, actor: o.actor });
      await reportAfterAction(engine, id, o, run, (status) =>
        `instance ${id}: ${status}${status === 'COMPENSATING' ? ' (compensations run when a worker runs: npx runnel worker, or pass --wait)' : ''}`,
      );
    } finally {
      await engine.close();
    }
  });

  common(
    program
      .command('export')
      .argument('<workflow>', 'workflow name')
      .description('print a workflow version as DSL JSON (lossless; ui positions included)')
      .option('--version <n>', 'workflow version (default: the latest)', positiveInt('--version'))
      .option('-o, --output <file>', 'write to this file instead of stdout'),
  ).action(async (name: string, o: CommonOptions & { version?: number; output?: string }) => {
    if (o.output !== undefined) checkOutputFile(o.output);
    const engine = await openEngine(o, 'read');
    try {
      const wf = engine.getWorkflow(name, o.version);
      const text = `${JSON.stringify(engine.exportWorkflow(name, wf.version), null, 2)}\n`;
      if (o.output === undefined) return io.stdout(text);
      try {
        await fs.promises.writeFile(o.output, text);
      } catch (err) {
        throw outputFileError(o.output, err);
      }
      if (o.json) json(io, { name, version: wf.version, file: path.resolve(o.output) });
      else io.stdout(`exported ${name} v${wf.version} to ${o.output}\n`);
    } finally {
      await engine.close();
    }
  });

  common(
    program
      .command('demo')
      .description(
        'run the examples: an OTA fleet upgrade, a purchase approval and a CSV pipeline, with a summary',
      )
      .option('--devices <n>', 'devices in the simulated fleet', positiveInt('--devices'), 20),
  ).action(async (o: CommonOptions & { devices: number }) => {
    probeDatabase(o.db, false);
    const { runExamples } = await import('../examples/run-examples');
    const { exitCode, summary } = await runExamples({
      db: o.db,
      synchronous: o.sync === 'normal' ? 'NORMAL' : 'FULL',
      devices: o.devices,
      progress: o.json ? undefined : (line) => io.stderr(`${line}\n`),
      signal: run.signal,
    });
    if (o.json) json(io, summary);
    else io.stdout(summary.report);
    run.exitCode = exitCode;
  });

  common(
    program
      .command('serve')
      .description(
        'serve the app to a browser: the API and the built renderer on 127.0.0.1 with a per-run token, plus the worker loop (until Ctrl-C)',
      )
      .option('--port <n>', 'TCP port on 127.0.0.1 (0 picks a free one)', portNumber, 0)
      .option('--open', 'open the app in the system browser'),
  ).action(async (o: CommonOptions & { port: number; open?: boolean }) => {
    const engine = await openEngine(o, 'create');
    let server: Awaited<ReturnType<ServeModule['startServer']>>;
    try {
      const { startServer } = (await import(SERVER_MODULE)) as ServeModule;
      server = await startServer({ engine, port: o.port });
    } catch (err) {
      await engine.close();
      if ((err as { code?: unknown }).code === 'EADDRINUSE') {
        throw new EngineError('CONFLICT', `port ${o.port} on 127.0.0.1 is in use (pick another with --port, or 0)`, { kind: 'user' });
      }
      throw err;
    }
    if (o.json) json(io, { url: server.url, port: server.port, token: server.token, db: engine.db.file });
    else {
      io.stderr(`serve: ${engine.db.file} on 127.0.0.1:${server.port}, worker running (Ctrl-C stops)\n`);
      io.stdout(`${server.url}\n`);
    }
    if (o.open) openBrowser(server.url, io);
    await new Promise<void>((resolve) => {
      if (run.signal.aborted) resolve();
      else run.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    // Stop serving and claiming, let running handlers finish (or release their leases), then
    // checkpoint and close the file.
    try {
      await server.close();
    } finally {
      await engine.close();
    }
    if (!o.json) io.stderr('serve: stopped\n');
    // Like `worker`, serve ends only by a signal: 130, as the module comment says.
    run.exitCode = ExitCode.INTERRUPTED;
  });

  return program;
}

/** Works instance `id` until it settles, prints it, and returns the exit code of its status. */
const CARRIES_ON = ' (a worker carries it on: npx runnel worker, or pass --wait)';

/**
 * What resume, approve and cancel print after their action: with `--wait`, work the instance and
 * set the exit code from its end; otherwise the instance (`--json`) or one line from `describe`.
 */
async function reportAfterAction(
  engine: Engine,
  id: number,
  o: CommonOptions & { wait?: boolean },
  run: CliRun,
  describe: (status: string) => string,
): Promise<void> {
  if (o.wait) {
    run.exitCode = await waitAndReport(engine, id, o, run);
    return;
  }
  const after = engine.getInstance(id);
  if (o.json) json(run.io, after);
  else run.io.stdout(`${describe(after.status)}\n`);
}

async function waitAndReport(engine: Engine, id: number, o: CommonOptions, run: CliRun): Promise<number> {
  const progress = new Progress(run.io, !o.json);
  const off = followInstance(engine, progress, () => id);
  let settled: boolean;
  try {
    settled = await workUntil(engine, () => engine.isSettled(id), run.signal);
  } finally {
    off();
    progress.flush();
  }
  const inst = engine.getInstance(id);
  if (o.json) json(run.io, inst);
  else run.io.stdout(describeInstance(engine, inst, o.db));
  if (!settled) {
    run.io.stderr(
      `interrupted: instance ${id} is ${inst.status}; a worker carries it on (npx runnel worker --db ${shellQuote(o.db)})\n`,
    );
    return ExitCode.INTERRUPTED;
  }
  return exitCodeForStatus(inst.status);
}

/**
 * Runs the CLI on `argv` (process.argv-shaped: node, script, args…) and returns the exit code.
 * Never throws; never calls process.exit. SIGINT / SIGTERM stop long commands cleanly (130);
 * a second signal exits at once.
 */
export async function main(argv: readonly string[], io: CliIo = processIo): Promise<number> {
  const controller = new AbortController();
  const run: CliRun = { io, exitCode: ExitCode.OK, signal: controller.signal };
  // Console output (the worker's own warnings) goes to these streams too.
  if (io === processIo) {
    guardStream(process.stdout);
    guardStream(process.stderr);
  }
  const onSignal = () => {
    if (controller.signal.aborted) process.exit(ExitCode.INTERRUPTED);
    io.stderr('\nstopping… (again to quit at once)\n');
    controller.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    await buildProgram(run).parseAsync([...argv], { from: 'node' });
    return run.exitCode;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? ExitCode.OK : ExitCode.USAGE;
    return reportError(err, io);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
