/**
 * The `script` node type's sandbox: QuickJS (WebAssembly) runtimes with a memory limit, a stack
 * limit and an interrupt handler for the time limit and `ctx.signal`.
 *
 * This module is what a pool thread loads to run a script (its {@link execute} is the thread
 * module's entry, see thread-pool.ts): the sandbox is synchronous, and on its own thread a
 * runaway script holds nothing but that thread. The node type (script.ts) runs it on the
 * calling thread only for a custom module ({@link executeOn}).
 *
 * The sandbox has the language and its built-ins only: no `process`, `require`, `fetch`, timers,
 * file system or network (DESIGN.md "Rules pinned": scripts can never reach the host). Data goes
 * in and out as JSON text, so no host object is ever reachable from the script.
 *
 * Each execution gets a fresh QuickJS runtime and context (nothing leaks between runs). The
 * WebAssembly modules are pooled per thread, one per memory limit: each has a WebAssembly memory
 * capped at its base plus that limit, which is what bounds the host's memory (script-heap.ts).
 */
import type { QuickJSContext, QuickJSHandle, QuickJSRuntime } from 'quickjs-emscripten';
import { EngineError } from '../errors';
import { abortError, throwIfAborted } from './abort';
import {
  dropSandbox,
  hasRoom,
  pooledSandbox,
  releaseReserve,
  takeReserve,
  type QuickJSModuleLike,
  type Sandbox,
} from './script-heap';
import { ENDS_EARLY, SCRIPT_LIMITS, WRAP_PREFIX, scriptLocation, wrapScript, type ScriptLocation } from './script-config';
import type { ScriptConfig } from './script';
import type { NodeContext, NodeResult } from './types';

export type { QuickJSModuleLike };

const MIB = 1024 * 1024;

export { SCRIPT_LIMITS, WRAP_PREFIX };

/**
 * A script's data as JSON texts: how it crosses to its thread (a string clones as one copy, and
 * a thread's heap then holds strings rather than object graphs) and into the sandbox.
 */
export interface ScriptData {
  input: string;
  variables: string;
  steps: string;
}

/** The config a script's thread module gets: the node's config and its data as JSON texts. */
export type ScriptThreadConfig = ScriptConfig & { data: ScriptData };

/**
 * The attempt's input, variables and steps as JSON texts.
 *
 * @throws EngineError INVALID_INPUT (non-retryable) naming the part that is not JSON (a BigInt,
 * a cycle).
 */
export function scriptData(ctx: NodeContext<ScriptConfig>): ScriptData {
  return {
    input: jsonText('input', ctx.input),
    variables: jsonText('variables', ctx.variables),
    steps: jsonText('steps', ctx.steps),
  };
}

/**
 * The memory-limit error of data that cannot fit the sandbox whatever it holds (copying a text in
 * takes about three times its UTF-8 size, and UTF-8 has at least a byte per character), or
 * undefined. Checked before the data goes to a thread, so a thread never gets texts far bigger
 * than its script could use.
 */
export function dataTooBig(data: ScriptData, memoryLimitBytes: number): EngineError | undefined {
  const fits = (text: string) => 3 * text.length <= memoryLimitBytes + MIB;
  if (fits(data.input) && fits(data.variables) && fits(data.steps)) return undefined;
  return memoryLimitError(memoryLimitBytes, 'no room for its input, variables and steps');
}

/**
 * Runs one attempt on this thread's pooled module for the script's memory limit: the thread
 * module's `execute` (see thread-pool.ts). A module that crashed or whose script filled its
 * memory is dropped and the next attempt gets a fresh one.
 *
 * Gets its data as JSON texts in `config.data` and returns the result as JSON text in `output`:
 * the engine's thread parses it (a parsed result can take many times its text's memory, and the
 * engine's heap is the one sized for results).
 *
 * @throws EngineError as `createScriptNodeType` (script.ts) describes.
 */
