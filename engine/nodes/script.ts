/**
 * The `script` node type: JavaScript in a WebAssembly QuickJS sandbox.
 *
 * The sandbox has the language and its built-ins only: no `process`, `require`, `fetch`, timers,
 * file system or network (DESIGN.md "Rules pinned": scripts can never reach the host). Data goes
 * in and out as JSON text, so no host object is ever reachable from the script.
 *
 * Each execution gets a fresh QuickJS runtime and context (nothing leaks between runs) with a
 * memory limit, a stack limit and an interrupt handler for the time limit and `ctx.signal`. The
 * WebAssembly modules are pooled, one per memory limit: each has a WebAssembly memory capped at
 * its base plus that limit, which is what bounds the host's memory (see {@link SandboxHeap}).
 *
 * The sandbox runs synchronously on the calling thread: while a script runs, the event loop does
 * not. An abort of `ctx.signal` is seen by the interrupt handler only if it happened before the
 * script started or was raised synchronously from inside it (e.g. from `ctx.log`); a timer-driven
 * abort (the node's `timeoutMs`) lands when the script's own time limit stops it. Keep
 * `timeLimitMs` small; a worker thread would lift this, at the cost of a second module instance.
 */
import {
  RELEASE_SYNC,
  newQuickJSWASMModuleFromVariant,
  newVariant,
  type QuickJSContext,
  type QuickJSHandle,
  type QuickJSRuntime,
  type QuickJSWASMModule,
} from 'quickjs-emscripten';
import { parse as parseJs } from 'acorn';
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
 *   inputs included; enforced by capping the sandbox's WebAssembly memory, so it bounds the host
 *   process too (give or take one 64 KiB page and the allocator's overhead).
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
   * Supplies the QuickJS module for each execution. Default: a small pool of modules, one per
   * memory limit, each with its own capped WebAssembly memory (see {@link SandboxHeap}); a module
   * that crashed or whose script hit its memory limit is replaced. A custom loader owns its module:
   * after an execution fails with "sandbox crashed" that module must not be handed out again.
   * Its memory limit is QuickJS's own accounting only, which this build cannot enforce for large
   * allocations (it has no `malloc_usable_size`, so it counts per-allocation overhead only).
   */
  loadQuickJS?: () => Promise<QuickJSModuleLike>;
}

/** The emscripten heap functions of a module (present on every quickjs-emscripten build). */
interface EmscriptenHeap {
  _malloc(bytes: number): number;
  _free(pointer: number): void;
  lengthBytesUTF8(text: string): number;
}

/**
 * The linear memory of a pooled module: what makes the memory limit a real bound.
 *
 * QuickJS's own limit counts only ~8 bytes per allocation in this build, so a script could grow the
 * WebAssembly memory to its 2 GiB default maximum (and the host's RSS with it: memory never
 * shrinks). A pooled module instead gets a `WebAssembly.Memory` whose `maximum` is its fixed base
 * plus the memory limit: when it is full, `malloc` returns NULL and QuickJS throws "out of memory".
 * The free part of the base is taken by a ballast allocation that is never touched (so it costs
 * no RSS), which leaves the script about `memoryLimitBytes` of heap, the runtime and its inputs
 * included. A reserve block is freed when the script stops, so its outcome can still be read.
 */
interface SandboxHeap {
  emscripten: EmscriptenHeap;
  /** Pointer to the reserve block, or 0 while it is released. */
  reserve: number;
  /**
   * Whether the last attempt to grow the memory failed: its maximum was reached, so a `malloc`
   * returned NULL. Reset before each run. It tells a script that ran out of memory even when
   * QuickJS could not allocate its "out of memory" error and threw `null` instead.
   */
  growFailed: boolean;
}

/** A module ready to run scripts: pooled ones carry their capped heap, custom ones do not. */
interface Sandbox {
  module: QuickJSModuleLike;
  heap?: SandboxHeap;
}

/** `WebAssembly.Memory`, typed here: the engine's `lib` (ES2023, no DOM) has no WebAssembly types. */
const WasmMemory = (
  globalThis as unknown as {
    WebAssembly: {
      Memory: new (descriptor: { initial: number; maximum: number }) => { grow(pages: number): number };
    };
  }
).WebAssembly.Memory;

const WASM_PAGE_BYTES = 64 * 1024;
/**
 * Pages of the module's fixed base: emscripten's static data, its 5 MiB stack and the start of
 * the heap. The wasm file imports its memory with this minimum (16 MiB, quickjs-emscripten 0.32).
 */
const BASE_PAGES = 256;
/** Room the allocator needs beyond the script's own heap (chunk headers, rounding). */
const HEAP_SLACK_BYTES = 256 * 1024;
/** Block freed when the script stopped, so its error or result can still be read. */
const RESERVE_BYTES = 1 * MIB;
/** Modules kept by the pool, one per distinct memory limit, least recently used dropped first. */
const MAX_POOLED_MODULES = 4;

/** A pool slot: the loading module. */
interface PoolEntry {
  loading: Promise<Sandbox>;
}

/** Pooled modules by memory limit; Map order is least recently used first. */
const pool = new Map<number, PoolEntry>();

