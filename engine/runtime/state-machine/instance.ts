/**
 * Instance-level transitions: create, settle (RUNNING ⇄ WAITING → COMPLETED), suspend, fail
 * (compensating first), cancel, and the deadline.
 */
import { EngineError, type SerializedError } from '../../errors';
import { isTerminal, startsNothing } from '../../vocabulary';
import type { CompiledWorkflow } from '../compiled';
import { concurrencyKey, PARKED_AT, type InstanceHead, type NewNode, type Pins, type Suspension } from '../../store/queries';
import { takeDispatch, testMark, unschedule, type InstanceRef, type Tx } from './tx';
import { continueCompensation } from './compensation';
import { cancelChildren, childEnded } from './children';
import { admits, releaseSlot } from './concurrency';

/** The instance and node that start a child instance (a `subworkflow` or `map` node's), and whether it is a test run (its children are). */
export interface ParentLink {
  id: number;
  nodeId: string;
  test: boolean;
}

/** The optional parts of {@link createInstance}. */
export interface CreateOptions {
  actor?: string | undefined;
  /** The instance and node that start it (a child). */
  parent?: ParentLink | undefined;
  /** Its concurrency key, computed before the transaction. */
  slot?: string | undefined;
  /** Higher first in claims; default: the parent's for a child, else the workflow's `priority`, else 0. */
  priority?: number | undefined;
  /** A test run (excluded from metrics and the default list); default: the parent's for a child, else not. */
  test?: boolean | undefined;
  /** A test run's pinned results by node id (checked by the caller: known node ids, JSON). */
  pins?: Pins | undefined;
}

/**
 * Creates an instance of `wf` at `tx.now` with its node states and the schedule rows of its
 * entry nodes (and of its deadline); returns the new id. While `tx.dispatch` has free slots
 * (for entry nodes of instant types: instant starts), entry nodes start at once (RUNNING,
 * leased to the worker) and the instance is created RUNNING.
 * A child instance names its `parent`.
 *
 * A workflow with a concurrency limit (./concurrency.ts) needs `slot`, the instance's concurrency
 * key (computed before the transaction: the key expression is async). At the limit the instance is
 * created PENDING and held: its entry nodes READY with their rows parked, nothing dispatched.
 *
 * @throws EngineError INTERNAL when the workflow has a key expression and no `slot` was given.
 */
export function createInstance(tx: Tx, wf: CompiledWorkflow, variablesJson: string, businessKey: string | null, options: CreateOptions = {}): number {
  const { actor, parent, slot } = options;
  const { q, now } = tx;
  const deadlineAt = wf.def.deadlineMs === undefined ? null : now + wf.def.deadlineMs;
  const limit = wf.def.concurrency;
  let key: string | null = null;
  if (limit !== undefined) {
    if (slot === undefined && limit.key !== undefined) throw new EngineError('INTERNAL', `workflow "${wf.name}" has a concurrency key and none was computed`);
    key = slot ?? concurrencyKey(wf.name, undefined);
  }
  const held = key !== null && limit !== undefined && !admits(tx, key, limit.limit);
  // Every node's row in one statement: entry nodes RUNNING while the dispatch can start them
  // (taken below, with their schedule rows), else READY; the others PENDING.
  const d = held ? undefined : tx.dispatch;
  let free = d?.slots ?? 0;
  let instantFree = d?.instant ?? 0;
  const nodes: NewNode[] = [];
  for (const n of wf.nodes.values()) {
    const status = n.incoming.length > 0 ? 'PENDING' : (n.type.instant === true ? instantFree-- : free--) > 0 ? 'RUNNING' : 'READY';
    nodes.push({ nodeId: n.id, status, attemptLimit: n.retry.maxAttempts, pendingIn: n.incoming.length });
  }
  const running = nodes.some((n) => n.status === 'RUNNING');
  // What the insert stores: given, else the parent's, else not a test run.
  const test = options.test ?? parent?.test ?? false;
  const id = q.instances.insert({
    workflowId: wf.id,
    status: running ? 'RUNNING' : 'PENDING',
    variablesJson,
    now,
    deadlineAt,
    businessKey,
    ...(parent === undefined ? {} : { parentId: parent.id, parentNodeId: parent.nodeId }),
    concurrencyKey: key,
    held,
    ...(options.priority === undefined ? {} : { priority: options.priority }),
    test,
    ...(options.pins === undefined ? {} : { pinsJson: JSON.stringify(options.pins) }),
  });
  q.nodes.insertAll({ instanceId: id, now, nodes });
  const started: string[] = [];
  for (const n of nodes) {
    if (n.status === 'RUNNING' && d !== undefined) {
      const scheduleId = q.schedule.insertLeased({ instanceId: id, nodeId: n.nodeId, owner: d.owner, leaseUntil: d.leaseUntil, now });
      takeDispatch(d, wf.nodes.get(n.nodeId)?.type.instant === true);
      d.claims.push({ scheduleId, version: 1, instanceId: id, workflowId: wf.id, nodeId: n.nodeId, attempt: 1, attemptLimit: n.attemptLimit });
      started.push(n.nodeId);
    } else if (n.status === 'READY') {
      q.schedule.insert({ instanceId: id, nodeId: n.nodeId, kind: 'run', at: held ? PARKED_AT : now, retryCount: 0, now, instant: wf.nodes.get(n.nodeId)?.type.instant });
    }
  }
  if (deadlineAt !== null) q.schedule.insert({ instanceId: id, nodeId: null, kind: 'deadline', at: deadlineAt, retryCount: 0, now });
  q.history.append({
    instanceId: id,
    nodeId: null,
    type: 'instance.created',
    at: now,
    actor,
    data: {
      workflow: wf.name,
      version: wf.version,
      businessKey,
      ...(parent === undefined ? {} : { parent: { instanceId: parent.id, nodeId: parent.nodeId } }),
      ...(held ? { held: { limit: limit?.limit } } : {}),
      ...(options.test === true ? { test: true, ...(options.pins === undefined ? {} : { pinned: Object.keys(options.pins) }) } : {}),
    },
  });
  const mark = testMark({ test });
  tx.events.push({ type: 'instance.created', instanceId: id, workflow: wf.name, version: wf.version, ...mark });
  if (running) tx.events.push({ type: 'instance.changed', instanceId: id, status: 'RUNNING', ...mark });
  for (const nodeId of started) tx.events.push({ type: 'node.changed', instanceId: id, nodeId, status: 'RUNNING', attempt: 1, ...mark });
  return id;
}

