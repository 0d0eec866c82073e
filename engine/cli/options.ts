/**
 * Command-line options: the flags every command takes, and the parsing of numbers, ids and JSON
 * values. A bad value is a user error (exit 2) naming its flag; nothing is opened before the
 * flags are parsed.
 */
import os from 'node:os';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { LIMITS } from '../api/contract';
import { EngineError } from '../errors';
import { isPostgresUrl, redactUrl } from '../db/postgres/errors';
import { describeValueProblem, findValueProblem, formatValuePath } from '../dsl/value-limits';
import { readTextFile } from './files';
import type { CliIo } from './output';

/** State shared by the commands of one `main` call. */
export interface CliRun {
  io: CliIo;
  /** Set by the command that ran. */
  exitCode: number;
  /** Aborted on SIGINT / SIGTERM: long commands stop their worker and return 130. */
  signal: AbortSignal;
  /** The command line asks for `--json`: errors, usage errors included, are one JSON line on stderr. */
  json?: boolean;
}

/** Options every command takes (see {@link common}). */
export interface CommonOptions {
  db: string;
  json?: boolean;
  sync: 'full' | 'normal';
  plugin: string[];
  readOnly?: boolean;
}

/** A user error of bad command-line input: INVALID_INPUT, exit 2. */
export function usage(message: string, details?: unknown): EngineError {
  return new EngineError('INVALID_INPUT', message, { kind: 'user', retryable: false, details });
}

/**
 * Why `value` is not a positive safe integer (1 … 2^53−1), or undefined when it is: not digits or
 * zero ("a positive integer"), or digits above 2^53−1 ("too large": JavaScript numbers hold whole
 * numbers exactly only up to there, and ids never get that high).
 */
function positiveIntProblem(value: string): string | undefined {
  if (!/^\d+$/.test(value) || !/[1-9]/.test(value)) return `a positive integer (got "${value}")`;
  if (!Number.isSafeInteger(Number(value))) return `at most ${Number.MAX_SAFE_INTEGER} (2^53−1): "${value}" is too large`;
  return undefined;
}

/** A commander parser of a positive safe integer, naming `flag` when the value is not one (or is too large). */
export function positiveInt(flag: string) {
  return (value: string): number => {
    const problem = positiveIntProblem(value);
    if (problem) throw new InvalidArgumentError(`${flag} must be ${problem}`);
    return Number(value);
  };
}

/** A commander parser of an integer from `min` to `max` (negative ones too), named `flag` in its error. */
export function integerIn(flag: string, min: number, max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^[-+]?\d+$/.test(value.trim()) || n < min || n > max) {
      throw new InvalidArgumentError(`${flag} must be an integer from ${min} to ${max} (got "${value}")`);
    }
    return n;
  };
}

/** A commander parser of a TCP port, 0–65535. */
export function portNumber(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 65_535) {
    throw new InvalidArgumentError(`--port must be 0–65535 (got "${value}")`);
  }
  return Number(value);
}

/** A commander parser of an instance id argument: a positive safe integer (one above 2^53−1 is said to be too large). */
export function instanceIdArg(value: string): number {
  const problem = positiveIntProblem(value);
  if (problem) throw new InvalidArgumentError(`an instance id is ${problem}`);
  return Number(value);
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** Who acts when `--actor` is not given: the OS user name, else `cli`. */
export function defaultActor(): string {
  try {
    return os.userInfo().username || 'cli';
  } catch {
    return 'cli';
  }
}

function describeJsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

/**
 * Parses a flag's JSON value, refused where any value is refused (engine/dsl/value-limits.ts):
 * nested too deep, a `__proto__` key, or a number JSON cannot keep (`1e999` parses to Infinity,
 * which would be stored as null).
 *
 * @param code the error of a value refused that way: INVALID_INPUT (default), or
 *   INVALID_VARIABLES for `--vars` / `--vars-file`, with `details` `[{ field, message }]` as
 *   checkVariables gives them.
 * @throws EngineError INVALID_INPUT naming the flag (not JSON), or `code` naming the flag and the path.
 */
export function parseJsonFlag(flag: string, text: string, code: 'INVALID_INPUT' | 'INVALID_VARIABLES' = 'INVALID_INPUT'): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (err) {
    throw usage(`${flag} is not valid JSON: ${(err as Error).message}`, { flag });
  }
  const problem = findValueProblem(value);
  if (problem) {
    const message = describeValueProblem(flag, problem);
    throw new EngineError(code, message, {
      kind: 'user',
      retryable: false,
      details: code === 'INVALID_VARIABLES' ? [{ field: formatValuePath(problem.path), message: describeValueProblem('the value', problem) }] : { flag, path: problem.path },
    });
  }
  return value;
}

