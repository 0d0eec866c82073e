/**
 * What the engine's operation modules (workflows.ts, manual-actions.ts, engine.ts) share: the
 * storage backend, the clock, the node registry, the worker, and `transact` — one write
 * transaction running state-machine transitions, whose events are emitted and whose aborts are
 * applied once it committed.
 */
import { EngineError } from '../errors';
import { WorkflowSchema } from '../dsl/schema';
import type { NodeRegistry } from '../nodes/registry';
import type { StorageBackend, WorkflowVersionRow, WriteQueries } from '../store/port';
import type { Clock } from './clock';
import { compileWorkflow, type CompiledWorkflow } from './compiled';
import type { EventHub } from './events';
import type { Worker, WorkerOptions } from './worker';
import { makeTx, type Dispatch, type Tx } from './state-machine/tx';

/** The engine's shared parts (see the module doc). */
export interface RuntimeContext {
  readonly storage: StorageBackend;
  readonly clock: Clock;
  readonly registry: NodeRegistry;
  readonly hub: EventHub;
  readonly worker: Worker;
  readonly opts: WorkerOptions;
  /** Workflow versions compiled so far, by id (versions never change). */
  readonly compiled: Map<number, CompiledWorkflow>;
  /** Whether saves check the workflows a definition calls (EngineOptions.checkWorkflowCalls). */
  readonly checkWorkflowCalls: boolean;
  /** Tells this process's worker that the live schedules changed (it looks at them at its next turn). */
  schedulesChanged(): void;
}

/**
 * The compiled workflow version `id`: from the cache, else read through `q` (a write
 * transaction's queries) and compiled.
 *
 * @throws EngineError NOT_FOUND; INVALID_WORKFLOW when a node type is not registered here.
 */
export function workflowIn(ctx: RuntimeContext, id: number, q?: WriteQueries): CompiledWorkflow {
  const hit = ctx.compiled.get(id);
  if (hit) return hit;
  if (!q) throw new EngineError('INTERNAL', `workflow version ${id} is not loaded in this process`);
  return compile(ctx, q.workflows.byId(id), id);
}

/** {@link workflowIn} outside a transaction (reads through the read model when not cached). */
export async function loadWorkflow(ctx: RuntimeContext, id: number): Promise<CompiledWorkflow> {
  return ctx.compiled.get(id) ?? compile(ctx, await ctx.storage.read.workflowById(id), id);
}

function compile(ctx: RuntimeContext, row: WorkflowVersionRow | undefined, id: number): CompiledWorkflow {
  if (!row) throw new EngineError('NOT_FOUND', `workflow id ${id} does not exist`);
  const wf = compileWorkflow(row.id, row.version, WorkflowSchema.parse(JSON.parse(row.dslJson)), (t) => ctx.registry.get(t));
  ctx.compiled.set(id, wf);
  return wf;
}

/**
 * Runs `fn` in one write transaction with a {@link Tx} dated inside it (after any wait for the
 * write lock), then emits its events and applies its aborts. `dispatch`, when given, is read
 * inside the transaction too (eager dispatch takes its slots there).
 *
 * @throws whatever `fn` throws (nothing it did is kept), or the backend's write errors.
 */
export async function transact<T>(ctx: RuntimeContext, fn: (tx: Tx, q: WriteQueries) => T, dispatch?: (now: number) => Dispatch | undefined): Promise<T> {
  const { result, tx } = await ctx.storage.write((q) => {
    const now = ctx.clock.now();
    const t = makeTx(q, now, (id) => workflowIn(ctx, id, q), dispatch?.(now));
    return { result: fn(t, q), tx: t };
  });
  ctx.hub.emit(tx.events);
  ctx.worker.applyAborts(tx.aborts);
  return result;
}
