/**
 * The `script` node type: JavaScript in a WebAssembly QuickJS sandbox.
 *
 * The sandbox has the language and its built-ins only: no `process`, `require`, `fetch`, timers,
 * file system or network (DESIGN.md "Rules pinned": scripts can never reach the host). Data goes
 * in and out as JSON text, so no host object is ever reachable from the script.
 *
 * Each execution gets a fresh QuickJS runtime and context (nothing leaks between runs) with a
 * memory limit, a stack limit and an interrupt handler for the time limit and `ctx.signal`. The
 * WebAssembly module itself is loaded once and shared.
 *
 * The sandbox runs synchronously on the calling thread: while a script runs, the event loop does
 * not. An abort of `ctx.signal` is seen by the interrupt handler only if it happened before the
 * script started or was raised synchronously from inside it (e.g. from `ctx.log`); a timer-driven
 * abort (the node's `timeoutMs`) lands when the script's own time limit stops it. Keep
 * `timeLimitMs` small; a worker thread would lift this, at the cost of a second module instance.
 */
import {
  newQuickJSWASMModule,
  type QuickJSContext,
  type QuickJSHandle,
  type QuickJSRuntime,
  type QuickJSWASMModule,
} from 'quickjs-emscripten';
import { z } from 'zod';
import { EngineError } from '../errors';
import { abortError, throwIfAborted } from './abort';
import type { NodeContext, NodeType } from './types';

const MIB = 1024 * 1024;

/** Limits of the `script` node type: times in ms, sizes in bytes. */
export const SCRIPT_LIMITS = {
  defaultTimeLimitMs: 1000,
  /**
   * QuickJS runs on the worker's thread, so a script blocks lease heartbeats while it runs. The
   * cap stays below a third of the default 30 s lease so a long script never loses its claim.
   */
  maxTimeLimitMs: 10_000,
  defaultMemoryLimitBytes: 32 * MIB,
  minMemoryLimitBytes: 1 * MIB,
  maxMemoryLimitBytes: 256 * MIB,
  /** Longest `code`, in characters. */
  maxCodeLength: 1_000_000,
  /**
   * QuickJS stack limit. QuickJS checks it on its own (linear-memory) stack, but every
   * interpreted frame also uses V8's native stack; above ~256 KiB plain recursion overflows V8
   * first (measured with quickjs-emscripten 0.32 on Node 20), which is a host crash rather than a
   * catchable "stack overflow" in the script. 256 KiB still allows ~1,500 nested calls.
   */
  maxStackSizeBytes: 256 * 1024,
  /** `console.*` calls forwarded to `ctx.log` per execution; the rest are dropped. */
  maxLogLines: 100,
  /** Longest forwarded log message, in characters. */
  maxLogChars: 2000,
} as const;

/**
 * Config of `script`.
 *
 * - `code`: a function body that sees `input`, `variables` and `steps` and returns the result,
 *   e.g. `return input.a + 1`; strict mode; not a template;
 * - `timeLimitMs`: 1 … 60,000 (default 1,000) of wall-clock time;
 * - `memoryLimitBytes`: 1 MiB … 256 MiB (default 32 MiB) for the whole QuickJS runtime,
 *   inputs included.
 */
export const ScriptConfigSchema = z.strictObject({
  code: z
    .string()
    .min(1, 'code is empty')
    .max(SCRIPT_LIMITS.maxCodeLength)
    .describe('JavaScript function body; sees input, variables, steps; return the result'),
  timeLimitMs: z
    .number()
    .int()
    .min(1)
    .max(SCRIPT_LIMITS.maxTimeLimitMs)
    .default(SCRIPT_LIMITS.defaultTimeLimitMs)
    .describe('Wall-clock time limit in ms'),
  memoryLimitBytes: z
    .number()
    .int()
    .min(SCRIPT_LIMITS.minMemoryLimitBytes)
    .max(SCRIPT_LIMITS.maxMemoryLimitBytes)
    .default(SCRIPT_LIMITS.defaultMemoryLimitBytes)
    .describe('Memory limit in bytes'),
});

/** Parsed config of `script`. */
export type ScriptConfig = z.output<typeof ScriptConfigSchema>;

/** The part of a QuickJS module the script node uses (a `TestQuickJSWASMModule` fits too). */
export type QuickJSModuleLike = Pick<QuickJSWASMModule, 'newRuntime'>;

/** Options of {@link createScriptNodeType}. */
export interface ScriptNodeOptions {
  /**
   * Supplies the QuickJS module for each execution. Default: one module per process, loaded on
   * first use and replaced after a crash. A custom loader owns its module: after an execution
   * fails with "sandbox crashed" that module must not be handed out again.
   */
  loadQuickJS?: () => Promise<QuickJSModuleLike>;
}