export async function execute(ctx: NodeContext<ScriptThreadConfig>): Promise<NodeResult> {
  throwIfAborted(ctx.signal, 'script');
  const { memoryLimitBytes } = ctx.config;
  const entry = pooledSandbox(memoryLimitBytes);
  const sandbox = await entry.loading;
  throwIfAborted(ctx.signal, 'script');
  const health: RunHealth = { crashed: false, outOfMemory: false };
  const run = runScript(sandbox, ctx, ctx.config.data, health);
  // A module whose script filled its memory is dropped, so the pages it touched are freed rather
  // than kept resident by the pool; a crashed one is in an unknown state.
  const reusable = !health.crashed && !health.outOfMemory && sandbox.heap !== undefined && takeReserve(sandbox.heap);
  if (!reusable) dropSandbox(memoryLimitBytes, entry);
  if ('error' in run) throw run.error;
  return { output: run.json };
}

/**
 * Runs one attempt on `module`, on the calling thread (a custom module: QuickJS's own memory
 * accounting only, no capped heap), and parses its result. After a "sandbox crashed" error the
 * module must not be used again.
 *
 * @throws EngineError as `createScriptNodeType` (script.ts) describes.
 */
export function executeOn(module: QuickJSModuleLike, ctx: NodeContext<ScriptConfig>): NodeResult {
  throwIfAborted(ctx.signal, 'script');
  const run = runScript({ module }, ctx, scriptData(ctx), { crashed: false, outOfMemory: false });
  if ('error' in run) throw run.error;
  return { output: parseScriptResult(run.json) };
}

/** The error of a script over its memory limit; `what` says where, when it did not run yet. */
function memoryLimitError(memoryLimitBytes: number, what?: string, thrown?: string): EngineError {
  const message = `script exceeded its memory limit of ${memoryLimitBytes} bytes`;
  return new EngineError('SCRIPT_ERROR', what === undefined ? message : `${message} (${what})`, {
    retryable: false,
    details: { memoryLimitBytes, ...(thrown !== undefined && { thrown }) },
  });
}

/** The result as JSON text (`null` for undefined), or the error. */
type RunOutcome = { json: string } | { error: EngineError };

/** What an execution left behind: whether its module may run the next script. */
interface RunHealth {
  /** A host-level exception left the module's memory in an unknown state. */
  crashed: boolean;
  /** The script ran out of memory (its module's heap is full of touched pages). */
  outOfMemory: boolean;
}

/** What the script threw, read inside the sandbox so no getter can reach the host. */
interface ThrownInfo {
  name?: string;
  message: string;
  stack?: string;
  line?: number;
}

/** How the sandbox writes a number JSON cannot keep in a result: this prefix, then `Infinity`, `-Infinity` or `NaN`. */
const NON_FINITE_MARK = '\u0000runnel:non-finite:';

/**
 * A script's result from the JSON text the sandbox wrote. Text that starts with `!` (never valid
 * JSON; a NUL would end the C string QuickJS hands over) holds numbers JSON cannot keep, written as {@link NON_FINITE_MARK} strings: they are read
 * back as the numbers, so the engine refuses the result as INVALID_RESULT naming their path
 * (engine/dsl/value-limits.ts) instead of storing null.
 */
export function parseScriptResult(json: string): unknown {
  if (!json.startsWith('!')) return JSON.parse(json) as unknown;
  return JSON.parse(json.slice(1), (_key, v: unknown) =>
    typeof v === 'string' && v.startsWith(NON_FINITE_MARK) ? Number(v.slice(NON_FINITE_MARK.length)) : v,
  ) as unknown;
}

/**
 * Runs in the sandbox before the user's code, while the globals are still pristine: installs
 * `console` over a host `emit(level, text)` and returns helpers that use the original
 * `JSON.parse` / `JSON.stringify`, so a script that replaces them cannot confuse the runner.
 */
