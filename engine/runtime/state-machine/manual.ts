/**
 * Transitions people cause (DESIGN.md section 4): decide an approval, resume a SUSPENDED
 * instance (retry, skip or fail the step; continue or stop a compensation chain), cancel, and
 * retry a FAILED instance. Each checks its version in the transaction and lands in history with
 * its actor in the same transaction as the state change. Expressions were evaluated before the
 * transaction (engine/runtime/manual-actions.ts) on the state the version check now confirms.
 */
import { EngineError } from '../../errors';
import { isTerminal } from '../../vocabulary';
import { PARKED_AT, type InstanceRow } from '../../store/queries';
import type { SettledResult } from '../outcome';
import { testMark, unschedule, type Tx } from './tx';
import { cancelInstance, failInstance, failOnDeadline, pastDeadline, settle, suspendOnNextIncident, instanceEnded } from './instance';
import { completeNode, skipFlows } from './node';
import { continueCompensation } from './compensation';
import { admits } from './concurrency';
import type { VariablesDiff } from '../../dsl/variables-diff';

// One definition, shared with the renderer's resume preview (engine/dsl/variables-diff.ts).
export { diffVariables, type VariablesDiff } from '../../dsl/variables-diff';

/** The error of an action refused because its instance passed its deadline (the failure itself is committed). */
function pastDeadlineError(instanceId: number): EngineError {
  return new EngineError('DEADLINE_EXCEEDED', `instance ${instanceId} passed its deadline: it is failing, and the action was not applied`, { retryable: false });
}

/**
 * An instance read for an action, checked against the version the caller saw.
 *
 * @throws EngineError NOT_FOUND, CONFLICT (changed meanwhile).
 */
export function instanceForAction(tx: Tx, id: number, expectedVersion?: number): InstanceRow {
  const inst = tx.q.instances.get(id);
  if (!inst) throw new EngineError('NOT_FOUND', `instance ${id} does not exist`);
  if (expectedVersion !== undefined && inst.version !== expectedVersion) {
    throw new EngineError('CONFLICT', `instance ${id} changed (version ${inst.version}, expected ${expectedVersion}); reload and try again`);
  }
  return inst;
}

/** What {@link decideApproval} records. */
export interface ApprovalDecision {
  instanceId: number;
  nodeId: string;
  /** The attempt of the approval the decision's result was computed for. */
  attempt: number;
  decision: { approved: boolean; data?: unknown; comment?: string };
  /** The decision as the node's result, and what it does to the variables and edges. */
  settled: SettledResult;
  actor?: string;
}

/**
 * Records a person's decision on a WAITING approval: the decision becomes the node's result and
 * the instance goes on. Returns an error to throw after commit when the instance had passed its
 * deadline (it is failed instead, and the decision is not applied).
 *
 * @throws EngineError CONFLICT (decided meanwhile: the approval no longer waits at that attempt),
 *   INVALID_STATE (the instance ended).
 */
export function decideApproval(tx: Tx, a: ApprovalDecision): EngineError | undefined {
  const { q, now } = tx;
  const cur = q.nodes.get(a.instanceId, a.nodeId);
  if (!cur || cur.status !== 'WAITING' || cur.wait?.kind !== 'approval' || cur.attempt !== a.attempt) {
    throw new EngineError('CONFLICT', `approval at "${a.nodeId}" of instance ${a.instanceId} was already decided`);
  }
  const inst = q.instances.get(a.instanceId);
  if (!inst || isTerminal(inst.status)) throw new EngineError('INVALID_STATE', `instance ${a.instanceId} is ${inst?.status ?? 'gone'}`);
  if (pastDeadline(tx, inst)) {
    failOnDeadline(tx, inst);
    return pastDeadlineError(a.instanceId);
  }
  const wf = tx.workflow(inst.workflowId);
  q.schedule.deleteForNode(a.instanceId, a.nodeId);
  q.history.append({ instanceId: a.instanceId, nodeId: a.nodeId, type: 'approval.decided', at: now, attempt: cur.attempt, actor: a.actor, data: a.decision });
  completeNode(tx, inst, wf, a.nodeId, a.settled, cur.attempt, cur.startedAt);
  return undefined;
}