let sharedModule: Promise<QuickJSWASMModule> | undefined;

/** The process-wide module: loaded once, on first use; a failed load is retried next time. */
function loadSharedModule(): Promise<QuickJSWASMModule> {
  if (sharedModule === undefined) {
    const loading = newQuickJSWASMModule();
    sharedModule = loading;
    loading.catch(() => {
      if (sharedModule === loading) sharedModule = undefined;
    });
  }
  return sharedModule;
}

/**
 * Builds a `script` node type.
 *
 * Output: the script's return value as JSON (`undefined` → `null`; `toJSON` honoured; a returned
 * promise is settled by running the sandbox's job queue). Errors (all {@link EngineError},
 * code SCRIPT_ERROR unless said otherwise):
 * - a syntax error in `code`: non-retryable, with `details.line`;
 * - an error thrown by the script: retryable (a script may read state that changes), with
 *   `details.name` and `details.stack`;
 * - the memory limit ("memory limit" in the message) or the stack limit: non-retryable;
 * - a result that is not JSON (BigInt, cycles): non-retryable;
 * - the time limit: TIMEOUT, retryable;
 * - `ctx.signal` aborted: see {@link abortError}.
 */
export function createScriptNodeType(options: ScriptNodeOptions = {}): NodeType<ScriptConfig> {
  const custom = options.loadQuickJS;
  return {
    type: 'script',
    title: 'Script',
    description: 'Runs JavaScript in a sandbox with time and memory limits',
    icon: 'code',
    group: 'Core',
    configSchema: ScriptConfigSchema,
    templates: false,
    async execute(ctx) {
      throwIfAborted(ctx.signal, 'script');
      const loading = custom ? custom() : loadSharedModule();
      const module = await loading;
      throwIfAborted(ctx.signal, 'script');
      const health = { crashed: false };
      const run = runScript(module, ctx, health);
      if (health.crashed && !custom && sharedModule === loading) sharedModule = undefined;
      if ('error' in run) throw run.error;
      return { output: run.output };
    },
  };
}

/** The `script` node type with default options. */
export const scriptNode: NodeType<ScriptConfig> = createScriptNodeType();

type RunOutcome = { output: unknown } | { error: EngineError };

/** What the script threw, read inside the sandbox so no getter can reach the host. */
interface ThrownInfo {
  name?: string;
  message: string;
  stack?: string;
  line?: number;
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
  const toJson = (value) => stringify(value);
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
function runScript(
  module: QuickJSModuleLike,
  ctx: NodeContext<ScriptConfig>,
  health: { crashed: boolean },
): RunOutcome {
  const { code, timeLimitMs, memoryLimitBytes } = ctx.config;
  const inputs = [
    jsonText('input', ctx.input),
    jsonText('variables', ctx.variables),
    jsonText('steps', ctx.steps),
  ] as const;

  let runtime: QuickJSRuntime | undefined;
  let vm: QuickJSContext | undefined;
  const handles: QuickJSHandle[] = [];
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
      return { error: scriptError(thrown(errorHandle), phase, memoryLimitBytes) };
    };

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
    // The prefix shares line 1 with the code, so line numbers in errors are the script's own.
    const compiled = q.evalCode(`(function (input, variables, steps) {${code}\n})`, 'script.js', {
      type: 'global',
      strict: true,
    });
    if (compiled.error) return failed(compiled.error, 'compile');
    const fn = keep(compiled.value);
    if (q.typeof(fn) !== 'function') {
      const message = 'script code must be a function body (it closes the function early)';
      return { error: new EngineError('SCRIPT_ERROR', message, { retryable: false }) };
    }

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
    const output: unknown = q.typeof(jsonHandle) === 'string' ? JSON.parse(q.getString(jsonHandle)) : null;
    stopped = 'done';
    return { output };
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

function scriptError(info: ThrownInfo, phase: Phase, memoryLimitBytes: number): EngineError {
  const label = info.name ? `${info.name}: ${info.message}` : info.message;
  const details: Record<string, unknown> = {};
  if (info.name !== undefined) details.name = info.name;
  if (info.line !== undefined) details.line = info.line;
  if (info.stack !== undefined) details.stack = info.stack;

  if (info.name === 'InternalError' && info.message === 'out of memory') {
    return new EngineError('SCRIPT_ERROR', `script exceeded its memory limit of ${memoryLimitBytes} bytes`, {
      retryable: false,
      details: { ...details, memoryLimitBytes },
    });
  }
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
    const where = info.line !== undefined ? ` (line ${info.line})` : '';
    return new EngineError('SCRIPT_ERROR', `script has a syntax error: ${info.message}${where}`, {
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
