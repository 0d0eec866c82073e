/**
 * Custom node types that record every call, for integration tests of the runtime.
 *
 * Each test builds a fresh {@link Probe}; its types close over the probe, so counters never leak
 * between tests. Failures are deterministic (counted per instance and node), never random.
 */
import { z } from 'zod';
import { EngineError } from '../../engine/errors';
import { createDefaultRegistry, type NodeRegistry } from '../../engine/nodes/registry';
import type { NodeContext, NodeType } from '../../engine/nodes/types';
import type { Engine, SqliteEngine } from '../../engine/runtime/engine';

/** One handler call as a probe type saw it. */
export interface ProbeCall {
  type: string;
  instanceId: number;
  nodeId: string;
  attempt: number;
  idempotencyKey: string;
  /** Engine clock at the call, epoch ms. */
  at: number;
  input: unknown;
}

/** An abort a probe handler saw on its `ctx.signal`. */
export interface ProbeAbort {
  instanceId: number;
  nodeId: string;
  attempt: number;
  /** The abort reason's code when it is an EngineError, else its name or text. */
  reason: string;
}

const FlakyConfig = z.looseObject({
  /** Attempts that fail (per instance and node) before one succeeds. */
  failTimes: z.number().int().min(0).default(Number.MAX_SAFE_INTEGER),
  /** Whether the failures may be retried (default true). */
  retryable: z.boolean().default(true),
  result: z.unknown().optional(),
});
const CounterConfig = z.looseObject({ result: z.unknown().optional() });
const GateConfig = z.looseObject({ result: z.unknown().optional(), fail: z.boolean().optional(), waitMs: z.number().int().min(0).optional() });
const BigConfig = z.looseObject({ bytes: z.number().int().min(0) });
const UndoConfig = z.looseObject({});

const key = (instanceId: number, nodeId: string): string => `${instanceId}:${nodeId}`;

function reasonOf(signal: AbortSignal): string {
  const r: unknown = signal.reason;
  if (r instanceof EngineError) return r.code;
  if (r instanceof Error) return r.name;
  return String(r);
}

/**
 * Records calls of the probe types and lets a test release `gate` handlers or make `undo`
 * compensations fail.
 *
 * Types: `counter` (completes with `config.result`, default `{ n }`), `flaky` (fails
 * `config.failTimes` times per instance and node, then completes), `stuck` (never answers;
 * rejects when aborted), `gate` (answers when the test calls `release`; then fails with
 * `config.fail`, or waits `config.waitMs` like a delay), `undo` (a compensation
 * that records its call; fails while `failingUndo` holds the node id), `big` (completes with a
 * string of `config.bytes` characters).
 */
export class Probe {
  readonly calls: ProbeCall[] = [];
  readonly aborts: ProbeAbort[] = [];
  /** Node ids whose `undo` compensation fails while listed. */
  readonly failingUndo = new Set<string>();
  private readonly gates = new Map<string, () => void>();

  /** Calls of `nodeId` (of `instanceId` when given). */
  callsOf(nodeId: string, instanceId?: number): ProbeCall[] {
    return this.calls.filter((c) => c.nodeId === nodeId && (instanceId === undefined || c.instanceId === instanceId));
  }

  /** Whether a `gate` handler of (instance, node) is waiting to be released. */
  gateOpen(instanceId: number, nodeId: string): boolean {
    return this.gates.has(key(instanceId, nodeId));
  }

  /** Lets the waiting `gate` handler of (instance, node) complete. @throws if none waits. */
  release(instanceId: number, nodeId: string): void {
    const k = key(instanceId, nodeId);
    const resolve = this.gates.get(k);
    if (!resolve) throw new Error(`no gate waits at ${k}`);
    this.gates.delete(k);
    resolve();
  }

  private record(ctx: NodeContext<unknown>): ProbeCall {
    const call: ProbeCall = {
      type: ctx.type,
      instanceId: ctx.instanceId,
      nodeId: ctx.nodeId,
      attempt: ctx.attempt,
      idempotencyKey: ctx.idempotencyKey,
      at: ctx.now(),
      input: ctx.input,
    };
    this.calls.push(call);
    return call;
  }

