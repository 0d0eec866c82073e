/**
 * Node-level transitions: resolve an edge (READY, started at once, or SKIPPED), complete,
 * retry, fail (error edges, incident or instance failure) and park (timer, approval).
 */
import type { SerializedError } from '../../errors';
import type { CompiledNode, CompiledWorkflow } from '../compiled';
import type { InstanceHead } from '../../store/queries';
import { canDispatch, takeDispatch, testMark, type InstanceRef, type SpareRow, type Tx } from './tx';
import { failInstance, settle, suspend } from './instance';
import { continueCompensation } from './compensation';

/** Whether an edge was taken, and why not when a `when` read a missing variable. */
export interface EdgeDecision {
  edgeId: string;
  to: string;
  taken: boolean;
  reason?: string;
}

/**
 * Resolves one incoming edge of `to`; when all are resolved, makes it READY (a run row due now)
 * or SKIPPED, and a skip flows on through every edge leaving it (DESIGN.md section 3). While
 * `tx.dispatch` has a free slot (for a node of an instant type: one of its instant starts), a
 * node that becomes ready is started at once instead, taking over
 * `spare` (the consumed claim's schedule row) when it belongs to the same instance. Returns
 * whether some node became READY or RUNNING.
 */
export function resolveEdge(tx: Tx, inst: InstanceRef, wf: CompiledWorkflow, to: string, taken: boolean, spare?: SpareRow): boolean {
  const node = wf.nodes.get(to);
  if (!node) return false;
  const instanceId = inst.id;
  const { q, now } = tx;
  const instant = node.type.instant === true;
  const start = canDispatch(tx, instant);
  const need = node.join === 'all' ? node.incoming.length : 1;
  const r = q.nodes.resolveEdge({ instanceId, nodeId: to, taken, need, start, now });
  if (!r || r.pendingIn !== 0) return false;
  if (r.status === 'READY') {
    q.schedule.insert({ instanceId, nodeId: to, kind: 'run', at: now, retryCount: 0, now, instant });
    return true;
  }
  if (r.status === 'RUNNING' && start) {
    const d = tx.dispatch;
    let scheduleId: number;
    let version = 1;
    if (spare !== undefined && !spare.taken && spare.instanceId === instanceId) {
      q.schedule.reuseForRun({ id: spare.id, nodeId: to, leaseUntil: d.leaseUntil, now });
      spare.taken = true;
      scheduleId = spare.id;
      version = spare.version + 1;
    } else {
      scheduleId = q.schedule.insertLeased({ instanceId, nodeId: to, owner: d.owner, leaseUntil: d.leaseUntil, now });
    }
    takeDispatch(d, instant);
    d.claims.push({ scheduleId, version, instanceId, workflowId: wf.id, nodeId: to, attempt: r.attempt, attemptLimit: r.attemptLimit });
    tx.events.push({ type: 'node.changed', instanceId, nodeId: to, status: 'RUNNING', attempt: r.attempt, ...testMark(inst) });
    return true;
  }
  if (r.status !== 'SKIPPED') return false;
  q.history.append({
    instanceId,
    nodeId: to,
    type: 'node.skipped',
    at: now,
    data: { reason: node.join === 'all' ? 'join "all": not every incoming edge was taken' : 'no incoming edge was taken' },
  });
  tx.events.push({ type: 'node.changed', instanceId, nodeId: to, status: 'SKIPPED', ...testMark(inst) });
  return skipFlows(tx, inst, wf, to, spare);
}

/** A node that will not run resolves every edge leaving it as not taken. Returns whether some node became ready. */
export function skipFlows(tx: Tx, inst: InstanceRef, wf: CompiledWorkflow, nodeId: string, spare?: SpareRow): boolean {
  const node = wf.nodes.get(nodeId);
  let readied = false;
  for (const e of node?.outgoing ?? []) readied = resolveEdge(tx, inst, wf, e.to, false, spare) || readied;
  for (const e of node?.errorOut ?? []) readied = resolveEdge(tx, inst, wf, e.to, false, spare) || readied;
  return readied;
}