/** The pooled module for `memoryLimitBytes`: created on first use; a failed load is retried. */
function pooledSandbox(memoryLimitBytes: number): PoolEntry {
  const pooled = pool.get(memoryLimitBytes);
  if (pooled !== undefined) {
    pool.delete(memoryLimitBytes);
    pool.set(memoryLimitBytes, pooled);
    return pooled;
  }
  const entry: PoolEntry = { loading: newSandbox(memoryLimitBytes) };
  pool.set(memoryLimitBytes, entry);
  entry.loading.catch(() => dropSandbox(memoryLimitBytes, entry));
  while (pool.size > MAX_POOLED_MODULES) {
    const oldest = pool.keys().next();
    if (oldest.done === true) break;
    pool.delete(oldest.value);
  }
  return entry;
}

/** Forgets a pooled module (if it is still the pooled one); the GC frees its memory. */
function dropSandbox(memoryLimitBytes: number, entry: PoolEntry): void {
  if (pool.get(memoryLimitBytes) === entry) pool.delete(memoryLimitBytes);
}

async function newSandbox(memoryLimitBytes: number): Promise<Sandbox> {
  const limitPages = Math.ceil((memoryLimitBytes + RESERVE_BYTES + HEAP_SLACK_BYTES) / WASM_PAGE_BYTES);
  const memory = new WasmMemory({ initial: BASE_PAGES, maximum: BASE_PAGES + limitPages });
  const module = await newQuickJSWASMModuleFromVariant(newVariant(RELEASE_SYNC, { wasmMemory: memory }));
  // The emscripten module is a protected field of QuickJSWASMModule; its heap functions are the
  // only way to size the ballast and to check room before the host copies a string in.
  const emscripten = (module as unknown as { module?: Partial<EmscriptenHeap> }).module;
  if (
    typeof emscripten?._malloc !== 'function' ||
    typeof emscripten._free !== 'function' ||
    typeof emscripten.lengthBytesUTF8 !== 'function'
  ) {
    throw new Error('this quickjs-emscripten build does not expose its heap (malloc/free)');
  }
  const heap: SandboxHeap = { emscripten: emscripten as EmscriptenHeap, reserve: 0, growFailed: false };
  // Emscripten grows the heap by calling `grow` on this object (several sizes in turn, the
  // smallest being the request itself); an own property sees each outcome.
  const grow = memory.grow.bind(memory);
  Object.defineProperty(memory, 'grow', {
    value: (pages: number): number => {
      try {
        const previous = grow(pages);
        heap.growFailed = false;
        return previous;
      } catch (err) {
        heap.growFailed = true;
        throw err;
      }
    },
  });
  // The first allocation lands at the start of the heap: everything from there to the end of the
  // base is free. Take it (minus a page for the allocator) with a ballast that is never freed.
  const start = heap.emscripten._malloc(1);
  heap.emscripten._free(start);
  const ballastBytes = BASE_PAGES * WASM_PAGE_BYTES - start - WASM_PAGE_BYTES;
  if (start !== 0 && ballastBytes > 0) heap.emscripten._malloc(ballastBytes);
  if (!takeReserve(heap)) throw new Error('the script sandbox has no room for its reserve');
  return { module, heap };
}

/** Allocates the reserve block again (after a run released it); false when there is no room. */
function takeReserve(heap: SandboxHeap): boolean {
  if (heap.reserve === 0) heap.reserve = heap.emscripten._malloc(RESERVE_BYTES);
  return heap.reserve !== 0;
}

/** Releases the reserve block, so the script's outcome can be read after it ran out of memory. */
function releaseReserve(heap: SandboxHeap | undefined): void {
  if (heap === undefined || heap.reserve === 0) return;
  heap.emscripten._free(heap.reserve);
  heap.reserve = 0;
}

/**
 * Whether `bytes` could be allocated now. The host copies strings into the sandbox with an
 * unchecked `malloc` (a NULL result would be written through), so every copy is checked first.
 */
function hasRoom(heap: SandboxHeap | undefined, bytes: number): boolean {
  if (heap === undefined) return true;
  const pointer = heap.emscripten._malloc(bytes);
  if (pointer === 0) return false;
  heap.emscripten._free(pointer);
  return true;
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
    validateConfig: (config) => scriptSyntaxProblems(config.code),
    async execute(ctx) {
      throwIfAborted(ctx.signal, 'script');
      const { memoryLimitBytes } = ctx.config;
      let entry: PoolEntry | undefined;
      let sandbox: Sandbox;
      if (custom !== undefined) {
        sandbox = { module: await custom() };
      } else {
        entry = pooledSandbox(memoryLimitBytes);
        sandbox = await entry.loading;
      }
      throwIfAborted(ctx.signal, 'script');
      const health: RunHealth = { crashed: false, outOfMemory: false };
      const run = runScript(sandbox, ctx, health);
      if (entry !== undefined) {
        // A module whose script filled its memory is dropped, so the pages it touched are freed
        // rather than kept resident by the pool; a crashed one is in an unknown state.
        const reusable =
          !health.crashed && !health.outOfMemory && sandbox.heap !== undefined && takeReserve(sandbox.heap);
        if (!reusable) dropSandbox(memoryLimitBytes, entry);
      }
      if ('error' in run) throw run.error;
      return { output: run.output };
    },
  };
}