/** What {@link resumeInstance} does. */
export interface ResumeAction {
  instanceId: number;
  /** The instance's version when the action was prepared (and its suspension read). */
  version: number;
  action: 'retry' | 'skip' | 'fail';
  /** The edited globals, replacing the current ones; undefined keeps them. */
  variables?: Record<string, unknown>;
  diff: VariablesDiff;
  /** For skip of an incident: the given result and what it does to the variables and edges. */
  skip?: SettledResult;
  /** The result as the person gave it, for history. */
  givenResult?: unknown;
  actor?: string;
}

/**
 * Resumes a SUSPENDED instance (DESIGN.md section 4). For an incident: retry the failed step
 * with a fresh attempt budget, skip it with the given result, or fail the instance. For a failed
 * compensation: retry it, skip it (the chain goes on), or stop the chain as FAILED. Another
 * incident still open keeps the instance SUSPENDED, showing that one. Returns an error to throw
 * after commit when the instance had passed its deadline (retry and skip then fail it instead).
 *
 * @throws EngineError CONFLICT (changed meanwhile), INVALID_STATE (not SUSPENDED).
 */
export function resumeInstance(tx: Tx, r: ResumeAction): EngineError | undefined {
  const { q, now } = tx;
  const inst = q.instances.get(r.instanceId);
  if (!inst || inst.version !== r.version) throw new EngineError('CONFLICT', `instance ${r.instanceId} changed meanwhile; reload and try again`);
  const suspension = inst.suspension;
  if (inst.status !== 'SUSPENDED' || !suspension) throw new EngineError('INVALID_STATE', `instance ${r.instanceId} is ${inst.status}, not SUSPENDED`);
  if (r.action !== 'fail' && pastDeadline(tx, inst)) {
    failOnDeadline(tx, inst);
    return pastDeadlineError(r.instanceId);
  }
  const id = r.instanceId;
  const mark = testMark(inst);
  const wf = tx.workflow(inst.workflowId);
  const nodeId = suspension.nodeId;
  if (r.variables !== undefined) q.instances.setVariables({ id, variables: r.variables, now });
  q.history.append({
    instanceId: id,
    nodeId,
    type: 'instance.resumed',
    at: now,
    actor: r.actor ?? 'unknown',
    data: { action: r.action, reason: suspension.kind, diff: r.diff, ...(r.givenResult === undefined ? {} : { result: r.givenResult }) },
  });
  if (suspension.kind === 'incident') {
    if (r.action === 'fail') {
      failInstance(tx, inst, suspension.error, 'FAILED', r.actor);
      return undefined;
    }
    q.instances.clearSuspension({ id, status: 'RUNNING', now });
    // Another branch's incident still open keeps the instance SUSPENDED, now showing that one.
    const stillSuspended = suspendOnNextIncident(tx, inst, nodeId);
    const live = q.instances.head(id);
    if (!live) return undefined;
    if (r.action === 'retry') {
      const st = q.nodes.get(id, nodeId);
      q.nodes.ready({ instanceId: id, nodeId, attemptLimit: (st?.attempt ?? 0) + (wf.nodes.get(nodeId)?.retry.maxAttempts ?? 1) });
      q.schedule.insert({ instanceId: id, nodeId, kind: 'run', at: now, retryCount: 0, now, instant: wf.nodes.get(nodeId)?.type.instant });
      tx.events.push({ type: 'node.changed', instanceId: id, nodeId, status: 'READY', ...mark });
      settle(tx, id);
    } else if (r.skip) {
      q.history.append({ instanceId: id, nodeId, type: 'node.skipped_by_hand', at: now, actor: r.actor, data: { result: r.skip.output } });
      // Completed by hand after its last attempt: history and the event name that attempt, as the node's state does.
      completeNode(tx, live, wf, nodeId, r.skip, q.nodes.get(id, nodeId)?.attempt ?? 0, null);
    }
    if (!stillSuspended) tx.events.push({ type: 'instance.changed', instanceId: id, status: 'RUNNING', ...mark });
    return undefined;
  }
  // A failed compensation.
  if (r.action === 'fail') {
    // The chain stops: the node whose compensation failed is left as its peers not yet
    // compensated are, COMPLETED (its effect stands), not COMPENSATING as if still under way.
    q.nodes.resetFailedCompensations(id);
    tx.events.push({ type: 'node.changed', instanceId: id, nodeId, status: 'COMPLETED', ...mark });
    q.instances.end({ id, status: 'FAILED', now });
    unschedule(tx, id);
    q.history.append({ instanceId: id, nodeId: null, type: 'instance.failed', at: now, actor: r.actor, data: { reason: 'compensation stopped by hand' } });
    tx.events.push({ type: 'instance.finished', instanceId: id, status: 'FAILED', ...mark });
    instanceEnded(tx, inst, 'FAILED');
    return undefined;
  }
  q.instances.clearSuspension({ id, status: 'COMPENSATING', now });
  tx.events.push({ type: 'instance.changed', instanceId: id, status: 'COMPENSATING', ...mark });
  if (r.action === 'retry') {
    q.schedule.insert({ instanceId: id, nodeId, kind: 'compensate', at: now, retryCount: 0, now });
  } else {
    q.history.append({ instanceId: id, nodeId, type: 'compensation.skipped', at: now, actor: r.actor });
    q.nodes.compensated({ instanceId: id, nodeId });
    continueCompensation(tx, id);
  }
  return undefined;
}

