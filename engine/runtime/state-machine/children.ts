/**
 * Child instances: the transitions of `subworkflow` and `map` nodes (DESIGN.md "Control flow").
 *
 * A node attempt that calls a workflow parks WAITING on a {@link ChildrenWait}: one `child` row
 * per item (a subworkflow has one), the first `maxConcurrency` children started in the same
 * transaction. Each child's end is recorded in the transaction that ends it — counters move, the
 * next item starts, failures past `toleratedFailures` cancel the rest — so a crash anywhere loses
 * nothing and starts no child twice. When the last child ended (or the node is failing) a `wake`
 * row is written; the worker that claims it settles the node's result (the results in item order,
 * or the failure) outside the transaction, as for any result, since edge conditions are
 * expressions (Step Functions' Map state and Temporal's child workflows; graphile-worker's
 * "the database is the queue").
 */
import type { ChildrenWait, InstanceHead } from '../../store/queries';
import { startsNothing } from '../../vocabulary';
import { testMark, type InstanceRef, type Tx } from './tx';
import { cancelInstance, createInstance, settle } from './instance';

/** What a `subworkflow` or `map` node's attempt asks for: the workflow version and each child's start variables (JSON text). */
export interface ChildrenRequest {
  mode: 'subworkflow' | 'map';
  workflowId: number;
  workflow: string;
  version: number;
  /** Each child's start variables, as JSON text, in item order. */
  inputs: string[];
  /** Each child's concurrency slot (its workflow has a limit), in item order; absent: none has one. */
  concurrencyKeys?: string[];
  maxConcurrency: number;
  toleratedFailures: number;
  /** How long the node waits for its children, ms (then the attempt fails with TIMEOUT). */
  timeoutMs?: number;
  /** Each input is merged over the parent's globals when its child starts. */
  mergeGlobals?: true;
}

/**
 * Parks `nodeId` WAITING on its children at `attempt`: stores the items, starts the first
 * `maxConcurrency` of them (each a child instance of `r.workflowId`, created as any instance,
 * eager dispatch included), and schedules the wait's timeout. No item: the wake row is due at
 * once (the result is `[]`).
 */
export function waitChildren(tx: Tx, inst: InstanceHead, nodeId: string, r: ChildrenRequest, attempt: number): void {
  const { q, now } = tx;
  const wait: ChildrenWait = {
    kind: 'children',
    mode: r.mode,
    ...(r.mergeGlobals === true ? { mergeGlobals: true as const } : {}),
    workflowId: r.workflowId,
    workflow: r.workflow,
    version: r.version,
    total: r.inputs.length,
    maxConcurrency: r.maxConcurrency,
    toleratedFailures: r.toleratedFailures,
    started: 0,
    completed: 0,
    failed: 0,
    ...(r.timeoutMs === undefined ? {} : { timeoutAt: now + r.timeoutMs }),
  };
  q.children.insertItems({ instanceId: inst.id, nodeId, attempt, inputs: r.inputs, ...(r.concurrencyKeys === undefined ? {} : { concurrencyKeys: r.concurrencyKeys }) });
  q.history.append({
    instanceId: inst.id,
    nodeId,
    type: 'children.started',
    at: now,
    attempt,
    data: { workflow: r.workflow, version: r.version, items: wait.total, maxConcurrency: r.maxConcurrency },
  });
  const first = Math.min(wait.total, wait.maxConcurrency);
  const globals = wait.mergeGlobals === true ? q.instances.variables(inst.id)?.variables : undefined;
  for (let i = 0; i < first; i++) startChild(tx, inst, nodeId, attempt, wait, r.inputs[i] as string, r.concurrencyKeys?.[i] ?? null, globals);
  q.nodes.park({ instanceId: inst.id, nodeId, status: 'WAITING', wait });
  if (wait.timeoutAt !== undefined) q.schedule.insert({ instanceId: inst.id, nodeId, kind: 'timeout', at: wait.timeoutAt, retryCount: 0, now });
  if (wait.total === 0) q.schedule.insert({ instanceId: inst.id, nodeId, kind: 'wake', at: now, retryCount: 0, now });
  tx.events.push({ type: 'node.changed', instanceId: inst.id, nodeId, status: 'WAITING', attempt, ...testMark(inst) });
  settle(tx, inst.id, inst);
}

/**
 * Starts item `wait.started` of a node attempt of `parent` as a child instance (with `input`, its
 * start variables as JSON text — merged over `globals`, the parent's, read when not given, if the
 * wait says so — and `slot`, its concurrency key when its workflow has a limit); a test run's
 * child is a test run.
 */
