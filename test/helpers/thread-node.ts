/**
 * A thread module for tests of threaded node types ({@link NodeThread}): the pool imports it in
 * its threads and calls `execute`, whose behaviour `config.action` picks:
 *
 * - `spin`: busy-loops `config.ms` ms without yielding (a CPU-bound handler), logs `spinning`
 *   first; returns `{ spunMs }`;
 * - `mark`: appends `<idempotencyKey>\n` to `config.file`, then returns `{ marked: true }`
 *   (tests read the file to see which attempts ran);
 * - `exit`: ends its thread with `process.exit(config.code)`;
 * - `grow`: keeps small objects until the thread's heap limit ends the thread;
 * - `throw`: throws an EngineError with `config.code`, non-retryable;
 * - `echo`: returns its input, variables, steps, config and ids as seen in the thread.
 */
import fs from 'node:fs';
import { EngineError, type ErrorCode } from '../../engine/errors';
import type { NodeContext, NodeResult, NodeThread } from '../../engine/nodes/types';

/** Config of the test's threaded types. */
export interface ThreadNodeConfig {
  action: 'spin' | 'mark' | 'exit' | 'grow' | 'throw' | 'echo';
  ms?: number;
  file?: string;
  code?: number | string;
}

/** This module, as a threaded type's `thread`. */
export const THREAD_NODE: NodeThread = { module: new URL(import.meta.url) };

/** Runs one attempt in a pool thread; see the module doc. */
export function execute(ctx: NodeContext<ThreadNodeConfig>): NodeResult {
  const { action } = ctx.config;
  switch (action) {
    case 'spin': {
      ctx.log('spinning');
      const started = performance.now();
      const until = started + (ctx.config.ms ?? 0);
      while (performance.now() < until) {
        // busy: nothing in this thread yields
      }
      return { output: { spunMs: Math.round(performance.now() - started) } };
    }
    case 'mark':
      fs.appendFileSync(ctx.config.file ?? '', `${ctx.idempotencyKey}\n`);
      return { output: { marked: true } };
    case 'exit':
      process.exit(Number(ctx.config.code ?? 1));
      break;
    case 'grow': {
      const keep: unknown[] = [];
      for (;;) keep.push({ n: keep.length, s: `item ${keep.length}` });
    }
    case 'throw':
      throw new EngineError(String(ctx.config.code ?? 'HANDLER_ERROR') as ErrorCode, 'thrown in the thread', {
        retryable: false,
        details: { where: 'thread' },
      });
    case 'echo':
      return {
        output: {
          input: ctx.input,
          variables: ctx.variables,
          steps: ctx.steps,
          config: ctx.config,
          instanceId: ctx.instanceId,
          nodeId: ctx.nodeId,
          attempt: ctx.attempt,
          now: ctx.now(),
          aborted: ctx.signal.aborted,
        },
      };
  }
  throw new Error(`unknown action ${String(action)}`);
}
