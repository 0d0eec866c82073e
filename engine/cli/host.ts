/**
 * The CLI as a host of the engine, like the desktop app and the browser host: it opens the file,
 * builds the contract's handlers over the engine, and makes every data operation a `dispatch`
 * through them, so a command answers what the API answers (the same checks, errors and texts).
 * Only host work with no channel (the worker loop, waiting for an instance to settle, events for
 * progress) uses the Engine's public methods. No SQL here: the file is checked by
 * `probeDatabase` and opened by the engine (engine/db/open-database.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Engine, EngineError, ErrorCodes, type EngineOptions, type ErrorCode } from '../api';
import { LIMITS, type ApiError, type Channel, type Input, type Output } from '../api/contract';
import { createHandlers, dispatch } from '../api/handlers';
import { probeDatabase } from '../db/open-database';
import { debugEnabled } from '../debug';
import { createDefaultRegistry, type AnyNodeType, type NodeRegistry } from '../nodes/index';
import { HostCallError } from './exit-codes';
import { readTextFile } from './files';
import { usage, type CommonOptions } from './options';
import type { CliIo } from './output';

/** A typed contract call that answers the channel's value, or throws its error. */
export type Call = <C extends Channel>(channel: C, input: Input<C>) => Promise<Output<C>>;

/** The host codes a caller's input causes (exit 2); others (UNKNOWN_CHANNEL) are the host's fault. */
const USER_HOST_CODES: ReadonlySet<string> = new Set(['BAD_REQUEST', 'PAYLOAD_TOO_LARGE']);

/**
 * The error a failed call is thrown as: an EngineError for the engine's codes (a corrupt file is
 * the user's to fix, as the README's exit codes say), a {@link HostCallError} for the host's.
 */
function callError(e: ApiError): Error {
  if (Object.hasOwn(ErrorCodes, e.code)) {
    const code = e.code as ErrorCode;
    return new EngineError(code, e.message, { details: e.details, ...(code === 'DATABASE_CORRUPT' ? { kind: 'user' } : {}) });
  }
  return new HostCallError(e.code, e.message, e.details, USER_HOST_CODES.has(e.code));
}

/**
 * The contract's handlers over `engine`, as one typed {@link Call}. An unexpected error's stack
 * goes to stderr only with `RUNNEL_DEBUG=1` (engine/debug.ts); the message always reaches the user as INTERNAL.
 */
export function clientOf(engine: Engine, io: CliIo): Call {
  const handlers = createHandlers(engine);
  const log = (message: string, error: unknown) => {
    if (debugEnabled()) io.stderr(`${message}: ${error instanceof Error ? (error.stack ?? error.message) : JSON.stringify(error)}\n`);
  };
  return async <C extends Channel>(channel: C, input: Input<C>): Promise<Output<C>> => {
    const r = await dispatch(handlers, channel, input, { log });
    if (!r.ok) throw callError(r.error);
    return r.value as Output<C>;
  };
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
    else if (Array.isArray(mod.nodeTypes)) for (const t of mod.nodeTypes as AnyNodeType[]) registry.register(t);
    else throw usage(`--plugin ${plugin}: exports neither register(registry) nor nodeTypes`, { flag: '--plugin' });
  }
  return registry;
}

/**
 * What a command does with the database: `read` (an existing file, read-only is fine), `write`
 * (an existing file it changes) or `create` (changes it, creating it when missing).
 */
export type DbAccess = 'read' | 'write' | 'create';

/** An engine over the `--db` file, and the contract's calls over it. */
export interface Host {
  engine: Engine;
  call: Call;
}

/**
 * Checks the `--db` path ({@link probeDatabase}) and opens an engine on it.
 *
 * @throws EngineError as probeDatabase and Engine.open do; DATABASE_READONLY when the command
 *   changes the file but it is open read-only.
 */
