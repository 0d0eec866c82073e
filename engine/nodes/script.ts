/**
 * The `script` node type: JavaScript in a WebAssembly QuickJS sandbox (script-sandbox.ts), run
 * in the engine's thread pool (thread-pool.ts).
 *
 * The sandbox is synchronous: on the engine's thread a runaway script would hold the loop, the
 * API, the event stream, lease heartbeats and every other instance until its time limit. On a
 * pool thread it holds that thread only, and the node's `timeoutMs` (or a cancel, or a lost
 * lease) cuts it at once: the pool terminates the thread and starts a fresh one. Inside the
 * thread the script's own `timeLimitMs` and `memoryLimitBytes` apply as before.
 */
import { throwIfAborted } from './abort';
import { SCRIPT_LIMITS, ScriptConfigSchema, scriptSyntaxProblems, type ScriptConfig } from './script-config';
import {
  dataTooBig,
  executeOn,
  parseScriptResult,
  scriptData,
  type QuickJSModuleLike,
  type ScriptThreadConfig,
} from './script-sandbox';
import { defaultThreadPool, type ThreadPool } from './thread-pool';
import type { NodeContext, NodeType } from './types';

export { SCRIPT_LIMITS, ScriptConfigSchema, scriptSyntaxProblems, type QuickJSModuleLike, type ScriptConfig };

/** The thread module that runs a script (a bundled `.js` in the packaged app: electron/build.ts). */
const SCRIPT_THREAD_MODULE = new URL('./script-sandbox.ts', import.meta.url).href;

/** Stands in for the variables and steps a script's thread gets as text instead. */
const NO_DATA: Readonly<Record<string, unknown>> = Object.freeze({});

/** Options of {@link createScriptNodeType}. */
export interface ScriptNodeOptions {
  /**
   * The pool scripts run in. Default: the process's shared pool ({@link defaultThreadPool}), which
   * other CPU-bound types share.
   */
  pool?: ThreadPool;
  /**
   * Runs scripts on the calling thread with this module instead of in the pool (for tests that
   * watch a module's contexts and leaks). The calling thread is held while a script runs, and an
   * abort is seen only when the sandbox polls it. A custom loader owns its module: after an
   * execution fails with "sandbox crashed" that module must not be handed out again. Its memory
   * limit is QuickJS's own accounting only, which this build cannot enforce for large
   * allocations (it has no `malloc_usable_size`, so it counts per-allocation overhead only).
   */
  loadQuickJS?: () => Promise<QuickJSModuleLike>;
}

/**
 * Builds a `script` node type.
 *
 * Output: the script's return value as JSON (`undefined` → `null`; `toJSON` honoured; a returned
 * promise is settled by running the sandbox's job queue). Errors (all `EngineError`s,
 * code SCRIPT_ERROR unless said otherwise):
 * - a syntax error in `code`: non-retryable, with `details.line`;
 * - an error thrown by the script: retryable (a script may read state that changes), with
 *   `details.name` and `details.stack`;
 * - the memory limit ("memory limit" in the message) or the stack limit: non-retryable;
 * - a result that is not JSON (BigInt, cycles): non-retryable;
 * - the time limit: TIMEOUT, retryable;
 * - `ctx.signal` aborted: see `abortError` (abort.ts);
 * - its thread died: retryable; its thread ran out of heap (a huge result or input): non-retryable.
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
      if (custom !== undefined) {
        const module = await custom();
        return executeOn(module, ctx);
      }
      // The data crosses as JSON texts and the result comes back as one (see script-sandbox.ts).
      const data = scriptData(ctx);
      const tooBig = dataTooBig(data, ctx.config.memoryLimitBytes);
      if (tooBig !== undefined) throw tooBig;
      const threadCtx: NodeContext<ScriptThreadConfig> = {
        ...ctx,
        config: { ...ctx.config, data },
        input: null,
        variables: NO_DATA,
        steps: NO_DATA,
      };
      const pool = options.pool ?? defaultThreadPool();
      const result = await pool.run(SCRIPT_THREAD_MODULE, threadCtx, { code: 'SCRIPT_ERROR', what: 'script' });
      return { output: 'output' in result ? parseScriptResult(result.output as string) : null };
    },
  };
}

/** The `script` node type with default options. */
export const scriptNode: NodeType<ScriptConfig> = createScriptNodeType();