/**
 * Cancels a live instance; `compensate` runs compensations first (DESIGN.md "Rules pinned").
 *
 * @throws EngineError NOT_FOUND, CONFLICT (version check), INVALID_STATE (already ended, or
 *   already COMPENSATING: cancelling again would drop the pending compensation step).
 */
export function cancel(tx: Tx, c: { instanceId: number; compensate: boolean; expectedVersion?: number; actor?: string }): void {
  const inst = instanceForAction(tx, c.instanceId, c.expectedVersion);
  if (isTerminal(inst.status)) throw new EngineError('INVALID_STATE', `instance ${c.instanceId} already ended ${inst.status}`);
  if (inst.status === 'COMPENSATING') {
    throw new EngineError('INVALID_STATE', `instance ${c.instanceId} is already COMPENSATING; its compensations must finish first`);
  }
  cancelInstance(tx, c.instanceId, c.compensate, c.actor);
}

/**
 * Runs a FAILED instance again. The failures that failed it (not those an error edge handled)
 * get a fresh attempt budget; every node the failure cancelled picks up where it stood — PENDING
 * while an incoming edge is unresolved, else READY when enough incoming edges were taken (an
 * entry node always), else SKIPPED with the skip flowing on. Its deadline, when the workflow has
 * one, stays while it is still ahead and otherwise starts over from now (a retry past the
 * deadline would fail again at once). Returns the node ids that run again.
 *
 * @throws EngineError NOT_FOUND, CONFLICT (version check), INVALID_STATE: not FAILED; nothing to
 *   run again; or some steps were compensated (running on would skip their undone effects: the
 *   error names them; start a new instance instead).
 */