export async function openHost(
  o: CommonOptions,
  io: CliIo,
  access: DbAccess,
  extra: EngineOptions = {},
  registry?: NodeRegistry,
): Promise<Host> {
  const reg = registry ?? (await loadRegistry(o.plugin));
  const mustExist = access !== 'create';
  probeDatabase(o.db, { mustExist });
  const engine = Engine.open(o.db, {
    registry: reg,
    synchronous: o.sync === 'normal' ? 'NORMAL' : 'FULL',
    mustExist,
    ...(o.readOnly ? { readonly: true } : {}),
    ...extra,
  });
  if (access !== 'read' && engine.storage.readonly) {
    await engine.close();
    throw new EngineError(
      'DATABASE_READONLY',
      `${engine.storage.location} is open read-only (${o.readOnly ? '--read-only was given' : 'the file or its directory is not writable'}), and this command changes it; list, show and export still work`,
      { retryable: false },
    );
  }
  return { engine, call: clientOf(engine, io) };
}

/** Opens a host on `--db` for `use`, and closes it (stopping any work) whatever `use` does. */
export async function withHost<T>(
  o: CommonOptions,
  io: CliIo,
  access: DbAccess,
  use: (host: Host) => Promise<T>,
  extra: EngineOptions = {},
  registry?: NodeRegistry,
): Promise<T> {
  const host = await openHost(o, io, access, extra, registry);
  try {
    return await use(host);
  } finally {
    await host.engine.close();
  }
}

/**
 * Runs `use` on a scratch engine in memory, with `registry`: the engine's own checks (parsing,
 * validation, the variables a start accepts) run before the `--db` file is touched, so bad input
 * writes nothing to it.
 */
export async function rehearse<T>(registry: NodeRegistry, io: CliIo, use: (call: Call) => Promise<T>): Promise<T> {
  const scratch = Engine.open(':memory:', { registry, checkWorkflowCalls: false });
  try {
    return await use(clientOf(scratch, io));
  } finally {
    await scratch.close();
  }
}

/** A workflow file read and checked by the engine: its definition, as the file gives it. */
export interface WorkflowFile {
  definition: { name: string; nodes: unknown[]; edges?: unknown[] } & Record<string, unknown>;
}

/**
 * Reads a workflow file (JSON or YAML, at most the contract's definition limit, UTF-8) and
 * checks it with `workflow:import` on `call` (a scratch engine: see {@link rehearse}).
 *
 * @throws EngineError NOT_FOUND (cannot read it), INVALID_INPUT (not a regular UTF-8 file within
 *   the limit), INVALID_WORKFLOW (a syntax error naming line and column, or every problem in
 *   `details`).
 */
export async function readWorkflowFile(file: string, call: Call): Promise<WorkflowFile> {
  const text = await readTextFile(file, { what: 'workflow file', limitBytes: LIMITS.definitionBytes, unreadableCode: 'NOT_FOUND' });
  // The contract bounds a file name; a longer path keeps its end (and so its extension).
  const fileName = file.length <= LIMITS.fileName ? file : `…${file.slice(-(LIMITS.fileName - 1))}`;
  const r = await call('workflow:import', { text, fileName });
  if (!r.ok) {
    const n = r.problems.length;
    throw new EngineError('INVALID_WORKFLOW', `${file}: ${n} problem${n === 1 ? '' : 's'}`, { details: r.problems });
  }
  return { definition: r.definition as WorkflowFile['definition'] };
}

/**
 * Works `engine` (the worker loop and its checkpointer thread) until `done()` or until `signal`
 * aborts, with the engine's own `runUntil`. Returns whether `done()` was reached; the worker is
 * stopped (claims committed or released) before this returns.
 */
export async function workUntil(engine: Engine, done: () => boolean | Promise<boolean>, signal: AbortSignal): Promise<boolean> {
  let reached = false;
  engine.startWorker();
  try {
    await engine.runUntil(async () => (reached = await done()) || signal.aborted, undefined, { pollMs: 20 });
  } finally {
    await engine.stopWorker();
  }
  return reached;
}
