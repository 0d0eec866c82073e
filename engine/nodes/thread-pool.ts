/**
 * A pool of worker threads for user code and CPU-bound handlers (scripts, {@link NodeThread}
 * types), so that nothing they do holds the engine's loop, its API, its event stream, its lease
 * heartbeats or another instance.
 *
 * An attempt is sent to an idle thread, or waits in a FIFO queue while every thread is busy. The
 * attempt's `ctx.signal` is the engine's cut: aborted while queued, the attempt never runs;
 * aborted while running (the node's `timeoutMs`, a cancel, a lost lease), its thread is
 * terminated at once (V8 stops it even inside a WebAssembly loop), the attempt is rejected with
 * the signal's reason and a fresh thread takes the old one's place. A thread that dies (an
 * uncaught error, `process.exit`, its V8 heap limit) fails its attempt with a clear error, never
 * the process, and is replaced.
 *
 * Threads start when work first needs them and then stay, unreferenced while idle so they never
 * keep a process alive. One thread runs one attempt at a time.
 *
 * Where the thread's code comes from: `thread-main.ts` beside this file. Run from the sources
 * (vitest, `node bin/runnel.js` with tsx registered) the thread starts on `thread-tsx.mjs`, which
 * registers tsx inside the thread first (a worker does not inherit its parent's loader hooks);
 * in the packaged app electron/build.ts bundles `thread-main.ts` as its own entry and rewrites
 * the URL below to it.
 */
import os from 'node:os';
import { Worker, type ResourceLimits } from 'node:worker_threads';
import { EngineError, type ErrorCode } from '../errors';
import { abortError } from './abort';
import type { NodeContext, NodeResult } from './types';

/** The thread's entry (a `.js` file in the packaged app: see the module doc). */
const THREAD_MAIN = new URL('./thread-main.ts', import.meta.url);

/**
 * Default V8 limits of a pool thread, MB.
 *
 * A script's own memory is WebAssembly memory, off this heap and capped by its
 * `memoryLimitBytes`; the thread's heap holds the script's data and result as texts (a few times
 * 256 MiB at worst, see script-sandbox.ts), hence 1 GiB, which costs nothing until used. Past its
 * limit a thread is ended with ERR_WORKER_OUT_OF_MEMORY, except that V8 grants Node only a small
 * allowance (16 MB) beyond the limit: one allocation bigger than that, when the heap is nearly
 * full, aborts the whole process. Keep big data off a thread module's heap.
 */
export const DEFAULT_THREAD_RESOURCE_LIMITS: Readonly<ResourceLimits> = {
  maxOldGenerationSizeMb: 1024,
  maxYoungGenerationSizeMb: 32,
  stackSizeMb: 4,
};

/** Options of {@link ThreadPool}. */
export interface ThreadPoolOptions {
  /** Threads at most. Default `os.availableParallelism()`; at least 1. */
  size?: number;
  /**
   * V8 limits of each thread (`worker_threads` resourceLimits, MB). Default
   * {@link DEFAULT_THREAD_RESOURCE_LIMITS}. A thread over its heap limit is ended by Node and its
   * attempt fails with an out-of-memory error.
   */
  resourceLimits?: ResourceLimits;
}

/** How the pool reports a thread lost under an attempt: the error code and what ran. */
export interface ThreadFailure {
  /** e.g. SCRIPT_ERROR for scripts, HANDLER_ERROR for custom types. */
  code: ErrorCode;
  /** Names the work in messages, e.g. `script` or `node type "hash"`. */
  what: string;
}

/** The part of a {@link NodeContext} that crosses to the thread (structured clone). */
export interface ThreadContextData {
  instanceId: number;
  nodeId: string;
  type: string;
  attempt: number;
  idempotencyKey: string;
  config: unknown;
  input: unknown;
  variables: Readonly<Record<string, unknown>>;
  steps: Readonly<Record<string, unknown>>;
  /** The engine's clock when the attempt was sent (epoch ms). */
  now: number;
  result?: unknown;
}

/** Engine → thread: run `module`'s `execute` on `ctx`. */
export interface ThreadTask {
  id: number;
  module: string;
  ctx: ThreadContextData;
}

/** A thrown value as data: an EngineError keeps its code, anything else its name. */
export interface ThreadErrorData {
  message: string;
  name?: string;
  stack?: string;
  engine?: { code: string; retryable: boolean; details?: unknown };
}

/** Thread → engine. */
export type ThreadMessage =
  | { type: 'ready' }
  | { type: 'log'; id: number; message: string; data?: unknown }
  | { type: 'done'; id: number; result: NodeResult }
  | { type: 'failed'; id: number; error: ThreadErrorData };

interface Job {
  id: number;
  module: string;
  ctx: NodeContext<unknown>;
  failure: ThreadFailure;
  resolve: (result: NodeResult) => void;
  reject: (error: unknown) => void;
  onAbort: () => void;
  thread?: PoolThread;
}