const PRELUDE = `(function (emit) {
  'use strict';
  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const text = (value) => {
    if (typeof value === 'string') return value;
    try { const json = stringify(value); if (json !== undefined) return json; } catch (e) {}
    try { return String(value); } catch (e) { return '[unprintable]'; }
  };
  const logger = (level) => (...args) => { emit(level, args.map(text).join(' ')); };
  globalThis.console = Object.freeze({
    log: logger('info'), info: logger('info'), debug: logger('debug'),
    warn: logger('warn'), error: logger('error'),
  });
  const call = (fn, input, variables, steps) => fn(parse(input), parse(variables), parse(steps));
  // JSON writes Infinity and NaN as null: a result holding one is sent marked (see parseScriptResult),
  // so the engine refuses it with its path instead of storing null. Only text with a null is looked at twice.
  const finite = Number.isFinite;
  const toJson = (value) => {
    const json = stringify(value);
    if (typeof json !== 'string' || json.indexOf('null') < 0) return json;
    let found = false;
    const marked = stringify(value, (key, v) => {
      if (typeof v !== 'number' || finite(v)) return v;
      found = true;
      return ${JSON.stringify(NON_FINITE_MARK)} + String(v);
    });
    return found ? '!' + marked : json;
  };
  const describe = (error) => {
    try {
      if (error !== null && typeof error === 'object') {
        const { name, message, stack, lineNumber } = error;
        return stringify({
          name: typeof name === 'string' ? name : undefined,
          message: typeof message === 'string' ? message : text(error),
          stack: typeof stack === 'string' ? stack : undefined,
          line: typeof lineNumber === 'number' ? lineNumber : undefined,
        });
      }
      return stringify({ message: text(error) });
    } catch (e) {
      return '{"message":"(the thrown value could not be read)"}';
    }
  };
  return [call, toJson, describe];
})`;

/** Extra memory granted after the script stopped, so its error can still be read. */
const READ_ERROR_SLACK_BYTES = 1 * MIB;

function jsonText(what: string, value: unknown): string {
  try {
    return JSON.stringify(value) ?? 'null';
  } catch (err) {
    throw new EngineError('INVALID_INPUT', `script ${what} is not JSON: ${(err as Error).message}`, {
      retryable: false,
      cause: err,
    });
  }
}

/**
 * One execution: fresh runtime and context, every handle disposed before they are.
 *
 * Synchronous on purpose: nothing else may touch the module while a runtime of it is live.
 * A host-level exception out of QuickJS (V8 stack overflow inside WebAssembly, an Emscripten
 * abort) leaves the module's memory in an unknown state: then nothing is disposed (disposing
 * could abort again) and `health.crashed` tells the caller to drop the module.
 */