/**
 * Recomputes a live instance's status from its node states: COMPLETED when no node is open,
 * else RUNNING while a node is ready or running, else WAITING. SUSPENDED and COMPENSATING are
 * left alone (they end by resume or by the compensation chain).
 *
 * `current` is the instance's head when the caller read it in this transaction and its status
 * has not changed since: every transition settles, and reading the row again was one of its
 * most frequent statements (bench/profile.ts).
 */
export function settle(tx: Tx, instanceId: number, current?: InstanceHead): void {
  const { q, now } = tx;
  const inst = current ?? q.instances.head(instanceId);
  if (!inst || isTerminal(inst.status) || inst.status === 'COMPENSATING' || inst.status === 'SUSPENDED') return;
  const { open, active } = q.nodes.openCounts(instanceId);
  if (open === 0) {
    q.instances.end({ id: instanceId, status: 'COMPLETED', now });
    unschedule(tx, instanceId);
    q.history.append({ instanceId, nodeId: null, type: 'instance.completed', at: now });
    tx.events.push({ type: 'instance.finished', instanceId, status: 'COMPLETED', ...testMark(inst) });
    instanceEnded(tx, inst, 'COMPLETED');
    return;
  }
  const status = active > 0 ? 'RUNNING' : 'WAITING';
  if (status !== inst.status) {
    q.instances.setStatus({ id: instanceId, status, now });
    tx.events.push({ type: 'instance.changed', instanceId, status, ...testMark(inst) });
  }
}

/** SUSPENDs the instance for a person (DESIGN.md section 4); one already SUSPENDED keeps showing its first incident. */
export function suspend(tx: Tx, inst: InstanceRef, suspension: Suspension): void {
  const instanceId = inst.id;
  tx.q.instances.suspend({ id: instanceId, suspension, now: tx.now });
  tx.q.history.append({
    instanceId,
    nodeId: suspension.nodeId,
    type: 'instance.suspended',
    at: tx.now,
    data: { reason: suspension.kind, error: suspension.error, attempts: suspension.attempts },
  });
  tx.events.push({ type: 'instance.changed', instanceId, status: 'SUSPENDED', ...testMark(inst) });
}

/**
 * After a person resolved the incident at `resolvedNodeId`: when another incident of the
 * instance is still open (two branches failed), the instance stays SUSPENDED, now showing that
 * one. Returns whether it did.
 */
export function suspendOnNextIncident(tx: Tx, inst: InstanceRef, resolvedNodeId: string): boolean {
  const next = tx.q.nodes.otherIncidents({ instanceId: inst.id, exceptNodeId: resolvedNodeId })[0];
  if (!next) return false;
  const error = next.error ?? { code: 'HANDLER_ERROR', message: 'failed' };
  suspend(tx, inst, { kind: 'incident', nodeId: next.nodeId, error, attempts: next.attempt, at: next.endedAt ?? tx.now });
  return true;
}

/**
 * Fails (or cancels, with compensation) an instance: no new node starts, pending timers and
 * retries go, nodes already running finish and are recorded, then compensation runs in reverse
 * completion order (DESIGN.md "Rules pinned").
 */