export function retryInstance(tx: Tx, r: { instanceId: number; expectedVersion?: number; actor?: string }): string[] {
  const { q, now } = tx;
  const id = r.instanceId;
  const inst = instanceForAction(tx, id, r.expectedVersion);
  const mark = testMark(inst);
  if (inst.status !== 'FAILED') throw new EngineError('INVALID_STATE', `instance ${id} is ${inst.status}, not FAILED`);
  const wf = tx.workflow(inst.workflowId);
  const nodes = q.nodes.all(id);
  const undone = nodes.filter((n) => n.status === 'COMPENSATED').map((n) => n.nodeId);
  if (undone.length > 0) {
    throw new EngineError(
      'INVALID_STATE',
      `instance ${id} cannot be retried: its step${undone.length === 1 ? '' : 's'} ${undone.map((n) => `"${n}"`).join(', ')} ${undone.length === 1 ? 'was' : 'were'} compensated, and running on would skip ${undone.length === 1 ? 'its' : 'their'} undone effect; start a new instance instead`,
      { details: { compensated: undone } },
    );
  }
  const failed = nodes.filter((n) => n.status === 'FAILED' && n.wait?.kind !== 'handled');
  const cancelled = nodes.filter((n) => n.status === 'CANCELLED');
  if (failed.length === 0 && cancelled.length === 0) throw new EngineError('INVALID_STATE', `instance ${id} has no failed or cancelled step to run again`);
  const deadlineMs = wf.def.deadlineMs;
  const deadlineAt = deadlineMs === undefined ? null : inst.deadlineAt !== null && inst.deadlineAt > now ? inst.deadlineAt : now + deadlineMs;
  q.instances.reopen({ id, deadlineAt, now });
  if (deadlineAt !== null) q.schedule.insert({ instanceId: id, nodeId: null, kind: 'deadline', at: deadlineAt, retryCount: 0, now });
  // Its concurrency slot went with its failure: it takes one again as a new start would, or
  // waits PENDING and held for one, its steps parked until admitted (./concurrency.ts).
  const limit = wf.def.concurrency?.limit;
  const held = inst.concurrencyKey !== null && !admits(tx, inst.concurrencyKey, limit ?? Number.POSITIVE_INFINITY);
  const runs: string[] = [];
  const ready = (nodeId: string): void => {
    q.schedule.insert({ instanceId: id, nodeId, kind: 'run', at: held ? PARKED_AT : now, retryCount: 0, now, instant: wf.nodes.get(nodeId)?.type.instant });
    tx.events.push({ type: 'node.changed', instanceId: id, nodeId, status: 'READY', ...mark });
    runs.push(nodeId);
  };
  for (const n of failed) {
    q.nodes.ready({ instanceId: id, nodeId: n.nodeId, attemptLimit: n.attempt + (wf.nodes.get(n.nodeId)?.retry.maxAttempts ?? 1) });
    ready(n.nodeId);
  }
  for (const n of cancelled) {
    // Read again: a skip flowing from an earlier one may have resolved its edges meanwhile.
    const cur = q.nodes.get(id, n.nodeId);
    const node = wf.nodes.get(n.nodeId);
    if (!cur || !node || cur.status !== 'CANCELLED') continue;
    const need = node.join === 'all' ? node.incoming.length : 1;
    if (cur.pendingIn > 0) {
      q.nodes.setStatus({ instanceId: id, nodeId: n.nodeId, status: 'PENDING' });
    } else if (node.incoming.length === 0 || cur.takenIn >= need) {
      q.nodes.setStatus({ instanceId: id, nodeId: n.nodeId, status: 'READY' });
      ready(n.nodeId);
    } else {
      q.nodes.setStatus({ instanceId: id, nodeId: n.nodeId, status: 'SKIPPED' });
      q.history.append({ instanceId: id, nodeId: n.nodeId, type: 'node.skipped', at: now, data: { reason: 'no incoming edge was taken' } });
      tx.events.push({ type: 'node.changed', instanceId: id, nodeId: n.nodeId, status: 'SKIPPED', ...mark });
      skipFlows(tx, inst, wf, n.nodeId);
    }
  }
  q.history.append({
    instanceId: id,
    nodeId: null,
    type: 'instance.retried',
    at: now,
    actor: r.actor,
    data: {
      nodes: failed.map((n) => n.nodeId),
      resumed: cancelled.map((n) => n.nodeId),
      ...(deadlineAt === null ? {} : { deadlineAt }),
      ...(held && runs.length > 0 ? { held: { limit } } : {}),
    },
  });
  if (held && runs.length > 0) {
    q.instances.hold({ id, now });
    tx.events.push({ type: 'instance.changed', instanceId: id, status: 'PENDING', ...mark });
    return runs;
  }
  tx.events.push({ type: 'instance.changed', instanceId: id, status: 'RUNNING', ...mark });
  settle(tx, id);
  return runs;
}