function runScript(sandbox: Sandbox, ctx: NodeContext<ScriptConfig>, data: ScriptData, health: RunHealth): RunOutcome {
  const { module, heap } = sandbox;
  const { code, timeLimitMs, memoryLimitBytes } = ctx.config;
  const inputs = [data.input, data.variables, data.steps] as const;

  let runtime: QuickJSRuntime | undefined;
  let vm: QuickJSContext | undefined;
  const handles: QuickJSHandle[] = [];
  /** The memory-limit failure; `what` says where it struck when the script did not run yet. */
  const outOfMemory = (what?: string, thrownInfo?: ThrownInfo): RunOutcome => {
    health.outOfMemory = true;
    return { error: memoryLimitError(memoryLimitBytes, what, thrownInfo?.message) };
  };
  /**
   * Whether the host may copy `text` into the sandbox: room for the host's UTF-8 copy and for
   * QuickJS's own string (up to two bytes per UTF-8 byte), plus parser/allocator slack.
   */
  const fits = (text: string): boolean =>
    heap === undefined || hasRoom(heap, 3 * heap.emscripten.lengthBytesUTF8(text) + 64 * 1024);
  if (heap !== undefined) heap.growFailed = false;
  try {
    runtime = module.newRuntime();
    const rt = runtime;
    rt.setMemoryLimit(memoryLimitBytes);
    rt.setMaxStackSize(SCRIPT_LIMITS.maxStackSizeBytes);
    let stopped: 'time' | 'abort' | 'done' | undefined;
    let donePolls = 0;
    // Set once the sandbox is ready, so the limit measures the script, not the set-up.
    let deadline = Number.POSITIVE_INFINITY;
    rt.setInterruptHandler(() => {
      // QuickJS polls every ~10,000 operations and the counter carries over from the script, so
      // after it stopped one poll is let through: enough to read an error, not to run a loop.
      if (stopped === 'done') return ++donePolls > 1;
      if (stopped !== undefined) return true;
      if (ctx.signal.aborted) stopped = 'abort';
      else if (performance.now() >= deadline) stopped = 'time';
      return stopped !== undefined;
    });
    vm = rt.newContext();
    const q = vm;
    const keep = (handle: QuickJSHandle): QuickJSHandle => {
      handles.push(handle);
      return handle;
    };

    let logLines = 0;
    const emit = keep(
      q.newFunction('emit', (levelHandle, textHandle) => {
        logLines += 1;
        if (logLines > SCRIPT_LIMITS.maxLogLines) return;
        const level = q.getString(levelHandle);
        let message = q.getString(textHandle);
        if (message.length > SCRIPT_LIMITS.maxLogChars) {
          message = `${message.slice(0, SCRIPT_LIMITS.maxLogChars)}…`;
        }
        if (logLines === SCRIPT_LIMITS.maxLogLines) {
          message = `${message} (console output stops here: ${SCRIPT_LIMITS.maxLogLines} lines per run)`;
        }
        ctx.log(message, { level, source: 'console' });
      }),
    );

    // Filled in once the prelude ran; a set-up failure has nothing to read errors with.
    const reader: { describe?: QuickJSHandle } = {};
    /** Reads a thrown value after the script stopped: no more time, a little more memory. */
    const thrown = (errorHandle: QuickJSHandle): ThrownInfo => {
      keep(errorHandle);
      stopped = 'done';
      // A failed grow is a script that ran out of memory, whatever QuickJS managed to throw
      // (when even its "out of memory" error cannot be allocated, it throws null).
      if (heap?.growFailed === true) health.outOfMemory = true;
      releaseReserve(heap);
      rt.setMemoryLimit(memoryLimitBytes + READ_ERROR_SLACK_BYTES);
      if (reader.describe === undefined) return { message: 'the sandbox could not be set up' };
      const read = q.callFunction(reader.describe, q.undefined, errorHandle);
      if (read.error) {
        keep(read.error);
        return { message: '(the thrown value could not be read)' };
      }
      const json = q.getString(keep(read.value));
      return JSON.parse(json) as ThrownInfo;
    };
    const stopError = (): EngineError | undefined => {
      if (stopped === 'abort') return abortError(ctx.signal, 'script');
      if (stopped === 'time') {
        return new EngineError('TIMEOUT', `script exceeded its time limit of ${timeLimitMs} ms`, {
          retryable: true,
          details: { timeLimitMs },
        });
      }
      return undefined;
    };
    const failed = (errorHandle: QuickJSHandle, phase: Phase): RunOutcome => {
      const stop = stopError();
      if (stop) {
        keep(errorHandle);
        return { error: stop };
      }
      const info = thrown(errorHandle);
      if (isOutOfMemory(info)) health.outOfMemory = true;
      if (health.outOfMemory) return outOfMemory(undefined, info);
      return { error: scriptError(info, phase, code) };
    };

    if (!fits(PRELUDE)) return outOfMemory('no room to set up the sandbox');
    const prelude = q.evalCode(PRELUDE, 'runnel-prelude.js', { type: 'global' });
    if (prelude.error) return failed(prelude.error, 'setup');
    const installed = q.callFunction(keep(prelude.value), q.undefined, emit);
    if (installed.error) return failed(installed.error, 'setup');
    const helpers = keep(installed.value);
    const call = keep(q.getProp(helpers, 0));
    const toJson = keep(q.getProp(helpers, 1));
    reader.describe = keep(q.getProp(helpers, 2));

    // performance.now, not ctx.now: the engine clock may be a test clock that never moves.
    deadline = performance.now() + timeLimitMs;
    // The prefix shares line 1 with the code, so lines are the script's own but for the
    // wrapper's closing line; errors are placed in the code itself (scriptError).
    const source = wrapScript(code);
    if (!fits(source)) return outOfMemory('no room to load the code');
    const compiled = q.evalCode(source, 'script.js', { type: 'global', strict: true });
    if (compiled.error) return failed(compiled.error, 'compile');
    const fn = keep(compiled.value);
    if (q.typeof(fn) !== 'function') {
      const message = 'script code must be a function body (it closes the function early)';
      return { error: new EngineError('SCRIPT_ERROR', message, { retryable: false }) };
    }

    if (!inputs.every(fits)) return outOfMemory('no room for its input, variables and steps');
    const args = inputs.map((json) => keep(q.newString(json)));
    const called = q.callFunction(call, q.undefined, fn, ...args);
    if (called.error) return failed(called.error, 'run');
    let result = keep(called.value);

    const state = q.getPromiseState(result);
    if (!('notAPromise' in state && state.notAPromise)) {
      // A returned promise can only settle through the job queue: the sandbox has no timers.
      let settled = state;
      while (settled.type === 'pending' && rt.hasPendingJob()) {
        const jobs = rt.executePendingJobs();
        if (jobs.error) return failed(jobs.error, 'run');
        settled = q.getPromiseState(result);
      }
      if (settled.type === 'pending') {
        return {
          error: new EngineError(
            'SCRIPT_ERROR',
            'script returned a promise that never settles (the sandbox has no timers or I/O)',
            { retryable: false },
          ),
        };
      }
      if (settled.type === 'rejected') return failed(settled.error, 'run');
      result = keep(settled.value);
    }

    const serialised = q.callFunction(toJson, q.undefined, result);
    if (serialised.error) return failed(serialised.error, 'result');
    const jsonHandle = keep(serialised.value);
    stopped = 'done';
    releaseReserve(heap);
    if (q.typeof(jsonHandle) !== 'string') return { json: 'null' };
    // Reading the text copies it inside the sandbox; without room the copy comes back empty
    // (JSON text never is: a string result reads '""').
    const json = q.getString(jsonHandle);
    if (json === '') return outOfMemory('no room to read its result');
    return { json };
  } catch (err) {
    if (err instanceof EngineError) return { error: err };
    health.crashed = true;
    return { error: crashError(err) };
  } finally {
    if (!health.crashed) {
      try {
        for (const handle of handles.reverse()) if (handle.alive) handle.dispose();
        vm?.dispose();
        runtime?.dispose();
      } catch (err) {
        // A failed dispose (a leak assertion aborts the module) must not hide the run's outcome,
        // but the module is unusable from here on, and it points at a bug worth seeing.
        health.crashed = true;
        ctx.log('script sandbox could not be released and will be replaced', {
          error: err instanceof Error ? err.message : String(err),
        });
      }
    }
  }
}

