/**
 * Transitions of the compensation chain (DESIGN.md "Rules pinned"): completed nodes that declare
 * `compensate` are compensated one at a time in reverse completion order; a compensation that
 * fails after its retries stops the chain there and SUSPENDs the instance.
 */
import type { SerializedError } from '../../errors';
import { testMark, unschedule, type InstanceRef, type Tx } from './tx';
import { suspend } from './instance';
import { instanceEnded } from './instance';

/**
 * Starts the next compensation of a COMPENSATING instance, or ends it (as its `endStatus`) when
 * none is left. Waits while a node still runs: that node's outcome calls back here.
 */
export function continueCompensation(tx: Tx, instanceId: number): void {
  const { q, now } = tx;
  const inst = q.instances.get(instanceId);
  if (!inst || inst.status !== 'COMPENSATING') return;
  if (q.nodes.open(instanceId).some((n) => n.status === 'RUNNING')) return;
  const wf = tx.workflow(inst.workflowId);
  const next = q.nodes.compensable(instanceId).find((n) => wf.nodes.get(n.nodeId)?.compensate !== undefined);
  if (next) {
    q.nodes.setStatus({ instanceId, nodeId: next.nodeId, status: 'COMPENSATING' });
    q.schedule.insert({ instanceId, nodeId: next.nodeId, kind: 'compensate', at: now, retryCount: 0, now });
    tx.events.push({ type: 'node.changed', instanceId, nodeId: next.nodeId, status: 'COMPENSATING', ...testMark(inst) });
    return;
  }
  const end = inst.endStatus ?? 'FAILED';
  q.instances.end({ id: instanceId, status: end, now });
  unschedule(tx, instanceId);
  q.history.append({ instanceId, nodeId: null, type: end === 'FAILED' ? 'instance.failed' : 'instance.cancelled', at: now });
  tx.events.push({ type: 'instance.finished', instanceId, status: end, ...testMark(inst) });
  instanceEnded(tx, inst, end);
}

/** A compensation succeeded: the node is COMPENSATED and the chain goes on. */
export function compensated(tx: Tx, inst: InstanceRef, nodeId: string, result: unknown, attempt: number): void {
  const instanceId = inst.id;
  tx.q.nodes.compensated({ instanceId, nodeId });
  tx.q.history.append({ instanceId, nodeId, type: 'compensation.completed', at: tx.now, attempt, ...(result === undefined ? {} : { data: { result } }) });
  tx.events.push({ type: 'node.changed', instanceId, nodeId, status: 'COMPENSATED', ...testMark(inst) });
  continueCompensation(tx, instanceId);
}

/**
 * A compensation attempt failed: retried at `retryAt` when its policy allows, else the chain
 * stops there, the failure is dead-lettered and the instance is SUSPENDED; resuming continues it.
 */
export function compensationFailed(tx: Tx, inst: InstanceRef, nodeId: string, error: SerializedError, attempt: number, retryAt: number | null): void {
  const { q, now } = tx;
  const instanceId = inst.id;
  if (retryAt !== null) {
    q.schedule.insert({ instanceId, nodeId, kind: 'compensate', at: retryAt, retryCount: attempt, now });
    q.history.append({ instanceId, nodeId, type: 'compensation.failed', at: now, attempt, data: { error, willRetry: true, nextAttemptAt: retryAt } });
    return;
  }
  q.nodes.park({ instanceId, nodeId, status: 'COMPENSATING', wait: { kind: 'compensation' }, error });
  q.history.append({ instanceId, nodeId, type: 'compensation.failed', at: now, attempt, data: { error, willRetry: false } });
  q.history.deadLetter({ instanceId, nodeId, kind: 'compensation', attempts: attempt, error, now });
  suspend(tx, inst, { kind: 'compensation', nodeId, error, attempts: attempt, at: now });
}