/** How the sandbox wraps a script's code; the prefix shares line 1 with it. */
const WRAP_PREFIX = '(function (input, variables, steps) {';

/**
 * The syntax errors of a script's code, as `validateConfig` reports them: `code has a syntax
 * error at line L, column C: …`, or that it closes its function early.
 *
 * Parsed with acorn (plain JavaScript, nothing runs, the designer's own check), wrapped exactly as
 * the sandbox compiles it. Not QuickJS: validation must give the same answer whether or not a
 * sandbox module happens to be loaded, and QuickJS's parser can overflow the host stack on absurd
 * nesting. What acorn accepts but QuickJS does not is still reported when the script runs.
 */
export function scriptSyntaxProblems(code: string): string[] {
  const source = `${WRAP_PREFIX}${code}\n})`;
  type Span = { type: string; start: number; end: number };
  let program: { body: Array<Span & { expression?: Span }> };
  try {
    program = parseJs(source, { ecmaVersion: 'latest', sourceType: 'script' }) as unknown as typeof program;
  } catch (error) {
    if (!(error instanceof SyntaxError)) return []; // e.g. the host's stack on absurd nesting
    const e = error as SyntaxError & { pos?: number; loc?: { line: number; column: number } };
    if (e.pos !== undefined && e.pos >= WRAP_PREFIX.length + code.length) {
      return ['code has a syntax error: it ends too early (an unclosed bracket, string or expression)'];
    }
    const line = e.loc?.line ?? 1;
    const column = Math.max(1, (e.loc?.column ?? 0) - (line === 1 ? WRAP_PREFIX.length : 0) + 1);
    const message = e.message.replace(/\s*\(\d+:\d+\)$/u, '');
    return [`code has a syntax error at line ${line}, column ${column}: ${message}`];
  }
  // One statement: the parenthesised function, from the first "(" to the last ")".
  const fn = program.body.length === 1 ? program.body[0]?.expression : undefined;
  if (fn?.type !== 'FunctionExpression' || fn.start !== 1 || fn.end !== source.length - 1) {
    return ['code must be a function body (it closes the function early)'];
  }
  return [];
}

/** The `script` node type with default options. */
export const scriptNode: NodeType<ScriptConfig> = createScriptNodeType();

type RunOutcome = { output: unknown } | { error: EngineError };

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
function runScript(sandbox: Sandbox, ctx: NodeContext<ScriptConfig>, health: RunHealth): RunOutcome {
  const { module, heap } = sandbox;
  const { code, timeLimitMs, memoryLimitBytes } = ctx.config;
  const inputs = [
    jsonText('input', ctx.input),
    jsonText('variables', ctx.variables),
    jsonText('steps', ctx.steps),
  ] as const;

  let runtime: QuickJSRuntime | undefined;
  let vm: QuickJSContext | undefined;
  const handles: QuickJSHandle[] = [];
  /** The memory-limit failure; `what` says where it struck when the script did not run yet. */
  const memoryLimitError = (what?: string, thrownInfo?: ThrownInfo): RunOutcome => {
    health.outOfMemory = true;
    const message = `script exceeded its memory limit of ${memoryLimitBytes} bytes`;
    return {
      error: new EngineError('SCRIPT_ERROR', what === undefined ? message : `${message} (${what})`, {
        retryable: false,
        details: { memoryLimitBytes, ...(thrownInfo && { thrown: thrownInfo.message }) },
      }),
    };
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
      if (health.outOfMemory) return memoryLimitError(undefined, info);
      return { error: scriptError(info, phase) };
    };

    if (!fits(PRELUDE)) return memoryLimitError('no room to set up the sandbox');
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
    const source = `${WRAP_PREFIX}${code}\n})`;
    if (!fits(source)) return memoryLimitError('no room to load the code');
    const compiled = q.evalCode(source, 'script.js', { type: 'global', strict: true });
    if (compiled.error) return failed(compiled.error, 'compile');
    const fn = keep(compiled.value);
    if (q.typeof(fn) !== 'function') {
      const message = 'script code must be a function body (it closes the function early)';
      return { error: new EngineError('SCRIPT_ERROR', message, { retryable: false }) };
    }

    if (!inputs.every(fits)) return memoryLimitError('no room for its input, variables and steps');
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
    if (q.typeof(jsonHandle) !== 'string') return { output: null };
    // Reading the text copies it inside the sandbox; without room the copy comes back empty.
    const json = q.getString(jsonHandle);
    try {
      return { output: JSON.parse(json) as unknown };
    } catch {
      return memoryLimitError('no room to read its result');
    }
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

function scriptError(info: ThrownInfo, phase: Phase): EngineError {
  const label = info.name ? `${info.name}: ${info.message}` : info.message;
  const details: Record<string, unknown> = {};
  if (info.name !== undefined) details.name = info.name;
  if (info.line !== undefined) details.line = info.line;
  if (info.stack !== undefined) details.stack = info.stack;

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