/** Where an error came from: sandbox set-up, compiling the code, running it, or its result. */
type Phase = 'setup' | 'compile' | 'run' | 'result';

/** Whether QuickJS reported running out of memory (its own limit or a failed `malloc`). */
function isOutOfMemory(info: ThrownInfo): boolean {
  return info.name === 'InternalError' && info.message === 'out of memory';
}

/** The file name the sandbox compiles a script under; its frames are the only ones a user sees. */
const SCRIPT_FILE = 'script.js';

/** A stack frame's place in the script (`script.js:L:C`), global so every frame is found. */
const SCRIPT_FRAME = /script\.js:(\d+):(\d+)/gu;

/**
 * A QuickJS stack as the user's code has it: the script's frames with their places moved into
 * the code (line 1 without the wrapper's prefix, the wrapper's closing line as the code's end),
 * the runner's own frames (the prelude) left out.
 */
export function scriptStack(stack: string, code: string): string {
  return stack
    .split('\n')
    .filter((frame) => frame.trim() !== '' && !frame.includes('runnel-prelude.js'))
    .map((frame) =>
      frame.replace(SCRIPT_FRAME, (_all, line: string, column: string) => {
        const at = scriptLocation(code, Number(line), Number(column));
        return `${SCRIPT_FILE}:${at.line}:${at.column}`;
      }),
    )
    .join('\n');
}