/** Records why a decided edge was not taken, when a `when` read a missing variable (history says why). */
function noteNotTaken(tx: Tx, instanceId: number, nodeId: string, d: EdgeDecision): void {
  if (!d.taken && d.reason) tx.q.history.append({ instanceId, nodeId, type: 'edge.not_taken', at: tx.now, data: { edge: d.edgeId, reason: d.reason } });
}

/**
 * Records `nodeId` COMPLETED with `output` at `attempt`, merges `patch` into the globals, and
 * routes its edges by `decisions` (its error edges are resolved as not taken). In a COMPENSATING
 * instance the completion is recorded and its edges resolved, but nothing downstream starts: the
 * nodes there were cancelled by the failure, and a retry of the instance finds their edges
 * resolved. `startedAt` gives history the attempt's duration.
 */
export function completeNode(
  tx: Tx,
  inst: InstanceHead,
  wf: CompiledWorkflow,
  nodeId: string,
  result: { output: unknown; patch: Record<string, unknown>; decisions: EdgeDecision[] },
  attempt: number,
  startedAt: number | null,
  spare?: SpareRow,
): void {
  const { q, now } = tx;
  const seq = q.history.append({ instanceId: inst.id, nodeId, type: 'node.completed', at: now, attempt, ...(startedAt === null ? {} : { data: { durationMs: now - startedAt } }) });
  q.nodes.complete({ instanceId: inst.id, nodeId, output: result.output, now, seq });
  tx.events.push({ type: 'node.changed', instanceId: inst.id, nodeId, status: 'COMPLETED', attempt, ...testMark(inst) });
  const node = wf.nodes.get(nodeId);
  if (inst.status === 'COMPENSATING') {
    for (const d of result.decisions) {
      noteNotTaken(tx, inst.id, nodeId, d);
      q.nodes.resolveEdge({ instanceId: inst.id, nodeId: d.to, taken: d.taken, need: 1, start: false, now });
    }
    for (const e of node?.errorOut ?? []) q.nodes.resolveEdge({ instanceId: inst.id, nodeId: e.to, taken: false, need: 1, start: false, now });
    continueCompensation(tx, inst.id);
    return;
  }
  if (Object.keys(result.patch).length > 0) q.instances.mergeVariables({ id: inst.id, patch: result.patch, now });
  let readied = false;
  for (const d of result.decisions) {
    noteNotTaken(tx, inst.id, nodeId, d);
    readied = resolveEdge(tx, inst, wf, d.to, d.taken, spare) || readied;
  }
  for (const e of node?.errorOut ?? []) readied = resolveEdge(tx, inst, wf, e.to, false, spare) || readied;
  // A RUNNING instance that just got a READY node stays RUNNING: settling would only count node
  // states to learn that (the usual case of a step in a chain).
  if (readied && inst.status === 'RUNNING') return;
  settle(tx, inst.id, inst);
}

/**
 * Schedules attempt `attempt + 1` of a failed `node` at `runAt`. `startedAt` (when the failed
 * attempt started) gives history its `durationMs`, as for a completion: the monitor's Gantt draws
 * a bar per attempt from it.
 */
export function retryNode(tx: Tx, inst: InstanceHead, node: CompiledNode, error: SerializedError, attempt: number, runAt: number, startedAt?: number): void {
  const { q, now } = tx;
  const nodeId = node.id;
  q.nodes.park({ instanceId: inst.id, nodeId, status: 'RETRYING', wait: { kind: 'retry', until: runAt }, error });
  q.schedule.insert({ instanceId: inst.id, nodeId, kind: 'run', at: runAt, retryCount: attempt, now, instant: node.type.instant });
  q.history.append({
    instanceId: inst.id,
    nodeId,
    type: 'node.failed',
    at: now,
    attempt,
    data: { error, willRetry: true, nextAttemptAt: runAt, ...(startedAt === undefined ? {} : { durationMs: now - startedAt }) },
  });
  tx.events.push({ type: 'node.changed', instanceId: inst.id, nodeId, status: 'RETRYING', attempt, ...testMark(inst) });
  settle(tx, inst.id, inst);
}