interface PoolThread {
  worker: Worker;
  job?: Job;
  /** The thread said it started (a thread lost before that is not replaced eagerly). */
  ready: boolean;
  /** Set once the pool let go of it (terminated, exited): its later events are ignored. */
  gone: boolean;
  /** The last 'error' event, read when the thread exits. */
  error?: Error;
}

/** A pool of worker threads running thread modules; see the module doc. */
export class ThreadPool {
  /** Threads at most. */
  readonly size: number;
  readonly #limits: ResourceLimits;
  #threads: PoolThread[] = [];
  #queue: Job[] = [];
  #nextId = 1;
  #closed = false;

  /** A pool of `options.size` threads at most (none started until work comes). */
  constructor(options: ThreadPoolOptions = {}) {
    const size = options.size ?? os.availableParallelism();
    if (!Number.isInteger(size) || size < 1) {
      throw new EngineError('INVALID_INPUT', `thread pool size must be a whole number ≥ 1, got ${String(size)}`, {
        retryable: false,
        details: { field: 'size' },
      });
    }
    this.size = size;
    this.#limits = { ...DEFAULT_THREAD_RESOURCE_LIMITS, ...options.resourceLimits };
  }

  /** Threads started and not lost. */
  get threads(): number {
    return this.#threads.length;
  }

  /** Threads running an attempt now. */
  get busy(): number {
    return this.#threads.filter((t) => t.job !== undefined).length;
  }

  /** Attempts waiting for a thread. */
  get queued(): number {
    return this.#queue.length;
  }

  /**
   * Runs `module`'s `execute` on a copy of `ctx` in a pool thread (see {@link NodeThread}).
   *
   * Resolves with what it returned. Rejects with what it threw (an EngineError stays one; any other
   * Error keeps its name and message), with {@link abortError} of `ctx.signal` when that aborts,
   * with INVALID_INPUT when the context cannot be cloned, and with `failure.code` when the thread
   * dies under the attempt (out of heap: non-retryable; otherwise retryable).
   */
  run<Config>(module: string, ctx: NodeContext<Config>, failure: ThreadFailure): Promise<NodeResult> {
    if (ctx.signal.aborted) return Promise.reject(abortError(ctx.signal, failure.what));
    if (this.#closed) return Promise.reject(new EngineError('CANCELLED', `${failure.what} was not run: the thread pool is closed`));
    return new Promise<NodeResult>((resolve, reject) => {
      const job: Job = {
        id: this.#nextId++,
        module,
        ctx: ctx as NodeContext<unknown>,
        failure,
        resolve,
        reject,
        onAbort: () => this.#abort(job),
      };
      ctx.signal.addEventListener('abort', job.onAbort, { once: true });
      this.#queue.push(job);
      this.#dispatch();
    });
  }

  /** Terminates every thread; queued and running attempts fail with CANCELLED. */
  async close(): Promise<void> {
    this.#closed = true;
    const reason = (what: string) => new EngineError('CANCELLED', `${what} was stopped: the thread pool closed`);
    for (const job of this.#queue.splice(0)) this.#settle(job, undefined, reason(job.failure.what));
    const threads = this.#threads.splice(0);
    await Promise.all(
      threads.map(async (t) => {
        t.gone = true;
        if (t.job) this.#settle(t.job, undefined, reason(t.job.failure.what));
        await t.worker.terminate().catch(() => undefined);
      }),
    );
  }

  /** Hands queued attempts to idle threads, starting threads up to the size. */
  #dispatch(): void {
    while (this.#queue.length > 0) {
      const thread = this.#threads.find((t) => t.job === undefined) ?? this.#spawn();
      if (thread === undefined) return;
      const job = this.#queue.shift() as Job;
      this.#assign(thread, job);
    }
  }

  #assign(thread: PoolThread, job: Job): void {
    const { ctx } = job;
    const data: ThreadContextData = {
      instanceId: ctx.instanceId,
      nodeId: ctx.nodeId,
      type: ctx.type,
      attempt: ctx.attempt,
      idempotencyKey: ctx.idempotencyKey,
      config: ctx.config,
      input: ctx.input,
      variables: ctx.variables,
      steps: ctx.steps,
      now: ctx.now(),
      ...(ctx.result === undefined ? {} : { result: ctx.result }),
    };
    try {
      thread.worker.postMessage({ id: job.id, module: job.module, ctx: data } satisfies ThreadTask);
    } catch (err) {
      // Nothing was sent (a function or symbol in the data): the thread stays idle.
      const message = `${job.failure.what} could not be sent to its thread: its config, input, variables or steps are not plain data (${(err as Error).message})`;
      this.#settle(job, undefined, new EngineError('INVALID_INPUT', message, { retryable: false, cause: err }));
      return;
    }
    thread.job = job;
    job.thread = thread;
    thread.worker.ref();
  }

