/**
 * A pool thread's entry (see thread-pool.ts): runs one attempt at a time, each the `execute`
 * export of the module the task names, and posts its logs, its result or its error back.
 *
 * Keeps its imports small (no zod, no SQLite): every pool thread loads this file.
 */
import { parentPort } from 'node:worker_threads';
import type { ThreadErrorData, ThreadMessage, ThreadTask } from './thread-pool';
import type { NodeContext, NodeResult } from './types';

const port = parentPort;
if (!port) throw new Error('thread-main.ts must run in a worker thread');

type ExecuteFn = (ctx: NodeContext<unknown>) => Promise<NodeResult> | NodeResult;

/** The thread never sees an abort: the pool terminates it instead. */
const NEVER_ABORTED: AbortSignal = new AbortController().signal;

const modules = new Map<string, Promise<ExecuteFn>>();

function load(href: string): Promise<ExecuteFn> {
  let loading = modules.get(href);
  if (loading === undefined) {
    loading = import(href).then((m: { execute?: unknown }) => {
      if (typeof m.execute !== 'function') throw new TypeError(`thread module ${href} does not export an execute function`);
      return m.execute as ExecuteFn;
    });
    modules.set(href, loading);
    // A module that failed to load is tried again by the next attempt.
    loading.catch(() => modules.delete(href));
  }
  return loading;
}

function post(message: ThreadMessage): void {
  (port as NonNullable<typeof port>).postMessage(message);
}

/** A thrown value as data; an EngineError (by shape: the thread's copy of the class) keeps its code. */
function errorData(err: unknown): ThreadErrorData {
  if (err instanceof Error) {
    const e = err as Error & { code?: unknown; retryable?: unknown; details?: unknown };
    const out: ThreadErrorData = { message: e.message, name: e.name };
    if (e.stack !== undefined) out.stack = e.stack;
    if (e.name === 'EngineError' && typeof e.code === 'string') {
      out.engine = { code: e.code, retryable: e.retryable !== false };
      if (e.details !== undefined) out.engine.details = e.details;
    }
    return out;
  }
  return { message: String(err) };
}

async function run(task: ThreadTask): Promise<void> {
  const ctx: NodeContext<unknown> = {
    ...task.ctx,
    signal: NEVER_ABORTED,
    now: () => task.ctx.now,
    log: (message, data) => {
      try {
        post({ type: 'log', id: task.id, message, ...(data === undefined ? {} : { data }) });
      } catch {
        post({ type: 'log', id: task.id, message, data: '(log data is not cloneable)' });
      }
    },
  };
  let result: NodeResult;
  try {
    const execute = await load(task.module);
    result = await execute(ctx);
  } catch (err) {
    const error = errorData(err);
    try {
      post({ type: 'failed', id: task.id, error });
    } catch {
      // Details that do not clone are dropped, the rest of the error is kept.
      if (error.engine !== undefined) delete error.engine.details;
      post({ type: 'failed', id: task.id, error });
    }
    return;
  }
  try {
    post({ type: 'done', id: task.id, result });
  } catch (err) {
    const message = `node type "${task.ctx.type}" returned a result that cannot leave its thread: ${(err as Error).message}`;
    post({ type: 'failed', id: task.id, error: { message, name: 'EngineError', engine: { code: 'HANDLER_ERROR', retryable: false } } });
  }
}

// Tasks come one at a time (the pool sends the next once this one answered).
port.on('message', (task: ThreadTask) => void run(task));
post({ type: 'ready' });
