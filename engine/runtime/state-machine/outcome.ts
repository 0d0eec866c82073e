/**
 * Committing what a step's execution produced: the transition that records an attempt's outcome
 * (completed, failed, parked, compensated), under the version check of its claim.
 */
import type { SerializedError } from '../../errors';
import { backoffDelayMs } from '../../dsl/schema';
import { isTerminal } from '../../vocabulary';
import type { ClaimedStep } from './claim';
import type { SpareRow, Tx } from './tx';
import { headAfterDeadline } from './instance';
import { completeNode, failNode, retryNode, waitNode, type EdgeDecision } from './node';
import { compensated, compensationFailed, continueCompensation } from './compensation';
import { cancelChildren, waitChildren, type ChildrenRequest } from './children';
import { waitEvent } from './signal';

/** What a step's execution produced; committed in the worker's next loop turn. */
export type Outcome =
  | { kind: 'completed'; step: ClaimedStep; output: unknown; patch: Record<string, unknown>; decisions: EdgeDecision[] }
  | { kind: 'failed'; step: ClaimedStep; error: SerializedError; final: boolean; decisions: EdgeDecision[] }
  | {
      kind: 'wait';
      step: ClaimedStep;
      /**
       * A timer due at `until` (completing with `output`); an approval, an event or child
       * instances, each timed out `timeoutMs` after it is parked.
       */
      wait:
        | { kind: 'timer'; until: number; output?: unknown }
        | { kind: 'approval'; prompt?: string; timeoutMs?: number }
        | { kind: 'event'; name: string; key?: string; timeoutMs?: number }
        | ({ kind: 'children' } & ChildrenRequest);
    }
  | { kind: 'compensated'; step: ClaimedStep; result: unknown }
  | { kind: 'compensation_failed'; step: ClaimedStep; error: SerializedError; final: boolean };

/**
 * Commits one outcome of a claim `owner` made. Nothing happens when the claim's lease is gone
 * (the instance was cancelled, or another worker took the step over after the lease expired):
 * its transition belongs to whoever holds it now, so none is committed twice. The claim's schedule
 * row is consumed, or taken over by a node of the same instance the outcome starts at once.
 */
export function commitOutcome(tx: Tx, o: Outcome, owner: string): void {
  const row = o.step.row;
  if (!tx.q.schedule.holds({ id: row.id, version: row.version, owner, instanceId: row.instanceId })) return;
  const spare: SpareRow = { id: row.id, version: row.version, instanceId: row.instanceId, taken: false };
  recordOutcome(tx, o, spare);
  // An instance the outcome ended lost every row with it (the claim's too).
  if (tx.unscheduled.has(row.instanceId)) return;
  if (!spare.taken) tx.q.schedule.delete(row.id);
  // A wait that ended (its wake or its timeout) takes its other row with it: the timeout of an
  // event that came, the wake of children that timed out (a retry's new run row stays; a spare
  // row taken over names another node).
  if (row.kind === 'wake' || row.kind === 'timeout') tx.q.schedule.deleteWaitRows(row.instanceId, o.step.nodeId);
}

/** Records an outcome whose claim is held (see {@link commitOutcome}). */
function recordOutcome(tx: Tx, o: Outcome, spare: SpareRow): void {
  const { q, now } = tx;
  const { step } = o;
  // Its deadline row may wait for a later turn: a past-deadline instance is failed now, so this
  // outcome starts nothing.
  const inst = headAfterDeadline(tx, step.row.instanceId);
  if (!inst || isTerminal(inst.status)) return;
  const nodeId = step.nodeId;
  const wf = tx.workflow(step.workflowId);
  const node = wf.nodes.get(nodeId);
  if (inst.status === 'COMPENSATING' && o.kind === 'wait') {
    // The instance failed meanwhile: nothing new waits, but the attempt's end is recorded.
    q.nodes.setStatus({ instanceId: inst.id, nodeId, status: 'CANCELLED' });
    q.history.append({ instanceId: inst.id, nodeId, type: 'node.cancelled', at: now, attempt: step.attempt, data: { reason: 'the instance is failing: the wait was not started' } });
    continueCompensation(tx, inst.id);
    return;
  }
  switch (o.kind) {
    case 'completed':
      completeNode(tx, inst, wf, nodeId, o, step.attempt, step.startedAt, spare);
      return;
    case 'wait': {
      const w = o.wait;
      if (w.kind === 'timer') waitNode(tx, inst, nodeId, w, step.attempt);
      else if (w.kind === 'event') waitEvent(tx, inst, nodeId, w, step.attempt);
      else if (w.kind === 'children') waitChildren(tx, inst, nodeId, w, step.attempt);
      else {
        waitNode(
          tx,
          inst,
          nodeId,
          { kind: 'approval', ...(w.prompt === undefined ? {} : { prompt: w.prompt }), ...(w.timeoutMs === undefined ? {} : { timeoutAt: now + w.timeoutMs }) },
          step.attempt,
        );
      }
      return;
    }
    case 'failed':
      // A failing instance retries nothing: a running node's failure is recorded as final.
      if (!o.final && node && inst.status !== 'COMPENSATING') retryNode(tx, inst, node, o.error, step.attempt, now + backoffDelayMs(node.retry, step.attempt), step.startedAt);
      else failNode(tx, inst, wf, nodeId, o.error, step.attempt, o.decisions, step.startedAt);
      // Child instances still running for a node that stopped waiting (its timeout) are cancelled,
      // after the node left WAITING: their ends then find nothing waiting for them.
      if (step.wait?.kind === 'children') cancelChildren(tx, inst.id, nodeId, false);
      return;
    case 'compensated':
      compensated(tx, inst, nodeId, o.result, step.attempt);
      return;
    case 'compensation_failed': {
      const retry = node?.compensate?.retry;
      const retryAt = !o.final && retry ? now + backoffDelayMs(retry, step.attempt) : null;
      compensationFailed(tx, inst, nodeId, o.error, step.attempt, retryAt);
      return;
    }
  }
}