  #spawn(): PoolThread | undefined {
    if (this.#closed || this.#threads.length >= this.size) return undefined;
    const fromSource = THREAD_MAIN.pathname.endsWith('.ts');
    const entry = fromSource ? new URL('./thread-tsx.mjs', import.meta.url) : THREAD_MAIN;
    const worker = new Worker(entry, {
      workerData: { entry: THREAD_MAIN.href },
      resourceLimits: this.#limits,
      // The engine's own flags (a loader, an inspector port) are not the thread's.
      execArgv: [],
      name: 'runnel-pool',
    });
    const thread: PoolThread = { worker, ready: false, gone: false };
    worker.on('message', (message: ThreadMessage) => this.#onMessage(thread, message));
    worker.on('error', (error) => {
      thread.error = error;
    });
    worker.on('exit', (code) => this.#onExit(thread, code));
    // After the listeners: adding a 'message' listener references the worker's port again.
    worker.unref();
    this.#threads.push(thread);
    return thread;
  }

  #onMessage(thread: PoolThread, message: ThreadMessage): void {
    if (thread.gone) return;
    if (message.type === 'ready') {
      thread.ready = true;
      return;
    }
    const job = thread.job;
    if (job === undefined || job.id !== message.id) return;
    if (message.type === 'log') {
      try {
        job.ctx.log(message.message, message.data);
      } catch {
        // A log is best-effort; it must not take the pool's message handler down.
      }
      return;
    }
    thread.job = undefined;
    thread.worker.unref();
    if (message.type === 'done') this.#settle(job, message.result);
    else this.#settle(job, undefined, fromThreadError(message.error));
    this.#dispatch();
  }

  #onExit(thread: PoolThread, code: number): void {
    if (thread.gone) return;
    thread.gone = true;
    this.#threads = this.#threads.filter((t) => t !== thread);
    const job = thread.job;
    if (job !== undefined) this.#settle(job, undefined, lostThreadError(job.failure, code, thread.error, this.#limits));
    else if (!thread.ready && thread.error !== undefined && this.#queue.length > 0) {
      // A thread that could not even start: fail the next attempt with why, rather than
      // starting threads in a loop for the rest of the queue.
      const next = this.#queue.shift() as Job;
      this.#settle(next, undefined, lostThreadError(next.failure, code, thread.error, this.#limits));
    }
    if (thread.ready) this.#spawn();
    this.#dispatch();
  }

  #abort(job: Job): void {
    const error = abortError(job.ctx.signal, job.failure.what);
    const thread = job.thread;
    if (thread === undefined) {
      // Still queued: it never runs.
      this.#queue = this.#queue.filter((j) => j !== job);
      this.#settle(job, undefined, error);
      return;
    }
    if (thread.job !== job) return;
    thread.gone = true;
    thread.job = undefined;
    this.#threads = this.#threads.filter((t) => t !== thread);
    void thread.worker.terminate().catch(() => undefined);
    this.#settle(job, undefined, error);
    this.#spawn();
    this.#dispatch();
  }

  #settle(job: Job, result: NodeResult | undefined, error?: unknown): void {
    job.ctx.signal.removeEventListener('abort', job.onAbort);
    if (error !== undefined) job.reject(error);
    else job.resolve(result as NodeResult);
  }
}

/** What a thread threw, rebuilt on the engine's side. */
function fromThreadError(data: ThreadErrorData): Error {
  if (data.engine !== undefined) {
    const error = new EngineError(data.engine.code as ErrorCode, data.message, {
      retryable: data.engine.retryable,
      ...(data.engine.details === undefined ? {} : { details: data.engine.details }),
    });
    return error;
  }
  const error = new Error(data.message);
  if (data.name !== undefined) error.name = data.name;
  if (data.stack !== undefined) error.stack = data.stack;
  return error;
}

/** The error of an attempt whose thread died under it. */
function lostThreadError(failure: ThreadFailure, exitCode: number, error: Error | undefined, limits: ResourceLimits): EngineError {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (code === 'ERR_WORKER_OUT_OF_MEMORY') {
    const heap = limits.maxOldGenerationSizeMb;
    return new EngineError(
      failure.code,
      `${failure.what} ran out of memory in its thread (over the thread's memory limit, a ${String(heap)} MB heap: its inputs or result are too big); a fresh thread takes its place`,
      { retryable: false, details: { threadHeapMb: heap } },
    );
  }
  const why = error !== undefined ? `${error.name}: ${error.message}` : `it exited with code ${exitCode}`;
  return new EngineError(failure.code, `${failure.what}: its thread died (${why}); a fresh thread takes its place`, {
    retryable: true,
    details: { exitCode },
  });
}

let shared: ThreadPool | undefined;

/** The process's default pool (sized to the machine), created on first use. */
export function defaultThreadPool(): ThreadPool {
  shared ??= new ThreadPool();
  return shared;
}
