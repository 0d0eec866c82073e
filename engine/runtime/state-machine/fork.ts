/**
 * "Start a copy from here" (issue 14; DBOS and Trigger.dev call it fork): a new instance of the
 * same workflow version, created from another instance's state at one of its history entries
 * (engine/runtime/time-travel.ts plans it). Nodes done then keep their results and do not run
 * again; the others run as they would have from there.
 */
import { EngineError, type SerializedError } from '../../errors';
import type { CompiledWorkflow } from '../compiled';
import { concurrencyKey, PARKED_AT } from '../../store/queries';
import { testMark, type Tx } from './tx';
import { admits } from './concurrency';
import { settle } from './instance';

/**
 * One node of a fork, as it starts:
 * - `completed`: COMPLETED with `output` (completion order `seq`, the source's, so compensation
 *   order is kept); `skipped`: SKIPPED; `handled`: FAILED with `error`, handled by an error edge.
 *   None of them runs; their edges stay resolved.
 * - `ready`: every incoming edge resolved: READY, runs first.
 * - `pending`: waits for its other edges, `taken` and `notTaken` of them resolved already.
 */
export type ForkNode =
  | { nodeId: string; kind: 'completed'; output: unknown; seq: number }
  | { nodeId: string; kind: 'skipped' }
  | { nodeId: string; kind: 'handled'; error: SerializedError }
  | { nodeId: string; kind: 'ready' }
  | { nodeId: string; kind: 'pending'; taken: number; notTaken: number };

/** What {@link forkInstance} creates. */
export interface ForkPlan {
  /** The globals it starts with (JSON text). */
  variablesJson: string;
  /** The instance and history entry it is a copy of. */
  forkedFrom: { id: number; at: number };
  /** Every node of `wf`, planned. */
  nodes: ForkNode[];
  actor?: string | undefined;
  priority?: number | undefined;
  /** Its concurrency key, computed before the transaction (see createInstance). */
  slot?: string | undefined;
  /** A copy of a test run is a test run, with the same pinned results (no side effect it pinned runs for real). */
  test?: boolean | undefined;
  pinsJson?: string | null | undefined;
}

/**
 * Creates the fork of `plan` on `wf` at `tx.now` (PENDING, its ready nodes' rows due now, or
 * parked while a concurrency limit holds it), records `instance.created` with `forkedFrom` in its
 * history and `instance.forked` in the source's; returns the new id. A plan with no node left to
 * run completes at once.
 *
 * @throws EngineError NOT_FOUND when the source instance is gone (deleted or pruned since its
 *   state was read, outside this transaction); INTERNAL when the plan does not name every node of
 *   `wf` exactly once.
 */
export function forkInstance(tx: Tx, wf: CompiledWorkflow, plan: ForkPlan): number {
  const { q, now } = tx;
  // The source's state was read before this transaction: a delete may have come in between, and
  // its history entry below would then name no instance.
  if (!q.instances.head(plan.forkedFrom.id)) throw new EngineError('NOT_FOUND', `instance ${plan.forkedFrom.id} does not exist`);
  if (plan.nodes.length !== wf.nodes.size || plan.nodes.some((n) => !wf.nodes.has(n.nodeId))) {
    throw new EngineError('INTERNAL', `fork of instance ${plan.forkedFrom.id}: the plan does not match workflow "${wf.name}" v${wf.version}`);
  }
  const limit = wf.def.concurrency;
  let key: string | null = null;
  if (limit !== undefined) {
    if (plan.slot === undefined && limit.key !== undefined) throw new EngineError('INTERNAL', `workflow "${wf.name}" has a concurrency key and none was computed`);
    key = plan.slot ?? concurrencyKey(wf.name, undefined);
  }
  const held = key !== null && limit !== undefined && !admits(tx, key, limit.limit);
  const deadlineAt = wf.def.deadlineMs === undefined ? null : now + wf.def.deadlineMs;
  const id = q.instances.insert({
    workflowId: wf.id,
    status: 'PENDING',
    variablesJson: plan.variablesJson,
    now,
    deadlineAt,
    businessKey: null,
    concurrencyKey: key,
    held,
    ...(plan.priority === undefined ? {} : { priority: plan.priority }),
    ...(plan.test === true ? { test: true, pinsJson: plan.pinsJson ?? null } : {}),
  });
  let open = 0;
  for (const p of plan.nodes) {
    const node = wf.nodes.get(p.nodeId);
    if (!node) continue;
    const base = { instanceId: id, nodeId: p.nodeId, attemptLimit: node.retry.maxAttempts, now };
    switch (p.kind) {
      case 'completed':
        q.nodes.insert({ ...base, status: 'PENDING', pendingIn: 0 });
        q.nodes.complete({ instanceId: id, nodeId: p.nodeId, output: p.output, now, seq: p.seq });
        break;
      case 'skipped':
        q.nodes.insert({ ...base, status: 'PENDING', pendingIn: 0 });
        q.nodes.setStatus({ instanceId: id, nodeId: p.nodeId, status: 'SKIPPED' });
        break;
      case 'handled':
        q.nodes.insert({ ...base, status: 'PENDING', pendingIn: 0 });
        q.nodes.fail({ instanceId: id, nodeId: p.nodeId, error: p.error, now });
        q.nodes.markFailure({ instanceId: id, nodeId: p.nodeId, wait: { kind: 'handled' } });
        break;
      case 'ready':
        open++;
        q.nodes.insert({ ...base, status: 'READY', pendingIn: 0 });
        q.schedule.insert({ instanceId: id, nodeId: p.nodeId, kind: 'run', at: held ? PARKED_AT : now, retryCount: 0, now, instant: node.type.instant });
        break;
      case 'pending': {
        open++;
        q.nodes.insert({ ...base, status: 'PENDING', pendingIn: node.incoming.length });
        const need = node.join === 'all' ? node.incoming.length : 1;
        // The edges resolved in the source, replayed: the last one never comes (the node still waits).
        for (let k = 0; k < p.taken; k++) q.nodes.resolveEdge({ instanceId: id, nodeId: p.nodeId, taken: true, need, start: false, now });
        for (let k = 0; k < p.notTaken; k++) q.nodes.resolveEdge({ instanceId: id, nodeId: p.nodeId, taken: false, need, start: false, now });
        break;
      }
    }
  }
  if (deadlineAt !== null) q.schedule.insert({ instanceId: id, nodeId: null, kind: 'deadline', at: deadlineAt, retryCount: 0, now });
  q.history.append({
    instanceId: id,
    nodeId: null,
    type: 'instance.created',
    at: now,
    actor: plan.actor,
    data: { workflow: wf.name, version: wf.version, businessKey: null, forkedFrom: plan.forkedFrom, ...(held ? { held: { limit: limit?.limit } } : {}) },
  });
  q.history.append({ instanceId: plan.forkedFrom.id, nodeId: null, type: 'instance.forked', at: now, actor: plan.actor, data: { forkId: id, at: plan.forkedFrom.at } });
  tx.events.push({ type: 'instance.created', instanceId: id, workflow: wf.name, version: wf.version, ...testMark({ test: plan.test === true }) });
  if (open === 0 && !held) settle(tx, id);
  return id;
}
