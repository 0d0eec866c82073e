/**
 * Runs one claimed step to an {@link Outcome}, between transactions: renders the node's input
 * and config, calls its handler (or its compensation) under the attempt's AbortSignal and
 * `timeoutMs`, and settles the result (size checks, output mapping, edge decisions) or the failure
 * (retryable or final, error edges decided). Never touches the database and never throws.
 */
import { EngineError, serializeError } from '../errors';
import { applyInput, renderTemplates, type ExpressionScope } from '../dsl/expressions';
import type { NodeContext, NodeResult } from '../nodes/types';
import type { Clock } from './clock';
import type { CompiledNode, CompiledWorkflow } from './compiled';
import { decideEdges, settleResult } from './outcome';
import type { ClaimedStep } from './state-machine/claim';
import type { EdgeDecision } from './state-machine/node';
import type { Outcome } from './state-machine/outcome';

/** What the executor needs of its engine. */
export interface ExecutorDeps {
  clock: Clock;
  /** Largest node result / variables document, bytes. */
  maxResultBytes: number;
  /** Appends a `node.log` history event for a handler (best-effort). */
  log(step: ClaimedStep, message: string, data: unknown): void;
}

/** The signal an instant type's handler gets: it never aborts (the handler settles at once). */
const NEVER_ABORTED: AbortSignal = new AbortController().signal;

/**
 * Runs `step` of `wf` under `controller` (undefined for an instant type: nothing to abort) and
 * returns its outcome. Never throws.
 */
export async function executeStep(deps: ExecutorDeps, wf: CompiledWorkflow, step: ClaimedStep, controller: AbortController | undefined): Promise<Outcome> {
  const node = wf.nodes.get(step.nodeId);
  if (!node) {
    const error = new EngineError('INTERNAL', `node "${step.nodeId}" is not in workflow ${wf.name} v${wf.version}`).toJSON();
    return { kind: 'failed', step, error, final: true, decisions: [] };
  }
  const scope: ExpressionScope = step.error === undefined ? { variables: step.variables, steps: step.steps } : { variables: step.variables, steps: step.steps, error: step.error };
  try {
    switch (step.row.kind) {
      case 'run': {
        if (step.exhausted) {
          const err = new EngineError('LEASE_LOST', `attempt ${step.attempt} of node "${node.id}" was lost with its worker and no attempts are left`, { retryable: false });
          return await failure(step, node, err, scope);
        }
        return await runHandler(deps, step, node, scope, controller);
      }
      case 'timer': {
        const wait = (step.wait ?? {}) as { output?: unknown; until?: number };
        const settled = await settleResult(node, wait.output ?? { firedAt: deps.clock.now(), until: wait.until }, scope, deps.maxResultBytes);
        return { kind: 'completed', step, ...settled };
      }
      case 'timeout': {
        const err = new EngineError('TIMEOUT', `node "${node.id}" timed out after ${node.def.timeoutMs ?? 0} ms waiting for a decision`);
        return await failure(step, node, err, scope);
      }
      case 'compensate':
        return await runCompensation(deps, step, node, scope, controller);
      default:
        throw new EngineError('INTERNAL', `unknown schedule kind ${String(step.row.kind)}`);
    }
  } catch (err) {
    return failure(step, node, err, scope);
  }
}

/** The context a handler (or its compensation) gets. */
function context<C>(deps: ExecutorDeps, step: ClaimedStep, node: CompiledNode, type: string, config: C, input: unknown, signal: AbortSignal, compensation: boolean): NodeContext<C> {
  const ctx: NodeContext<C> = {
    instanceId: step.row.instanceId,
    nodeId: node.id,
    type,
    attempt: step.attempt,
    idempotencyKey: compensation ? `${step.row.instanceId}:${node.id}:compensate` : `${step.row.instanceId}:${node.id}`,
    config,
    input,
    variables: Object.freeze({ ...step.variables }),
    steps: step.steps,
    signal,
    now: () => deps.clock.now(),
    log: (message, data) => deps.log(step, message, data),
  };
  if (compensation) ctx.result = step.ownResult ?? null;
  return ctx;
}