/**
 * A node failed for good (retries exhausted or a non-retryable error): takes its error edges if
 * any was taken (the failure is then marked handled), else dead-letters it and suspends the
 * instance (onFailure=suspend: an incident) or fails it (compensating first). `startedAt`: as for
 * {@link retryNode}.
 */
export function failNode(tx: Tx, inst: InstanceHead, wf: CompiledWorkflow, nodeId: string, error: SerializedError, attempt: number, errorDecisions: EdgeDecision[], startedAt?: number): void {
  const { q, now } = tx;
  q.nodes.fail({ instanceId: inst.id, nodeId, error, now });
  q.history.append({
    instanceId: inst.id,
    nodeId,
    type: 'node.failed',
    at: now,
    attempt,
    data: { error, willRetry: false, ...(startedAt === undefined ? {} : { durationMs: now - startedAt }) },
  });
  tx.events.push({ type: 'node.changed', instanceId: inst.id, nodeId, status: 'FAILED', attempt, ...testMark(inst) });
  if (inst.status === 'COMPENSATING') {
    continueCompensation(tx, inst.id);
    return;
  }
  const node = wf.nodes.get(nodeId);
  if (node && errorDecisions.some((d) => d.taken)) {
    q.nodes.markFailure({ instanceId: inst.id, nodeId, wait: { kind: 'handled' } });
    for (const e of node.outgoing) resolveEdge(tx, inst, wf, e.to, false);
    for (const d of errorDecisions) {
      noteNotTaken(tx, inst.id, nodeId, d);
      resolveEdge(tx, inst, wf, d.to, d.taken);
    }
    settle(tx, inst.id);
    return;
  }
  q.history.deadLetter({ instanceId: inst.id, nodeId, kind: 'node', attempts: attempt, error, now });
  if (node?.onFailure === 'suspend') {
    q.nodes.markFailure({ instanceId: inst.id, nodeId, wait: { kind: 'incident' } });
    suspend(tx, inst, { kind: 'incident', nodeId, error, attempts: attempt, at: now });
    return;
  }
  failInstance(tx, inst, error, 'FAILED');
}

/** Parks a node WAITING on a timer (due at `until`) or an approval (timed out at `timeoutAt`), with its schedule row. */
export function waitNode(
  tx: Tx,
  inst: InstanceHead,
  nodeId: string,
  wait: { kind: 'timer'; until: number; output?: unknown } | { kind: 'approval'; prompt?: string; timeoutAt?: number },
  attempt: number,
): void {
  const { q, now } = tx;
  q.nodes.park({ instanceId: inst.id, nodeId, status: 'WAITING', wait });
  if (wait.kind === 'timer') {
    q.schedule.insert({ instanceId: inst.id, nodeId, kind: 'timer', at: wait.until, retryCount: 0, now });
    q.history.append({ instanceId: inst.id, nodeId, type: 'timer.started', at: now, attempt, data: { until: wait.until } });
  } else {
    if (wait.timeoutAt !== undefined) q.schedule.insert({ instanceId: inst.id, nodeId, kind: 'timeout', at: wait.timeoutAt, retryCount: 0, now });
    q.history.append({ instanceId: inst.id, nodeId, type: 'approval.requested', at: now, attempt, data: { prompt: wait.prompt, timeoutAt: wait.timeoutAt } });
    tx.events.push({ type: 'approval.requested', instanceId: inst.id, nodeId, ...(wait.prompt === undefined ? {} : { prompt: wait.prompt }), ...testMark(inst) });
  }
  tx.events.push({ type: 'node.changed', instanceId: inst.id, nodeId, status: 'WAITING', attempt, ...testMark(inst) });
  settle(tx, inst.id, inst);
}