/** The place of the first script frame of a QuickJS stack, in the code itself; undefined without one. */
function firstScriptPlace(stack: string | undefined, code: string): ScriptLocation | undefined {
  if (stack === undefined) return undefined;
  const match = new RegExp(SCRIPT_FRAME.source, 'u').exec(stack);
  if (match === null) return undefined;
  return scriptLocation(code, Number(match[1]), Number(match[2]));
}

/**
 * The EngineError of what a script threw. `details` has `name`, and, where the stack places it
 * in the code, `line` and `column` (1-based, in the user's own code: see {@link scriptLocation})
 * and `stack` ({@link scriptStack}).
 */
function scriptError(info: ThrownInfo, phase: Phase, code: string): EngineError {
  const place = phase === 'compile' || phase === 'run' ? firstScriptPlace(info.stack, code) : undefined;
  const atEnd = place?.atEnd === true && info.name === 'SyntaxError';
  const label = info.name ? `${info.name}: ${info.message}` : info.message;
  const details: Record<string, unknown> = {};
  if (info.name !== undefined) details.name = info.name;
  if (place !== undefined) {
    details.line = place.line;
    details.column = place.column;
  } else if (info.line !== undefined && phase === 'compile') {
    details.line = scriptLocation(code, info.line, 1).line;
  }
  if (info.stack !== undefined) details.stack = phase === 'setup' ? info.stack : scriptStack(info.stack, code);

  if (info.message === 'stack overflow') {
    return new EngineError(
      'SCRIPT_ERROR',
      'script exceeded its stack limit (stack overflow: calls nest too deeply)',
      {
        retryable: false,
        details,
      },
    );
  }
  if (phase === 'setup') {
    return new EngineError('SCRIPT_ERROR', `the script sandbox could not start: ${label}`, {
      retryable: true,
      details,
    });
  }
  if (phase === 'compile' && info.name === 'SyntaxError') {
    const line = details.line as number | undefined;
    const column = details.column as number | undefined;
    const where = line === undefined ? '' : column === undefined ? ` (line ${line})` : ` (line ${line}, column ${column})`;
    const message = atEnd ? ENDS_EARLY : info.message;
    return new EngineError('SCRIPT_ERROR', `script has a syntax error: ${message}${where}`, {
      retryable: false,
      details,
    });
  }
  if (phase === 'result') {
    return new EngineError('SCRIPT_ERROR', `script result is not JSON: ${label}`, {
      retryable: false,
      details,
    });
  }
  return new EngineError('SCRIPT_ERROR', `script threw ${label}`, { retryable: true, details });
}

function crashError(err: unknown): EngineError {
  // Emscripten throws an ExitStatus object, not an Error, when the module exits.
  const text = (err as { message?: unknown } | null)?.message;
  const message = typeof text === 'string' ? text : String(err);
  if (err instanceof RangeError && /call stack/i.test(message)) {
    return new EngineError(
      'SCRIPT_ERROR',
      'script exceeded its stack limit (the sandbox ran out of native stack)',
      {
        retryable: false,
        cause: err,
      },
    );
  }
  return new EngineError('SCRIPT_ERROR', `the script sandbox crashed: ${message}`, {
    retryable: true,
    cause: err,
  });
}