async function runHandler(deps: ExecutorDeps, step: ClaimedStep, node: CompiledNode, scope: ExpressionScope, controller: AbortController | undefined): Promise<Outcome> {
  const input = await applyInput(node.def.input, scope);
  const rawConfig = node.def.config ?? {};
  const rendered = node.type.templates === false ? rawConfig : await renderTemplates(rawConfig, scope);
  const parsed = node.type.configSchema.safeParse(rendered);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    const where = first ? `config.${first.path.join('.')}` : 'config';
    throw new EngineError('INVALID_INPUT', `node "${node.id}": ${where} ${first?.message ?? 'is invalid'} (after templates)`, {
      retryable: false,
      details: parsed.error.issues,
    });
  }
  // Approvals wait for a person: their timeoutMs bounds the wait, not the handler.
  const timeoutMs = node.def.type === 'approval' ? undefined : node.def.timeoutMs;
  const result: NodeResult = await withTimeout(timeoutMs, controller, (signal) =>
    node.type.execute(context(deps, step, node, node.def.type, parsed.data, input, signal, false)),
  );
  if ('wait' in result) {
    const w = result.wait;
    if ('until' in w) {
      const output = 'output' in result ? result.output : undefined;
      return { kind: 'wait', step, wait: { kind: 'timer', until: w.until, ...(output === undefined ? {} : { output }) } };
    }
    return {
      kind: 'wait',
      step,
      wait: { kind: 'approval', ...(w.prompt === undefined ? {} : { prompt: w.prompt }), ...(node.def.timeoutMs === undefined ? {} : { timeoutMs: node.def.timeoutMs }) },
    };
  }
  const settled = await settleResult(node, result.output, scope, deps.maxResultBytes);
  return { kind: 'completed', step, ...settled };
}

async function runCompensation(deps: ExecutorDeps, step: ClaimedStep, node: CompiledNode, scope: ExpressionScope, controller: AbortController | undefined): Promise<Outcome> {
  const spec = node.def.compensate;
  const comp = node.compensate;
  if (!spec || !comp) return { kind: 'compensated', step, result: undefined };
  try {
    const compScope: ExpressionScope = { ...scope, result: step.ownResult ?? null };
    const input = spec.input === undefined ? { ...step.variables } : await applyInput(spec.input, compScope);
    const rawConfig = spec.config ?? {};
    const rendered = comp.type.templates === false ? rawConfig : await renderTemplates(rawConfig, compScope);
    const parsed = comp.type.configSchema.safeParse(rendered);
    if (!parsed.success) {
      throw new EngineError('INVALID_INPUT', `node "${node.id}": compensate.config is invalid: ${parsed.error.issues[0]?.message ?? ''}`, { retryable: false });
    }
    const r = await withTimeout(spec.timeoutMs, controller, (signal) =>
      comp.type.execute(context(deps, step, node, spec.type, parsed.data, input, signal, true)),
    );
    return { kind: 'compensated', step, result: 'output' in r ? r.output : undefined };
  } catch (err) {
    const error = serializeError(err);
    const final = error.retryable === false || step.attempt >= comp.retry.maxAttempts;
    return { kind: 'compensation_failed', step, error, final };
  }
}

/**
 * Runs `fn` with an AbortSignal cut at `timeoutMs` (a timed-out attempt is a failed attempt:
 * DESIGN.md "Rules pinned"); the attempt ends when the signal aborts, whether or not the handler
 * has returned by then.
 */
async function withTimeout<T>(timeoutMs: number | undefined, controller: AbortController | undefined, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  if (!controller) return fn(NEVER_ABORTED);
  let timer: NodeJS.Timeout | undefined;
  if (timeoutMs !== undefined) {
    timer = setTimeout(() => controller.abort(new EngineError('TIMEOUT', `attempt timed out after ${timeoutMs} ms`)), timeoutMs);
  }
  const aborted = new Promise<never>((_, reject) => {
    const onAbort = () => reject(controller.signal.reason instanceof Error ? controller.signal.reason : new EngineError('CANCELLED', 'aborted'));
    if (controller.signal.aborted) onAbort();
    else controller.signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([fn(controller.signal), aborted]);
  } finally {
    if (timer) clearTimeout(timer);
  }
}

/** A failed attempt: final when not retryable or out of attempts; then its error edges are decided. */
async function failure(step: ClaimedStep, node: CompiledNode, err: unknown, scope: ExpressionScope): Promise<Outcome> {
  const error = serializeError(err);
  const final = error.retryable === false || step.attempt >= step.attemptLimit;
  let decisions: EdgeDecision[] = [];
  if (final && node.errorOut.length > 0) {
    try {
      decisions = await decideEdges(node.errorOut, { ...scope, error });
    } catch (e) {
      return { kind: 'failed', step, error: serializeError(e), final: true, decisions: [] };
    }
  }
  return { kind: 'failed', step, error, final, decisions };
}