function jsonObjectFlag(flag: string, value: unknown): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw usage(`${flag} must be a JSON object such as '{"deviceId":"dev-01"}', got ${describeJsonType(value)}`, { flag });
  }
  return value as Record<string, unknown>;
}

/**
 * The variables of `--vars-file F` and `--vars JSON`: both must hold a JSON object; `--vars`
 * keys win. `undefined` when neither was given. The file is read as every input file is
 * (engine/cli/files.ts), with the contract's limit for values.
 *
 * @throws EngineError INVALID_INPUT naming the flag.
 */
export async function parseVariables(opts: { vars?: string; varsFile?: string }): Promise<Record<string, unknown> | undefined> {
  let out: Record<string, unknown> | undefined;
  if (opts.varsFile !== undefined) {
    const text = await readTextFile(opts.varsFile, { flag: '--vars-file', limitBytes: LIMITS.valueBytes });
    out = jsonObjectFlag('--vars-file', parseJsonFlag('--vars-file', text, 'INVALID_VARIABLES'));
  }
  if (opts.vars !== undefined) out = { ...out, ...jsonObjectFlag('--vars', parseJsonFlag('--vars', opts.vars, 'INVALID_VARIABLES')) };
  return out;
}

/** `--db` as messages and suggested commands show it: a PostgreSQL URL without its password. */
export function shownDb(db: string): string {
  return isPostgresUrl(db) ? redactUrl(db) : db;
}

/** The options every command takes ({@link common}), with whether each takes a value. */
const COMMON_OPTIONS: ReadonlyMap<string, boolean> = new Map([
  ['--db', true],
  ['--json', false],
  ['--sync', true],
  ['--plugin', true],
  ['--read-only', false],
]);

/**
 * `args` (the words after the program, as typed) with the options every command takes moved from
 * before the command to the end (`runnel --db x.db list` as `runnel list --db x.db`, as `git -C`
 * users type it): each command declares them itself. Words after a `--` stay as they are; a word
 * before the command that is no such option leaves everything as typed (commander names it).
 */
export function commonOptionsLast(args: readonly string[]): string[] {
  const moved: string[] = [];
  let i = 0;
  while (i < args.length) {
    const word = args[i] as string;
    const name = word.includes('=') ? word.slice(0, word.indexOf('=')) : word;
    const takesValue = COMMON_OPTIONS.get(name);
    if (takesValue === undefined) break;
    const n = takesValue && !word.includes('=') ? 2 : 1;
    moved.push(...args.slice(i, i + n));
    i += n;
  }
  if (moved.length === 0 || i >= args.length) return [...args];
  const rest = args.slice(i);
  const dashes = rest.indexOf('--');
  return dashes < 0 ? [...rest, ...moved] : [...rest.slice(0, dashes), ...moved, ...rest.slice(dashes)];
}

/**
 * Adds the options every command takes: `--db` (a file or a PostgreSQL URL; default `RUNNEL_DB`,
 * else `./runnel.db`), `--json`, `--sync`, `--plugin`, `--read-only`.
 */
export function common(cmd: Command): Command {
  return cmd
    .addOption(
      new Option('--db <file|url>', 'database: a SQLite file, or a postgres://user@host:port/db URL (PostgreSQL)')
        .env('RUNNEL_DB')
        .default('./runnel.db'),
    )
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
 * A commander collector of repeatable `--pin <node>=<json>`: each value split at its first `=`
 * into a node id and a JSON result, added to the pins so far.
 *
 * @throws EngineError INVALID_INPUT naming `--pin`: no `=`, an empty node id, a node pinned twice,
 *   or a result that is not JSON (or is refused as {@link parseJsonFlag} refuses it).
 */
export function collectPin(value: string, pins: Record<string, unknown> = {}): Record<string, unknown> {
  const at = value.indexOf('=');
  if (at <= 0) throw usage(`--pin must be <node id>=<JSON result>, e.g. --pin fetch='{"status":200}' (got "${value}")`, { flag: '--pin' });
  const nodeId = value.slice(0, at);
  if (Object.hasOwn(pins, nodeId)) throw usage(`--pin: node "${nodeId}" is pinned twice`, { flag: '--pin', nodeId });
  return { ...pins, [nodeId]: parseJsonFlag(`--pin ${nodeId}`, value.slice(at + 1)) };
}
