/**
 * Node types for the process tests: they leave a trace of every call in a shared log file, so a
 * parent process can count calls per (instance, node) across worker processes and crashes.
 *
 * A log line is `instanceId:nodeId:attempt:idempotencyKey <epoch ms> <pid>`; lines are written
 * with one `appendFileSync` (O_APPEND), which keeps small lines whole across processes.
 */
import fs from 'node:fs';
import { z } from 'zod';
import { EngineError } from '../../engine/errors';
import { abortError } from '../../engine/nodes/abort';
import { createDefaultRegistry, type AnyNodeType, type NodeRegistry } from '../../engine/nodes/registry';
import type { NodeContext, NodeType } from '../../engine/nodes/types';

/** One line of the call log. */
export interface CallLine {
  instanceId: number;
  nodeId: string;
  attempt: number;
  idempotencyKey: string;
  /** Epoch ms when the handler wrote the line. */
  at: number;
  pid: number;
}

/** Parses the call log text (missing file: no calls). */
export function parseCallLog(text: string): CallLine[] {
  const out: CallLine[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const [head = '', at = '', pid = ''] = line.split(' ');
    const [inst = '', nodeId = '', attempt = '', ...key] = head.split(':');
    out.push({
      instanceId: Number(inst),
      nodeId,
      attempt: Number(attempt),
      idempotencyKey: key.join(':'),
      at: Number(at),
      pid: Number(pid),
    });
  }
  return out;
}

function appendCall(file: string, ctx: NodeContext<unknown>): void {
  fs.appendFileSync(
    file,
    `${ctx.instanceId}:${ctx.nodeId}:${ctx.attempt}:${ctx.idempotencyKey} ${Date.now()} ${process.pid}\n`,
  );
}

/** Resolves after `ms`, or rejects with the abort error when `signal` fires first. */
function sleep(ms: number, signal: AbortSignal, what: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal.aborted) {
      reject(abortError(signal, what));
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortError(signal, what));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

const CountConfig = z.strictObject({ delayMs: z.number().int().min(0).optional() });
const FlakyConfig = z.strictObject({
  failures: z.number().int().min(0),
  delayMs: z.number().int().min(0).optional(),
});
const SlowConfig = z.strictObject({ ms: z.number().int().min(0) });
const StuckConfig = z.strictObject({});
const HogConfig = z.strictObject({ ms: z.number().int().min(0) });

/** Observers for in-process tests. */
export interface TestNodeHooks {
  /** Called when a `stuck` handler's signal aborts, with the abort reason. */
  onStuckAbort?(ctx: NodeContext<unknown>, reason: unknown): void;
}

/**
 * The test node types, logging calls to `callLog`:
 * - `count` `{ delayMs? }`: waits `delayMs` (abortable), then logs the call (its effect) and
 *   completes with `{ attempt }`;
 * - `flaky` `{ failures, delayMs? }`: logs the call, then fails (retryable) while the log holds at
 *   most `failures` calls of this (instance, node), so the first `failures` calls fail;
 * - `slow` `{ ms }`: sleeps `ms` honoring the signal; logs nothing;
 * - `stuck` `{}`: logs the call, then never answers until its signal aborts;
 * - `hog` `{ ms }`: logs the call, then holds the process's thread for `ms` (a blocking wait, as a
 *   CPU-bound handler would: no timer, heartbeat or commit of this process runs meanwhile).
 */
export function createTestNodeTypes(callLog: string, hooks: TestNodeHooks = {}): AnyNodeType[] {
  const count: NodeType<z.output<typeof CountConfig>> = {
    type: 'count',
    title: 'Count',
    description: 'Logs each call',
    icon: 'hash',
    group: 'Test',
    configSchema: CountConfig,
    async execute(ctx) {
      if (ctx.config.delayMs) await sleep(ctx.config.delayMs, ctx.signal, 'count');
      appendCall(callLog, ctx);
      return { output: { attempt: ctx.attempt } };
    },
  };
  const flaky: NodeType<z.output<typeof FlakyConfig>> = {
    type: 'flaky',
    title: 'Flaky',
    description: 'Fails its first calls',
    icon: 'zap',
    group: 'Test',
    configSchema: FlakyConfig,
    async execute(ctx) {
      if (ctx.config.delayMs) await sleep(ctx.config.delayMs, ctx.signal, 'flaky');
      appendCall(callLog, ctx);
      const calls = parseCallLog(fs.readFileSync(callLog, 'utf8')).filter(
        (l) => l.instanceId === ctx.instanceId && l.nodeId === ctx.nodeId,
      ).length;
      if (calls <= ctx.config.failures)
        throw new EngineError('HANDLER_ERROR', `flaky failure on call ${calls}`, { retryable: true });
      return { output: { calls } };
    },
  };
  const slow: NodeType<z.output<typeof SlowConfig>> = {
    type: 'slow',
    title: 'Slow',
    description: 'Sleeps',
    icon: 'clock',
    group: 'Test',
    configSchema: SlowConfig,
    async execute(ctx) {
      await sleep(ctx.config.ms, ctx.signal, 'slow');
      return { output: { sleptMs: ctx.config.ms } };
    },
  };
  const stuck: NodeType<z.output<typeof StuckConfig>> = {
    type: 'stuck',
    title: 'Stuck',
    description: 'Never answers',
    icon: 'pause',
    group: 'Test',
    configSchema: StuckConfig,
    execute(ctx) {
      appendCall(callLog, ctx);
      return new Promise((_, reject) => {
        const onAbort = () => {
          hooks.onStuckAbort?.(ctx as NodeContext<unknown>, ctx.signal.reason);
          reject(abortError(ctx.signal, 'stuck'));
        };
        if (ctx.signal.aborted) onAbort();
        else ctx.signal.addEventListener('abort', onAbort, { once: true });
      });
    },
  };
  const hog: NodeType<z.output<typeof HogConfig>> = {
    type: 'hog',
    title: 'Hog',
    description: 'Holds the thread',
    icon: 'cpu',
    group: 'Test',
    configSchema: HogConfig,
    execute(ctx) {
      appendCall(callLog, ctx);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ctx.config.ms);
      return Promise.resolve({ output: { heldMs: ctx.config.ms } });
    },
  };
  return [count, flaky, slow, stuck, hog] as AnyNodeType[];
}

/** The built-ins plus the test node types. */
export function createTestRegistry(callLog: string, hooks: TestNodeHooks = {}): NodeRegistry {
  return createDefaultRegistry({ types: createTestNodeTypes(callLog, hooks) });
}