export function failInstance(tx: Tx, inst: InstanceRef, error: SerializedError | null, endStatus: 'FAILED' | 'CANCELLED', actor?: string): void {
  const { q, now } = tx;
  const instanceId = inst.id;
  const mark = testMark(inst);
  q.instances.startCompensating({ id: instanceId, endStatus, ...(error === null ? {} : { error }), now });
  q.schedule.deleteUnleasedForInstance(instanceId);
  q.schedule.deleteDeadline(instanceId);
  // Its child instances go with it, compensating what they did (a saga's sub-sagas).
  cancelChildren(tx, instanceId, undefined, true, actor);
  for (const n of q.nodes.open(instanceId)) {
    if (n.status === 'RUNNING') continue;
    q.nodes.setStatus({ instanceId, nodeId: n.nodeId, status: 'CANCELLED' });
    tx.events.push({ type: 'node.changed', instanceId, nodeId: n.nodeId, status: 'CANCELLED', ...mark });
  }
  q.history.append({
    instanceId,
    nodeId: null,
    type: endStatus === 'FAILED' ? 'instance.failing' : 'instance.cancelling',
    at: now,
    actor,
    ...(error === null ? {} : { data: { error } }),
  });
  tx.events.push({ type: 'instance.changed', instanceId, status: 'COMPENSATING', ...mark });
  continueCompensation(tx, instanceId);
}

/**
 * Cancels a live instance (DESIGN.md "Rules pinned"): pending timers and retries go at once,
 * running handlers lose their claims and are aborted after commit, nothing downstream starts; it
 * ends CANCELLED, compensating first only when asked. Its live child instances are cancelled
 * the same way.
 */
export function cancelInstance(tx: Tx, instanceId: number, compensate: boolean, actor?: string): void {
  const { q, now } = tx;
  const head = q.instances.head(instanceId);
  const mark = head === undefined ? undefined : testMark(head);
  // A paused instance is cancelled too: its compensations must run.
  q.instances.unpause({ id: instanceId, now });
  unschedule(tx, instanceId);
  for (const n of q.nodes.open(instanceId)) {
    q.nodes.setStatus({ instanceId, nodeId: n.nodeId, status: 'CANCELLED' });
    tx.events.push({ type: 'node.changed', instanceId, nodeId: n.nodeId, status: 'CANCELLED', ...mark });
  }
  // After its nodes: the children's ends find nothing waiting for them.
  cancelChildren(tx, instanceId, undefined, compensate, actor);
  q.history.append({ instanceId, nodeId: null, type: 'instance.cancel_requested', at: now, actor, data: { compensate } });
  tx.aborts.push({ instanceId, code: 'CANCELLED', message: `instance ${instanceId} was cancelled` });
  if (compensate) {
    // A compensation that failed (the instance was SUSPENDED on it) is run again, first.
    q.nodes.resetFailedCompensations(instanceId);
    q.instances.startCompensating({ id: instanceId, endStatus: 'CANCELLED', now });
    tx.events.push({ type: 'instance.changed', instanceId, status: 'COMPENSATING', ...mark });
    continueCompensation(tx, instanceId);
    return;
  }
  q.instances.end({ id: instanceId, status: 'CANCELLED', now });
  q.history.append({ instanceId, nodeId: null, type: 'instance.cancelled', at: now, actor });
  tx.events.push({ type: 'instance.finished', instanceId, status: 'CANCELLED', ...mark });
  instanceEnded(tx, head ?? { id: instanceId, parentId: null, concurrencyKey: null }, 'CANCELLED');
}

/**
 * An instance ended (`status`) in this transaction, after its row and history say so: its parent's
 * node hears of it (children.ts) and its concurrency slot goes to the next held instance
 * (concurrency.ts). Every transition that ends an instance calls this.
 */
export function instanceEnded(tx: Tx, inst: Pick<InstanceHead, 'id' | 'parentId' | 'concurrencyKey'>, status: 'COMPLETED' | 'FAILED' | 'CANCELLED'): void {
  if (inst.parentId !== null) childEnded(tx, inst.id, status);
  releaseSlot(tx, inst);
}

/**
 * Whether an instance is past its deadline and not failing or ended yet. A loop turn fires only
 * so many deadline rows; an instance whose row waits for a later turn is failed as soon as any
 * transition touches it, so none of its nodes starts, and no person's action completes it, after
 * the deadline (many instances started together share one deadline).
 */
export function pastDeadline(tx: Tx, inst: InstanceHead): boolean {
  // A paused instance's deadline clock stands still (its deadline moves on at the unpause).
  return inst.deadlineAt !== null && inst.deadlineAt <= tx.now && inst.pausedAt === null && !startsNothing(inst.status);
}

/** Fails an instance whose deadline passed (its deadline row goes too); its running handlers are aborted after commit. */
export function failOnDeadline(tx: Tx, inst: InstanceRef): void {
  const error = new EngineError('DEADLINE_EXCEEDED', `instance ${inst.id} passed its deadline`, { retryable: false }).toJSON();
  failInstance(tx, inst, error, 'FAILED');
  tx.aborts.push({ instanceId: inst.id, code: 'DEADLINE_EXCEEDED', message: 'instance deadline passed' });
}

/**
 * The instance's head after failing it when it is past its deadline (see {@link pastDeadline});
 * undefined when it does not exist.
 */
export function headAfterDeadline(tx: Tx, instanceId: number): InstanceHead | undefined {
  const inst = tx.q.instances.head(instanceId);
  if (!inst || !pastDeadline(tx, inst)) return inst;
  failOnDeadline(tx, inst);
  return tx.q.instances.head(instanceId);
}