  private waitForAbort(ctx: NodeContext<unknown>, onRelease?: (resolve: () => void) => void): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        this.aborts.push({ instanceId: ctx.instanceId, nodeId: ctx.nodeId, attempt: ctx.attempt, reason: reasonOf(ctx.signal) });
        reject(ctx.signal.reason instanceof Error ? ctx.signal.reason : new Error('aborted'));
      };
      if (ctx.signal.aborted) onAbort();
      else ctx.signal.addEventListener('abort', onAbort, { once: true });
      onRelease?.(resolve);
    });
  }

  /** The probe's node types. */
  types(): NodeType<unknown>[] {
    const counter: NodeType<z.output<typeof CounterConfig>> = {
      type: 'counter',
      title: 'Counter',
      description: 'Counts its calls',
      icon: 'hash',
      group: 'Test',
      configSchema: CounterConfig,
      execute: (ctx) => {
        this.record(ctx);
        const n = this.callsOf(ctx.nodeId, ctx.instanceId).length;
        return Promise.resolve({ output: ctx.config.result !== undefined ? ctx.config.result : { n } });
      },
    };
    const flaky: NodeType<z.output<typeof FlakyConfig>> = {
      type: 'flaky',
      title: 'Flaky',
      description: 'Fails a set number of times, then succeeds',
      icon: 'zap',
      group: 'Test',
      configSchema: FlakyConfig,
      execute: (ctx) => {
        this.record(ctx);
        const n = this.callsOf(ctx.nodeId, ctx.instanceId).length;
        if (n <= ctx.config.failTimes) {
          if (!ctx.config.retryable) throw new EngineError('HANDLER_ERROR', `flaky failure ${n} (fatal)`, { retryable: false });
          return Promise.reject(new Error(`flaky failure ${n}`));
        }
        return Promise.resolve({ output: ctx.config.result !== undefined ? ctx.config.result : { succeededOnCall: n } });
      },
    };
    const stuck: NodeType<z.output<typeof UndoConfig>> = {
      type: 'stuck',
      title: 'Stuck',
      description: 'Never answers unless aborted',
      icon: 'pause',
      group: 'Test',
      configSchema: UndoConfig,
      execute: async (ctx) => {
        this.record(ctx);
        await this.waitForAbort(ctx);
        return { output: 'unreachable' };
      },
    };
    const gate: NodeType<z.output<typeof GateConfig>> = {
      type: 'gate',
      title: 'Gate',
      description: 'Answers when the test releases it',
      icon: 'lock',
      group: 'Test',
      configSchema: GateConfig,
      execute: async (ctx) => {
        this.record(ctx);
        await this.waitForAbort(ctx, (resolve) => this.gates.set(key(ctx.instanceId, ctx.nodeId), resolve));
        if (ctx.config.fail === true) throw new Error(`gate ${ctx.nodeId} failed on release`);
        if (ctx.config.waitMs !== undefined) return { wait: { until: ctx.now() + ctx.config.waitMs } };
        return { output: ctx.config.result !== undefined ? ctx.config.result : { released: true } };
      },
    };
    const undo: NodeType<z.output<typeof UndoConfig>> = {
      type: 'undo',
      title: 'Undo',
      description: 'A compensation that records its call',
      icon: 'undo',
      group: 'Test',
      configSchema: UndoConfig,
      execute: (ctx) => {
        this.record(ctx);
        if (this.failingUndo.has(ctx.nodeId)) return Promise.reject(new Error(`undo of ${ctx.nodeId} failed`));
        return Promise.resolve({ output: { undone: ctx.nodeId } });
      },
    };
    const big: NodeType<z.output<typeof BigConfig>> = {
      type: 'big',
      title: 'Big',
      description: 'Completes with a large string',
      icon: 'database',
      group: 'Test',
      configSchema: BigConfig,
      execute: (ctx) => {
        this.record(ctx);
        return Promise.resolve({ output: 'x'.repeat(ctx.config.bytes) });
      },
    };
    return [counter, flaky, stuck, gate, undo, big] as NodeType<unknown>[];
  }

  /** A registry with the built-ins and the probe's types. */
  registry(): NodeRegistry {
    return createDefaultRegistry({ types: this.types() });
  }
}

/** Lets handlers, expressions and their promise chains run (one macrotask turn). */
export function turn(ms = 0): Promise<void> {
  return new Promise<void>((resolve) => setTimeout(resolve, ms));
}

/**
 * Drives the worker by hand (`engine.tick()`, then one turn) until `done()` holds.
 *
 * The engine's clock does not move here: tests with a ManualClock move it themselves.
 *
 * @throws Error naming `what` when `done()` is still false after `budgetMs` of real time.
 */
export async function tickUntil(engine: Engine, done: () => boolean | Promise<boolean>, what: string, budgetMs = 10_000): Promise<void> {
  const deadline = Date.now() + budgetMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`not reached within ${budgetMs} ms of ticks: ${what}`);
    await engine.tick();
    await turn();
  }
}

/** Runs `n` worker turns by hand; returns the work each turn reported. */
export async function tickTimes(engine: Engine, n: number): Promise<number[]> {
  const worked: number[] = [];
  for (let i = 0; i < n; i++) {
    worked.push(await engine.tick());
    await turn();
  }
  return worked;
}

/** Schedule rows of an instance (`kind` and due time), read from the file. */
export function scheduleRows(engine: SqliteEngine, instanceId: number): { kind: string; node_id: string | null; next_run_at: number; lease_owner: string | null }[] {
  return engine.db.raw
    .prepare<[number], { kind: string; node_id: string | null; next_run_at: number; lease_owner: string | null }>(
      'SELECT kind, node_id, next_run_at, lease_owner FROM schedule WHERE instance_id = ? ORDER BY id',
    )
    .all(instanceId);
}

/** A node's status in an instance (undefined when the node is unknown). */
export async function nodeStatus(engine: Engine, instanceId: number, nodeId: string): Promise<string | undefined> {
  return (await engine.getInstance(instanceId)).nodes.find((n) => n.id === nodeId)?.status;
}

/** Whether `pred` holds for every item, each awaited in turn (Array#every with an async predicate). */
export async function everyOf<T>(items: readonly T[], pred: (item: T) => boolean | Promise<boolean>): Promise<boolean> {
  for (const item of items) if (!(await pred(item))) return false;
  return true;
}