function startChild(
  tx: Tx,
  parent: InstanceRef,
  nodeId: string,
  attempt: number,
  wait: ChildrenWait,
  input: string,
  slot: string | null,
  globals?: Record<string, unknown>,
): void {
  const index = wait.started;
  const parentId = parent.id;
  let vars = input;
  if (wait.mergeGlobals === true) {
    const over = globals ?? tx.q.instances.variables(parentId)?.variables ?? {};
    vars = JSON.stringify({ ...over, ...(JSON.parse(input) as Record<string, unknown>) });
  }
  const childId = createInstance(tx, tx.workflow(wait.workflowId), vars, null, { parent: { id: parentId, nodeId, test: parent.test }, slot: slot ?? undefined });
  tx.q.children.started({ instanceId: parentId, nodeId, attempt, index, childId });
  wait.started++;
}

/**
 * Child instance `childId` ended as `status`, in this transaction: when its parent's node still
 * waits for this attempt's children, the counters move and the next item starts (a map keeps
 * `maxConcurrency` running); more failures than tolerated mark the node failing and cancel the
 * children still running; the last end (or the failing) writes the node's `wake` row. An end the
 * parent no longer waits for (the node was cancelled, timed out or retried) changes nothing there.
 */
export function childEnded(tx: Tx, childId: number, status: 'COMPLETED' | 'FAILED' | 'CANCELLED'): void {
  const { q, now } = tx;
  const link = q.children.link(childId);
  if (!link) return;
  const parent = q.instances.head(link.instanceId);
  if (!parent || startsNothing(parent.status)) return;
  const state = q.nodes.get(link.instanceId, link.nodeId);
  const w = state?.wait;
  if (!state || state.status !== 'WAITING' || w?.kind !== 'children' || state.attempt !== link.attempt) return;
  const next: ChildrenWait = { ...w };
  if (status === 'COMPLETED') next.completed++;
  // The children a failing node cancels are not its failures.
  else if (next.failing === undefined || status !== 'CANCELLED') next.failed++;
  let wake = false;
  let cancelRest = false;
  if (next.failing === undefined) {
    if (next.failed > next.toleratedFailures) {
      next.failing = true;
      wake = true;
      cancelRest = true;
    } else if (next.completed + next.failed === next.total) {
      wake = true;
    } else if (next.started < next.total && parent.pausedAt === null) {
      // (A paused parent starts no child: the unpause tops its nodes up, startWaitingChildren.)
      const input = q.children.input({ instanceId: link.instanceId, nodeId: link.nodeId, attempt: link.attempt, index: next.started });
      if (input !== undefined) startChild(tx, parent, link.nodeId, link.attempt, next, input.json, input.concurrencyKey);
    }
  }
  if (status !== 'COMPLETED') {
    q.history.append({ instanceId: link.instanceId, nodeId: link.nodeId, type: 'child.failed', at: now, attempt: link.attempt, data: { childId, index: link.index, status } });
  }
  // Written before the cancels below: each of those ends calls back here and reads it.
  q.nodes.park({ instanceId: link.instanceId, nodeId: link.nodeId, status: 'WAITING', wait: next });
  if (cancelRest) {
    for (const id of q.children.live({ instanceId: link.instanceId, nodeId: link.nodeId })) cancelInstance(tx, id, false, 'runnel');
  }
  if (wake) q.schedule.insert({ instanceId: link.instanceId, nodeId: link.nodeId, kind: 'wake', at: now, retryCount: 0, now });
}

/**
 * Cancels the live child instances of an instance (of one node when `nodeId` is given), each as
 * {@link cancelInstance} does, compensating when `compensate`: its parent is cancelled or failing,
 * or the node stopped waiting for them (a timeout, a retry).
 */
export function cancelChildren(tx: Tx, instanceId: number, nodeId: string | undefined, compensate: boolean, actor?: string): void {
  const live = tx.q.children.live(nodeId === undefined ? { instanceId } : { instanceId, nodeId });
  for (const id of live) cancelInstance(tx, id, compensate, actor ?? 'runnel');
}

/**
 * Starts the children a node of an unpaused instance owes: up to `maxConcurrency` running for each
 * node still waiting on children (a paused parent started none when its children ended).
 */
export function startWaitingChildren(tx: Tx, inst: InstanceRef): void {
  const { q } = tx;
  const instanceId = inst.id;
  for (const n of q.nodes.all(instanceId)) {
    const w = n.wait;
    if (n.status !== 'WAITING' || w?.kind !== 'children' || w.failing !== undefined) continue;
    const next: ChildrenWait = { ...w };
    let globals: Record<string, unknown> | undefined;
    while (next.started < next.total && next.started - next.completed - next.failed < next.maxConcurrency) {
      const input = q.children.input({ instanceId, nodeId: n.nodeId, attempt: n.attempt, index: next.started });
      if (input === undefined) break;
      if (next.mergeGlobals === true) globals ??= q.instances.variables(instanceId)?.variables;
      startChild(tx, inst, n.nodeId, n.attempt, next, input.json, input.concurrencyKey, globals);
    }
    if (next.started !== w.started) q.nodes.park({ instanceId, nodeId: n.nodeId, status: 'WAITING', wait: next });
  }
}
