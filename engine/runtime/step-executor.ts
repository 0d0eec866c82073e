/**
 * Runs one claimed step to an {@link Outcome}, between transactions: renders the node's input
 * and config, calls its handler (or its compensation) under the attempt's AbortSignal and
 * `timeoutMs`, and settles the result (size checks, output mapping, edge decisions) or the failure
 * (retryable or final, error edges decided). Never touches the database and never throws.
 */
import { EngineError, serializeError } from '../errors';
import { checkVariables } from '../dsl/input-schema';
import { slotFor } from './concurrency-key';
import { MAX_CHILDREN_PER_NODE, type ChildrenSpec } from '../nodes/types';
import type { ChildResult } from '../store/port';
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
  /** The latest (or pinned) version of workflow `name`, compiled. @throws EngineError NOT_FOUND (not retryable) */
  childWorkflow(name: string, version?: number): Promise<CompiledWorkflow>;
  /** The children of a node attempt, in item order. */
  childResults(instanceId: number, nodeId: string, attempt: number): Promise<ChildResult[]>;
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
        const kind = step.wait?.kind;
        const what = kind === 'event' ? `for event "${step.wait?.kind === 'event' ? step.wait.name : ''}"` : kind === 'children' ? 'for its child instances' : 'for a decision';
        const err = new EngineError('TIMEOUT', `node "${node.id}" timed out after ${node.def.timeoutMs ?? 0} ms waiting ${what}`);
        return await failure(step, node, err, scope);
      }
      case 'wake':
        return await settleWake(deps, step, node, scope);
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
  if (step.pin !== undefined) {
    // A test run's pinned node: its result, as the handler would have returned it, and no call out.
    deps.log(step, 'pinned result used (test run): the handler did not run', { pinned: true });
    const settled = await settleResult(node, step.pin.result, scope, deps.maxResultBytes);
    return { kind: 'completed', step, ...settled };
  }
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
  // Approvals, events and child instances are waited for: their timeoutMs bounds the wait, not the handler.
  const timeoutMs = node.type.timeoutBoundsWait === true ? undefined : node.def.timeoutMs;
  const result: NodeResult = await withTimeout(timeoutMs, controller, (signal) =>
    node.type.execute(context(deps, step, node, node.def.type, parsed.data, input, signal, false)),
  );
  if ('wait' in result) {
    const w = result.wait;
    if ('until' in w) {
      const output = 'output' in result ? result.output : undefined;
      return { kind: 'wait', step, wait: { kind: 'timer', until: w.until, ...(output === undefined ? {} : { output }) } };
    }
    const waitMs = node.def.timeoutMs === undefined ? {} : { timeoutMs: node.def.timeoutMs };
    if ('event' in w) return { kind: 'wait', step, wait: { kind: 'event', name: w.event.name, ...(w.event.key === undefined ? {} : { key: w.event.key }), ...waitMs } };
    if ('children' in w) return { kind: 'wait', step, wait: { kind: 'children', ...(await childrenRequest(deps, node, w.children, step.variables)), ...waitMs } };
    return {
      kind: 'wait',
      step,
      wait: { kind: 'approval', ...(w.prompt === undefined ? {} : { prompt: w.prompt }), ...(node.def.timeoutMs === undefined ? {} : { timeoutMs: node.def.timeoutMs }) },
    };
  }
  const settled = await settleResult(node, result.output, scope, deps.maxResultBytes);
  return { kind: 'completed', step, ...settled };
}

/**
 * What a node's children request becomes: the workflow version resolved now (the latest, unless
 * pinned), each child's variables checked against its `inputSchema` and the size limit, as JSON.
 *
 * @throws EngineError NOT_FOUND, INVALID_VARIABLES (naming the item), INVALID_INPUT (too many
 *   items): none retryable.
 */
