/**
 * Actions people take on instances (DESIGN.md section 4): decide an approval, resume a SUSPENDED
 * instance, cancel, retry a FAILED one.
 *
 * Each reads what it needs, evaluates its expressions (the outcome sequence of outcome.ts, for a
 * given result) before the transaction, then commits one transition with a version check, so a
 * stale or repeated action is refused and changes nothing.
 */
import { EngineError } from '../errors';
import { isTerminal } from '../vocabulary';
import { checkDecisionData } from '../dsl/input-schema';
import { describeValueProblem, findValueProblem } from '../dsl/value-limits';
import type { RuntimeContext } from './context';
import { loadWorkflow, transact } from './context';
import { jsonBytes, settleResult, type SettledResult } from './outcome';
import { cancel as cancelTransition, decideApproval, diffVariables, resumeInstance, retryInstance } from './state-machine/manual';
import { sendEvent, type SendResult } from './state-machine/signal';
import { pauseInstance, unpauseInstance } from './state-machine/pause';
import { setStep } from '../store/queries';

/** An approval decision. */
export interface ApproveOptions {
  approved: boolean;
  data?: unknown;
  comment?: string;
  actor?: string;
}

/** A resume action on a SUSPENDED instance (DESIGN.md section 4). */
export interface ResumeOptions {
  action: 'retry' | 'skip' | 'fail';
  /** For `skip`: the failed step's result (default null). */
  result?: unknown;
  /** Edited global variables: they replace the globals; the diff is recorded. */
  variables?: Record<string, unknown>;
  /** Refuse unless the instance's version still equals this. */
  expectedVersion?: number;
  actor?: string;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The instance as the API shows it, or NOT_FOUND. */
async function existing(ctx: RuntimeContext, id: number) {
  const inst = await ctx.storage.read.instance(id);
  if (!inst) throw new EngineError('NOT_FOUND', `instance ${id} does not exist`);
  return inst;
}

/** `$steps` of an instance as the read model shows it: completed outputs, and `{ error }` of failed nodes. */
function stepsOf(nodes: readonly { id: string; status: string; output?: unknown; error?: unknown }[]): Record<string, unknown> {
  const steps: Record<string, unknown> = {};
  for (const n of nodes) {
    if (n.status === 'FAILED') setStep(steps, n.id, { error: n.error ?? null });
    else if (n.status === 'COMPLETED' || n.status === 'COMPENSATING' || n.status === 'COMPENSATED') setStep(steps, n.id, n.output ?? null);
  }
  return steps;
}

/**
 * Records a person's decision on a WAITING approval node; the decision becomes its result
 * (`{ approved, data, comment, actor, decidedAt }`) and the instance goes on.
 *
 * @throws EngineError NOT_FOUND, INVALID_STATE (no approval waits there), CONFLICT (decided
 *   meanwhile), INVALID_INPUT (data the approval's `form` refuses, each field named — an approval
 *   without data is checked as `{}`, so a required field refuses it; a rejection needs none — or that no
 *   value may hold: nested too deep, a `__proto__` key, a number that is not finite),
 *   RESULT_TOO_LARGE (the decision, or the variables with it, above the limit), DEADLINE_EXCEEDED
 *   (the instance had passed its deadline: it is failed instead).
 */
export async function approve(ctx: RuntimeContext, instanceId: number, nodeId: string, decision: ApproveOptions): Promise<void> {
  const inst = await existing(ctx, instanceId);
  const state = inst.nodes.find((n) => n.id === nodeId);
  const wait = state?.wait as { kind?: string } | undefined;
  if (!state || state.status !== 'WAITING' || wait?.kind !== 'approval' || isTerminal(inst.status)) {
    throw new EngineError('INVALID_STATE', `instance ${instanceId} has no approval waiting at node "${nodeId}"`);
  }
  const wf = await loadWorkflow(ctx, inst.workflowId);
  const node = wf.nodes.get(nodeId);
  if (!node) throw new EngineError('NOT_FOUND', `node "${nodeId}" is not in workflow ${wf.name}`);
  // A person's data is theirs to fix: refused as input (with its path), not as the node's result.
  const dataProblem = decision.data === undefined ? undefined : findValueProblem(decision.data);
  if (dataProblem) throw new EngineError('INVALID_INPUT', `data: ${describeValueProblem('the decision data', dataProblem)}`, { kind: 'user', retryable: false });
  // The form the UI renders is checked here too, so no client (CLI, API) can send what it refuses.
  // As in the UI, an approval fills the form in (no data is checked as `{}`, so a required field
  // is missing); a rejection need not, but what it does fill in is checked.
  const form = (node.def.config as { form?: unknown } | undefined)?.form;
  if (typeof form === 'object' && form !== null && !Array.isArray(form)) {
    if (decision.data !== undefined) checkDecisionData(form as Record<string, unknown>, decision.data, nodeId);
    else if (decision.approved) checkMissingDecisionData(form as Record<string, unknown>, nodeId);
  }
  const now = ctx.clock.now();
  const result: Record<string, unknown> = { approved: decision.approved, decidedAt: now };
  if (decision.data !== undefined) result.data = decision.data;
  if (decision.comment !== undefined) result.comment = decision.comment;
  if (decision.actor !== undefined) result.actor = decision.actor;
  const settled = await settleResult(node, result, { variables: inst.variables, steps: stepsOf(inst.nodes) }, ctx.opts.maxResultBytes, true);
  const refused = await transact(ctx, (tx) =>
    decideApproval(tx, {
      instanceId,
      nodeId,
      attempt: state.attempt,
      decision: { approved: decision.approved, data: decision.data, comment: decision.comment },
      settled,
      ...(decision.actor === undefined ? {} : { actor: decision.actor }),
    }),
  );
  ctx.worker.wake();
  if (refused) throw refused;
}

/**
 * An approval sent without data, against the node's `form`: the form is checked as filled in with
 * nothing (`{}`), so a form with required fields refuses it.
 *
 * @throws EngineError INVALID_INPUT ("no data was given, and the form of node … needs it: …", the
 *   fields in `details`), or the form's own error when it is not a valid JSON Schema.
 */
function checkMissingDecisionData(form: Record<string, unknown>, nodeId: string): void {
  try {
    checkDecisionData(form, {}, nodeId);
  } catch (err) {
    if (!(err instanceof EngineError) || !Array.isArray(err.details)) throw err;
    const problems = err.details as { field: string; message: string }[];
    throw new EngineError(
      'INVALID_INPUT',
      `data: none was given, and the form of node "${nodeId}" needs it: ${problems.map((p) => `${p.field} ${p.message}`).join('; ')}`,
      { details: problems },
    );
  }
}

/**
 * Resumes a SUSPENDED instance (DESIGN.md section 4): optionally replaces its globals, then
 * retries the failed step, skips it with `result`, or fails the instance. For a failed
 * compensation, retry re-runs it, skip continues the chain and fail stops it as FAILED. The action,
 * its actor and the variables diff land in history in the same transaction.
 *
 * @throws EngineError NOT_FOUND, INVALID_STATE (not SUSPENDED), CONFLICT (version check),
 *   INVALID_VARIABLES (not an object, above the size limit, nested too deep, a `__proto__` key, a
 *   number that is not finite), RESULT_TOO_LARGE or INVALID_RESULT (a skip's result), DEADLINE_EXCEEDED (past its deadline:
 *   failed instead).
 */
export async function resume(ctx: RuntimeContext, instanceId: number, options: ResumeOptions): Promise<void> {
  const inst = await existing(ctx, instanceId);
  if (options.expectedVersion !== undefined && inst.version !== options.expectedVersion) {
    throw new EngineError('CONFLICT', `instance ${instanceId} changed (version ${inst.version}, expected ${options.expectedVersion}); reload and try again`);
  }
  const suspension = inst.suspension as { kind: 'incident' | 'compensation'; nodeId: string } | undefined;
  if (inst.status !== 'SUSPENDED' || !suspension) throw new EngineError('INVALID_STATE', `instance ${instanceId} is ${inst.status}, not SUSPENDED`);
  if (options.variables !== undefined && !isPlainObject(options.variables)) throw new EngineError('INVALID_VARIABLES', 'variables must be a JSON object');
  const after = options.variables ?? inst.variables;
  const nesting = findValueProblem(after);
  if (nesting) throw new EngineError('INVALID_VARIABLES', describeValueProblem('the variables', nesting));
  if (jsonBytes(after) > ctx.opts.maxResultBytes) throw new EngineError('INVALID_VARIABLES', `variables are above the limit of ${ctx.opts.maxResultBytes} bytes`);
  const wf = await loadWorkflow(ctx, inst.workflowId);
  const node = wf.nodes.get(suspension.nodeId);
  if (!node) throw new EngineError('NOT_FOUND', `node "${suspension.nodeId}" is not in workflow ${wf.name}`);
  let skip: SettledResult | undefined;
  if (options.action === 'skip' && suspension.kind === 'incident') {
    skip = await settleResult(node, options.result, { variables: after, steps: stepsOf(inst.nodes) }, ctx.opts.maxResultBytes, true);
  }
  const refused = await transact(ctx, (tx) =>
    resumeInstance(tx, {
      instanceId,
      version: inst.version,
      action: options.action,
      ...(options.variables === undefined ? {} : { variables: after }),
      diff: diffVariables(inst.variables, after),
      ...(skip === undefined ? {} : { skip }),
      ...(options.result === undefined ? {} : { givenResult: options.result }),
      ...(options.actor === undefined ? {} : { actor: options.actor }),
    }),
  );
  ctx.worker.wake();
  if (refused) throw refused;
}

/**
 * Cancels a live instance; `compensate` runs compensations first (DESIGN.md "Rules pinned").
 *
 * @throws EngineError NOT_FOUND, INVALID_STATE (already ended, or already COMPENSATING), CONFLICT (version check).
 */
export async function cancel(ctx: RuntimeContext, instanceId: number, options: { compensate?: boolean; actor?: string; expectedVersion?: number } = {}): Promise<void> {
  await transact(ctx, (tx) =>
    cancelTransition(tx, {
      instanceId,
      compensate: options.compensate === true,
      ...(options.expectedVersion === undefined ? {} : { expectedVersion: options.expectedVersion }),
      ...(options.actor === undefined ? {} : { actor: options.actor }),
    }),
  );
  ctx.worker.wake();
}

/**
 * Retries a FAILED instance (see retryInstance in state-machine/manual.ts): the failures that
 * failed it run again with a fresh attempt budget, the steps the failure cancelled pick up where
 * they stood, and its deadline stays or starts over.
 *
 * @throws EngineError NOT_FOUND, CONFLICT (version check), INVALID_STATE (not FAILED, nothing to
 *   run again, or steps were compensated).
 */
export async function retry(ctx: RuntimeContext, instanceId: number, options: { actor?: string; expectedVersion?: number } = {}): Promise<void> {
  await transact(ctx, (tx) =>
    retryInstance(tx, {
      instanceId,
      ...(options.expectedVersion === undefined ? {} : { expectedVersion: options.expectedVersion }),
      ...(options.actor === undefined ? {} : { actor: options.actor }),
    }),
  );
  ctx.worker.wake();
}

/** An event sent to an instance (`instance:signal`). */
export interface SignalOptions {
  /** The event's name (what an `event` node's `config.name` waits for). */
  event: string;
  /** Its key (what an `event` node's `config.key` asks for), if any. */
  key?: string;
  /** Its data: the waiting node's result (default null). */
  data?: unknown;
  actor?: string;
}

/**
 * Sends an event to a live instance, given by id or by business key (exactly one live instance
 * must have it): recorded, and taken by the `event` node waiting for it or kept until one does
 * (state-machine/signal.ts).
 *
 * @throws EngineError NOT_FOUND (no such id, no instance with the business key); INVALID_STATE
 *   (the instance has ended; by business key: only ended instances have it); INVALID_INPUT (no id
 *   nor business key, a business key of several live instances, data nested too deep or above
 *   the size limit).
 */
export async function signal(ctx: RuntimeContext, target: { id?: number; businessKey?: string }, o: SignalOptions): Promise<SendResult & { instanceId: number }> {
  const data = o.data === undefined ? null : o.data;
  const nesting = findValueProblem(data);
  if (nesting) throw new EngineError('INVALID_INPUT', `data: ${describeValueProblem('the event data', nesting)}`, { kind: 'user' });
  const bytes = jsonBytes(data);
  if (bytes > ctx.opts.maxResultBytes) throw new EngineError('INVALID_INPUT', `data: the event data is ${bytes} bytes, above the limit of ${ctx.opts.maxResultBytes}`, { kind: 'user' });
  let instanceId = target.id;
  if (instanceId === undefined) {
    const key = target.businessKey;
    if (key === undefined) throw new EngineError('INVALID_INPUT', 'give the instance id or its business key');
    const live = await ctx.storage.read.listInstances({ businessKey: key, status: ['PENDING', 'RUNNING', 'WAITING', 'SUSPENDED', 'COMPENSATING'], limit: 3 });
    if (live.length === 0) {
      // As a signal by id to an ended instance: INVALID_STATE, naming the newest one with the key.
      const [ended] = await ctx.storage.read.listInstances({ businessKey: key, limit: 1 });
      if (ended) throw new EngineError('INVALID_STATE', `instance ${ended.id} (business key ${JSON.stringify(key)}) has ended (${ended.status}): no live instance has that key`);
      throw new EngineError('NOT_FOUND', `no instance has business key ${JSON.stringify(key)}`);
    }
    if (live.length > 1) {
      const ids = live.slice(0, 2).map((i) => i.id).join(', ');
      throw new EngineError('INVALID_INPUT', `businessKey: several live instances have business key ${JSON.stringify(key)} (${ids}${live.length > 2 ? ', …' : ''}): give the instance id`);
    }
    instanceId = (live[0] as { id: number }).id;
  }
  const id = instanceId;
  const r = await transact(ctx, (tx) => sendEvent(tx, { instanceId: id, name: o.event, key: o.key ?? null, data, ...(o.actor === undefined ? {} : { actor: o.actor }) }));
  ctx.worker.wake();
  return { ...r, instanceId: id };
}

/**
 * Pauses a live instance (state-machine/pause.ts): it starts no node until unpaused; running
 * handlers finish; timers, retries, timeouts and its deadline keep the time they had left.
 *
 * @throws EngineError NOT_FOUND; INVALID_STATE (ended, or paused already).
 */
export async function pause(ctx: RuntimeContext, instanceId: number, options: { actor?: string } = {}): Promise<void> {
  await transact(ctx, (tx) => pauseInstance(tx, instanceId, options.actor));
}

/**
 * Unpauses an instance: what its pause parked is due again after the time it had left.
 *
 * @throws EngineError NOT_FOUND; INVALID_STATE (not paused).
 */
export async function unpause(ctx: RuntimeContext, instanceId: number, options: { actor?: string } = {}): Promise<void> {
  await transact(ctx, (tx) => unpauseInstance(tx, instanceId, options.actor));
  ctx.worker.wake();
}