async function childrenRequest(deps: ExecutorDeps, node: CompiledNode, spec: ChildrenSpec, globals: Record<string, unknown>) {
  // What each child starts with: its input, over the globals when it is merged with them then
  // (checked here with the globals as they are now).
  const full = (vars: Record<string, unknown>) => (spec.mergeGlobals === true ? { ...globals, ...vars } : vars);
  if (spec.inputs.length > MAX_CHILDREN_PER_NODE) {
    throw new EngineError('INVALID_INPUT', `node "${node.id}": ${spec.inputs.length} child instances asked for, above the limit of ${MAX_CHILDREN_PER_NODE}`, { retryable: false });
  }
  const wf = await deps.childWorkflow(spec.workflow, spec.version);
  const inputs = spec.inputs.map((vars, i) => {
    const item = spec.mode === 'map' ? `item ${i}: ` : '';
    try {
      checkVariables(wf.def, full(vars));
    } catch (err) {
      if (!(err instanceof EngineError)) throw err;
      throw new EngineError(err.code, `node "${node.id}": ${item}the child's variables: ${err.message}`, { retryable: false, details: err.details });
    }
    const json = JSON.stringify(vars);
    const bytes = spec.mergeGlobals === true ? Buffer.byteLength(JSON.stringify(full(vars))) : Buffer.byteLength(json);
    if (bytes > deps.maxResultBytes) {
      throw new EngineError('INVALID_VARIABLES', `node "${node.id}": ${item}the child's variables are ${bytes} bytes, above the limit of ${deps.maxResultBytes}`, { retryable: false });
    }
    return json;
  });
  let concurrencyKeys: string[] | undefined;
  if (wf.def.concurrency !== undefined) {
    concurrencyKeys = [];
    for (const [i, vars] of spec.inputs.entries()) {
      try {
        concurrencyKeys.push((await slotFor(wf, full(vars))) as string);
      } catch (err) {
        if (!(err instanceof EngineError)) throw err;
        const item = spec.mode === 'map' ? `item ${i}: ` : '';
        throw new EngineError(err.code, `node "${node.id}": ${item}the child's ${err.message}`, { retryable: false, details: err.details });
      }
    }
  }
  return {
    mode: spec.mode,
    workflowId: wf.id,
    workflow: wf.name,
    version: wf.version,
    inputs,
    ...(concurrencyKeys === undefined ? {} : { concurrencyKeys }),
    maxConcurrency: Math.max(1, Math.floor(spec.maxConcurrency)),
    toleratedFailures: Math.max(0, Math.floor(spec.toleratedFailures)),
    ...(spec.mergeGlobals === true ? { mergeGlobals: true as const } : {}),
  };
}

/**
 * A WAITING node's wait is over (its `wake` row was claimed): an event node completes with the
 * event's data; a subworkflow with its child's final variables, a map with its children's in
 * item order (null for a tolerated failure); a failed child, or more than tolerated, fails the
 * attempt with CHILD_FAILED naming them (retryable unless the child was cancelled).
 */
async function settleWake(deps: ExecutorDeps, step: ClaimedStep, node: CompiledNode, scope: ExpressionScope): Promise<Outcome> {
  const w = step.wait;
  if (w?.kind === 'event' && w.received !== undefined) {
    return { kind: 'completed', step, ...(await settleResult(node, w.received.data, scope, deps.maxResultBytes)) };
  }
  if (w?.kind !== 'children') throw new EngineError('INTERNAL', `node "${node.id}" has no wait to wake from`);
  const rows = await deps.childResults(step.row.instanceId, node.id, step.attempt);
  const of = `${w.workflow} v${w.version}`;
  if (w.mode === 'subworkflow') {
    const r = rows[0];
    if (r?.status === 'COMPLETED') return { kind: 'completed', step, ...(await settleResult(node, r.variables, scope, deps.maxResultBytes)) };
    const status = r?.status ?? 'missing';
    throw new EngineError('CHILD_FAILED', `child instance ${r?.childId ?? '?'} (${of}) ended ${status}${r?.error ? `: ${r.error.code} ${r.error.message}` : ''}`, {
      retryable: status !== 'CANCELLED',
      details: { childId: r?.childId ?? null, workflow: w.workflow, version: w.version, status, error: r?.error ?? null },
    });
  }
  if (w.failing === true) {
    const failures = rows
      .filter((r) => r.status === 'FAILED' || r.status === 'CANCELLED')
      .slice(0, 20)
      .map((r) => ({ index: r.index, childId: r.childId, status: r.status, error: r.error }));
    const first = failures.find((f) => f.status === 'FAILED') ?? failures[0];
    const firstText = first ? `; the first: child ${first.childId} (item ${first.index}) ${first.status}${first.error ? `: ${first.error.message}` : ''}` : '';
    throw new EngineError('CHILD_FAILED', `${w.failed} of ${w.total} child instances (${of}) failed, more than the ${w.toleratedFailures} tolerated${firstText}`, {
      details: { workflow: w.workflow, version: w.version, total: w.total, failed: w.failed, tolerated: w.toleratedFailures, failures },
    });
  }
  const output = rows.map((r) => (r.status === 'COMPLETED' ? mapChildResult(r) : null));
  return { kind: 'completed', step, ...(await settleResult(node, output, scope, deps.maxResultBytes)) };
}

/**
 * A map child's result: its final variables without the parent's globals it was started with and
 * left unchanged (`item` and `index` stay), so a map over a list held in the globals does not
 * return that list once per item.
 */
function mapChildResult(r: ChildResult): Record<string, unknown> | null {
  const vars = r.variables;
  if (vars === null || r.input === null) return vars;
  const input = r.input;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(vars)) {
    if (k !== 'item' && k !== 'index' && Object.hasOwn(input, k) && JSON.stringify(input[k]) === JSON.stringify(v)) continue;
    out[k] = v;
  }
  return out;
}

async function runCompensation(deps: ExecutorDeps, step: ClaimedStep, node: CompiledNode, scope: ExpressionScope, controller: AbortController | undefined): Promise<Outcome> {
  const spec = node.def.compensate;
  const comp = node.compensate;
  if (!spec || !comp) return { kind: 'compensated', step, result: undefined };
  // A pinned node did nothing outside the engine: there is nothing to undo.
  if (step.pin !== undefined) return { kind: 'compensated', step, result: undefined };
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
