/**
 * The instance state machine: every synchronous transition, run inside one write transaction.
 *
 * This is the one place that decides statuses (DESIGN.md section 2: "enforce it in one place").
 *
 * Instance:  PENDING → RUNNING ⇄ WAITING → COMPLETED
 *            RUNNING/WAITING → SUSPENDED (incident) → RUNNING (retry/skip) | COMPENSATING (fail)
 *            any live → COMPENSATING → FAILED | CANCELLED | SUSPENDED (a compensation failed)
 *            any live → CANCELLED (cancel without compensation)
 * Node:      PENDING → READY → RUNNING → COMPLETED | RETRYING → READY… | FAILED | WAITING → COMPLETED
 *            PENDING → SKIPPED (no incoming edge taken); COMPLETED → COMPENSATING → COMPENSATED
 *            open → CANCELLED (cancel, or the instance failed before it started)
 */
import type { SerializedError } from '../errors';
import type { RuntimeRepository, InstanceHead, InstanceRow, NodeStateRow } from '../db/repositories/runtime-repository';
import { HANDLED_FAILURE, INPUT_AS_VARIABLES } from '../db/repositories/runtime-repository';
import { TERMINAL_STATUSES } from '../vocabulary';
import type { CompiledWorkflow } from './compiled';
import type { EngineEvent } from './events';

/** Whether an edge was taken, and why not when a `when` read a missing variable. */
export interface EdgeDecision {
  edgeId: string;
  to: string;
  taken: boolean;
  reason?: string;
}

/** A node started by eager dispatch, for the worker to run once the transaction commits. */
export interface EagerClaim {
  /** Its schedule row, leased to the worker, and that row's version. */
  scheduleId: number;
  version: number;
  instanceId: number;
  wf: CompiledWorkflow;
  nodeId: string;
  /** The attempt just started (1-based) and the node's limit. */
  attempt: number;
  attemptLimit: number;
}

/** The worker's offer to run nodes made ready in its transaction (see {@link StateMachine.eager}). */
export interface EagerDispatch {
  /** The worker's lease owner name. */
  owner: string;
  /** Lease expiry of rows dispatched at once, epoch ms. */
  leaseUntil: number;
  /** Free handler slots left; each dispatch takes one. */
  slots: number;
  /** Dispatched so far in this transaction. */
  claims: EagerClaim[];
}

/** Why an instance is SUSPENDED (stored as `instance.suspension_json`). */
export interface Suspension {
  /** `incident`: a node with onFailure=suspend failed; `compensation`: a compensation failed. */
  kind: 'incident' | 'compensation';
  nodeId: string;
  error: SerializedError;
  attempts: number;
  at: number;
}

/** The state machine over one connection's prepared statements. */
export class StateMachine {
  /** Events of the transaction under way; the caller emits them after commit. */
  events: EngineEvent[] = [];

  constructor(
    private readonly repo: RuntimeRepository,
    private readonly workflowById: (id: number) => CompiledWorkflow,
  ) {}

  /**
   * Eager dispatch, set by the worker while it commits outcomes (Temporal's eager activity
   * execution: a worker that completes a task and has a free slot starts the next one in the same
   * round trip). A node made ready in that transaction is started there (RUNNING, its attempt
   * counted, its schedule row leased to the worker) instead of being made READY for a later claim.
   */
  eager: EagerDispatch | undefined;

  /**
   * The schedule row of the claim whose outcome is being committed, already checked as this
   * worker's and about to be deleted: eager dispatch of a node of the same instance takes it over
   * ({@link resolveEdge}); the worker deletes it when nobody did.
   */
  spareRow: { id: number; version: number; instanceId: number } | undefined;

  /** Appends a history row and returns its id. `data` is JSON-encoded; omit it for none. */
  history(instanceId: number | null, nodeId: string | null, type: string, at: number, data?: unknown, attempt?: number, actor?: string): number {
    return Number(this.repo.history.run(
      instanceId,
      nodeId,
      type,
      at,
      attempt ?? null,
      actor ?? null,
      data === undefined ? null : JSON.stringify(data),
    ).lastInsertRowid);
  }

  /** The instance row, or undefined. */
  instance(id: number): InstanceRow | undefined {
    return this.repo.instance.get(id);
  }

  /** The node state row, or undefined. */
  node(instanceId: number, nodeId: string): NodeStateRow | undefined {
    return this.repo.nodeState.get(instanceId, nodeId);
  }

  /**
   * Creates an instance of `wf` with its node states and the schedule rows of its entry nodes
   * (and of its deadline); returns the new id. While {@link eager} has free slots, entry nodes
   * start at once (RUNNING, leased to the worker) and the instance is created RUNNING.
   */
  createInstance(wf: CompiledWorkflow, variablesJson: string, now: number, businessKey: string | null, actor?: string): number {
    const deadline = wf.def.deadlineMs === undefined ? null : now + wf.def.deadlineMs;
    const eager = this.eager !== undefined && this.eager.slots > 0 ? this.eager : undefined;
    const running = eager !== undefined && wf.nodes.size > 0;
    const id = Number(
      this.repo.insertInstance.run(wf.id, running ? 'RUNNING' : 'PENDING', variablesJson, INPUT_AS_VARIABLES, now, running ? now : null, now, deadline, businessKey).lastInsertRowid,
    );
    const started: string[] = [];
    for (const n of wf.nodes.values()) {
      if (n.incoming.length > 0) {
        this.repo.insertNodeState.run(id, n.id, 'PENDING', n.retry.maxAttempts, n.incoming.length);
      } else if (eager !== undefined && eager.slots > 0) {
        this.repo.insertRunningNodeState.run(id, n.id, n.retry.maxAttempts, now);
        const scheduleId = Number(this.repo.insertLeased.run(id, n.id, eager.leaseUntil, eager.owner, eager.leaseUntil, now).lastInsertRowid);
        eager.slots--;
        eager.claims.push({ scheduleId, version: 1, instanceId: id, wf, nodeId: n.id, attempt: 1, attemptLimit: n.retry.maxAttempts });
        started.push(n.id);
      } else {
        this.repo.insertNodeState.run(id, n.id, 'READY', n.retry.maxAttempts, 0);
        this.repo.insertSchedule.run(id, n.id, 'run', now, 0, now);
      }
    }
    if (deadline !== null) this.repo.insertSchedule.run(id, null, 'deadline', deadline, 0, now);
    this.history(id, null, 'instance.created', now, { workflow: wf.name, version: wf.version, businessKey }, undefined, actor);
    this.events.push({ type: 'instance.created', instanceId: id, workflow: wf.name, version: wf.version });
    if (running) this.events.push({ type: 'instance.changed', instanceId: id, status: 'RUNNING' });
    for (const nodeId of started) this.events.push({ type: 'node.changed', instanceId: id, nodeId, status: 'RUNNING', attempt: 1 });
    return id;
  }

  /**
   * Resolves one incoming edge of `to`; when all are resolved, makes it READY (scheduling a run
   * now) or SKIPPED, and a skip flows on through every edge leaving it (DESIGN.md section 3).
   * While {@link eager} has free slots, a node that becomes ready is started at once instead and
   * handed to the worker (see {@link EagerDispatch}). Returns whether some node became READY or
   * RUNNING.
   */
  resolveEdge(instanceId: number, wf: CompiledWorkflow, to: string, taken: boolean, now: number): boolean {
    const node = wf.nodes.get(to);
    if (!node) return false;
    const eager = this.eager !== undefined && this.eager.slots > 0 ? this.eager : undefined;
    const t = taken ? 1 : 0;
    const need = node.join === 'all' ? node.incoming.length : 1;
    const start = eager ? 1 : 0;
    const r = this.repo.resolveEdge.get(t, need, eager ? 'RUNNING' : 'READY', t, need, start, start, t, need, now, t, instanceId, to);
    if (!r || r.pending_in !== 0) return false;
    if (r.status === 'READY') {
      this.repo.insertSchedule.run(instanceId, to, 'run', now, 0, now);
      return true;
    }
    if (r.status === 'RUNNING' && eager) {
      let scheduleId: number;
      let version = 1;
      const spare = this.spareRow;
      if (spare !== undefined && spare.instanceId === instanceId) {
        this.repo.reuseLeased.run(to, eager.leaseUntil, eager.leaseUntil, now, spare.id);
        this.spareRow = undefined;
        scheduleId = spare.id;
        version = spare.version + 1;
      } else {
        scheduleId = Number(this.repo.insertLeased.run(instanceId, to, eager.leaseUntil, eager.owner, eager.leaseUntil, now).lastInsertRowid);
      }
      eager.slots--;
      eager.claims.push({ scheduleId, version, instanceId, wf, nodeId: to, attempt: r.attempt, attemptLimit: r.attempt_limit });
      this.events.push({ type: 'node.changed', instanceId, nodeId: to, status: 'RUNNING', attempt: r.attempt });
      return true;
    }
    if (r.status !== 'SKIPPED') return false;
    this.history(instanceId, to, 'node.skipped', now, {
      reason: node.join === 'all' ? 'join "all": not every incoming edge was taken' : 'no incoming edge was taken',
    });
    this.events.push({ type: 'node.changed', instanceId, nodeId: to, status: 'SKIPPED' });
    let readied = false;
    for (const e of node.outgoing) readied = this.resolveEdge(instanceId, wf, e.to, false, now) || readied;
    for (const e of node.errorOut) readied = this.resolveEdge(instanceId, wf, e.to, false, now) || readied;
    return readied;
  }

  /**
   * Records `nodeId` COMPLETED with `output`, merges `patch` into the globals, and routes its
   * edges by `decisions` (its error edges are resolved as not taken).
   */
  completeNode(
    inst: InstanceHead,
    wf: CompiledWorkflow,
    nodeId: string,
    output: unknown,
    patch: Record<string, unknown>,
    decisions: EdgeDecision[],
    now: number,
    attempt: number,
    startedAt: number | null,
  ): void {
    const seq = this.history(inst.id, nodeId, 'node.completed', now, startedAt === null ? undefined : { durationMs: now - startedAt }, attempt);
    this.repo.completeNode.run(JSON.stringify(output ?? null), now, seq, inst.id, nodeId);
    this.events.push({ type: 'node.changed', instanceId: inst.id, nodeId, status: 'COMPLETED', attempt });
    if (inst.status === 'COMPENSATING') {
      // The instance is failing: a node that was already running finished; it is recorded (and
      // will be compensated) but nothing downstream starts.
      this.continueCompensation(inst.id, now);
      return;
    }
    if (Object.keys(patch).length > 0) this.mergeVariables(inst.id, patch, now);
    let readied = false;
    for (const d of decisions) {
      if (!d.taken && d.reason) this.history(inst.id, nodeId, 'edge.not_taken', now, { edge: d.edgeId, reason: d.reason });
      readied = this.resolveEdge(inst.id, wf, d.to, d.taken, now) || readied;
    }
    const node = wf.nodes.get(nodeId);
    for (const e of node?.errorOut ?? []) readied = this.resolveEdge(inst.id, wf, e.to, false, now) || readied;
    // A RUNNING instance that just got a READY node stays RUNNING: settling would only count
    // node states to learn that (the usual case of a step in a chain).
    if (readied && inst.status === 'RUNNING') return;
    this.settle(inst.id, now, inst);
  }

  /** Merges `patch` into the instance's globals as they are now (parallel branches both land). */
  mergeVariables(instanceId: number, patch: Record<string, unknown>, now: number): void {
    const cur = this.repo.instance.get(instanceId);
    if (!cur) return;
    const vars = { ...(JSON.parse(cur.variables_json) as Record<string, unknown>), ...patch };
    this.repo.setVariables.run(JSON.stringify(vars), now, instanceId);
  }

  /**
   * Schedules attempt `attempt + 1` of a failed node at `runAt`. `startedAt` (when the failed
   * attempt started) gives history its `durationMs`, as for a completion: the monitor's Gantt
   * draws a bar per attempt from it.
   */
  retryNode(inst: InstanceHead, nodeId: string, error: SerializedError, attempt: number, runAt: number, now: number, startedAt?: number): void {
    this.repo.waitNode.run('RETRYING', JSON.stringify({ kind: 'retry', until: runAt }), JSON.stringify(error), inst.id, nodeId);
    this.repo.insertSchedule.run(inst.id, nodeId, 'run', runAt, attempt, now);
    this.history(inst.id, nodeId, 'node.failed', now, { error, willRetry: true, nextAttemptAt: runAt, ...(startedAt === undefined ? {} : { durationMs: now - startedAt }) }, attempt);
    this.events.push({ type: 'node.changed', instanceId: inst.id, nodeId, status: 'RETRYING', attempt });
    this.settle(inst.id, now, inst);
  }

  /**
   * A node failed for good (retries exhausted or a non-retryable error): dead-letters it, then
   * takes its error edges if any was taken, else suspends the instance (onFailure=suspend) or
   * fails it (compensating first). `startedAt`: as for {@link retryNode}.
   */
  failNode(inst: InstanceHead, wf: CompiledWorkflow, nodeId: string, error: SerializedError, attempt: number, errorDecisions: EdgeDecision[], now: number, startedAt?: number): void {
    this.repo.failNode.run('FAILED', JSON.stringify(error), now, inst.id, nodeId);
    this.history(inst.id, nodeId, 'node.failed', now, { error, willRetry: false, ...(startedAt === undefined ? {} : { durationMs: now - startedAt }) }, attempt);
    this.events.push({ type: 'node.changed', instanceId: inst.id, nodeId, status: 'FAILED', attempt });
    if (inst.status === 'COMPENSATING') {
      this.continueCompensation(inst.id, now);
      return;
    }
    const node = wf.nodes.get(nodeId);
    if (errorDecisions.some((d) => d.taken) && node) {
      this.repo.markHandled.run(HANDLED_FAILURE, inst.id, nodeId);
      for (const e of node.outgoing) this.resolveEdge(inst.id, wf, e.to, false, now);
      for (const d of errorDecisions) {
        if (!d.taken && d.reason) this.history(inst.id, nodeId, 'edge.not_taken', now, { edge: d.edgeId, reason: d.reason });
        this.resolveEdge(inst.id, wf, d.to, d.taken, now);
      }
      this.settle(inst.id, now);
      return;
    }
    this.repo.deadLetter.run(inst.id, nodeId, 'node', attempt, JSON.stringify(error), now);
    if (node?.onFailure === 'suspend') {
      this.repo.markIncident.run(inst.id, nodeId);
      this.suspend(inst.id, { kind: 'incident', nodeId, error, attempts: attempt, at: now }, now);
      return;
    }
    this.failInstance(inst.id, error, 'FAILED', now);
  }

  /** SUSPENDs the instance for a person (DESIGN.md section 4). */
  /**
   * After a person resolved the incident at `resolvedNodeId`: when another incident of the
   * instance is still open (two branches failed), the instance stays SUSPENDED, now showing that
   * one. Returns whether it did.
   */
  suspendOnNextIncident(instanceId: number, resolvedNodeId: string, now: number): boolean {
    const next = this.repo.otherIncidents.get(instanceId, resolvedNodeId);
    if (!next) return false;
    const error = next.error_json === null ? { code: 'HANDLER_ERROR', message: 'failed' } : (JSON.parse(next.error_json) as SerializedError);
    this.suspend(instanceId, { kind: 'incident', nodeId: next.node_id, error, attempts: next.attempt, at: next.ended_at ?? now }, now);
    return true;
  }

  /** SUSPENDs the instance for a person (DESIGN.md section 4); one already SUSPENDED keeps showing its first incident. */
  suspend(instanceId: number, suspension: Suspension, now: number): void {
    this.repo.suspendInstance.run(JSON.stringify(suspension), now, instanceId);
    this.history(instanceId, suspension.nodeId, 'instance.suspended', now, { reason: suspension.kind, error: suspension.error, attempts: suspension.attempts });
    this.events.push({ type: 'instance.changed', instanceId, status: 'SUSPENDED' });
  }

  /**
   * Fails (or cancels, with compensation) an instance: no new node starts, pending timers and
   * retries go, nodes already running finish and are recorded, then compensation runs in
   * reverse completion order (DESIGN.md "Rules pinned").
   */
  failInstance(instanceId: number, error: SerializedError | null, endStatus: 'FAILED' | 'CANCELLED', now: number, actor?: string): void {
    this.repo.startCompensating.run(endStatus, error === null ? null : JSON.stringify(error), now, instanceId);
    this.repo.deleteUnleasedInstanceSchedule.run(instanceId);
    this.repo.deleteDeadline.run(instanceId);
    for (const n of this.repo.openNodes.all(instanceId)) {
      if (n.status === 'RUNNING') continue;
      this.repo.setNodeStatus.run('CANCELLED', instanceId, n.node_id);
      this.events.push({ type: 'node.changed', instanceId, nodeId: n.node_id, status: 'CANCELLED' });
    }
    this.history(instanceId, null, endStatus === 'FAILED' ? 'instance.failing' : 'instance.cancelling', now, error === null ? undefined : { error }, undefined, actor);
    this.events.push({ type: 'instance.changed', instanceId, status: 'COMPENSATING' });
    this.continueCompensation(instanceId, now);
  }

  /**
   * Cancels a live instance (DESIGN.md "Rules pinned"): pending timers and retries go at once,
   * running handlers lose their claims (the caller aborts them), nothing downstream starts; it
   * ends CANCELLED, compensating first only when asked.
   */
  cancelInstance(instanceId: number, compensate: boolean, now: number, actor?: string): void {
    this.repo.deleteInstanceSchedule.run(instanceId);
    for (const n of this.repo.openNodes.all(instanceId)) {
      this.repo.setNodeStatus.run('CANCELLED', instanceId, n.node_id);
      this.events.push({ type: 'node.changed', instanceId, nodeId: n.node_id, status: 'CANCELLED' });
    }
    this.history(instanceId, null, 'instance.cancel_requested', now, { compensate }, undefined, actor);
    if (compensate) {
      // A compensation that failed (the instance was SUSPENDED on it) is run again, first.
      this.repo.resetFailedCompensations.run(instanceId);
      this.repo.startCompensating.run('CANCELLED', null, now, instanceId);
      this.events.push({ type: 'instance.changed', instanceId, status: 'COMPENSATING' });
      this.continueCompensation(instanceId, now);
      return;
    }
    this.repo.endInstance.run('CANCELLED', null, now, now, instanceId);
    this.history(instanceId, null, 'instance.cancelled', now, undefined, undefined, actor);
    this.events.push({ type: 'instance.finished', instanceId, status: 'CANCELLED' });
  }

  /**
   * Starts the next compensation, or ends the instance when none is left. Waits while a node
   * still runs (its completion calls back here).
   */
  continueCompensation(instanceId: number, now: number): void {
    const inst = this.repo.instance.get(instanceId);
    if (!inst || inst.status !== 'COMPENSATING') return;
    const open = this.repo.openNodes.all(instanceId);
    if (open.some((n) => n.status === 'RUNNING')) return;
    const wf = this.workflowById(inst.workflow_id);
    const next = this.repo.compensable.all(instanceId).find((n) => wf.nodes.get(n.node_id)?.compensate !== undefined);
    if (next) {
      this.repo.setNodeStatus.run('COMPENSATING', instanceId, next.node_id);
      this.repo.insertSchedule.run(instanceId, next.node_id, 'compensate', now, 0, now);
      this.events.push({ type: 'node.changed', instanceId, nodeId: next.node_id, status: 'COMPENSATING' });
      return;
    }
    const end = inst.end_status ?? 'FAILED';
    this.repo.endInstance.run(end, null, now, now, instanceId);
    this.repo.deleteInstanceSchedule.run(instanceId);
    this.history(instanceId, null, end === 'FAILED' ? 'instance.failed' : 'instance.cancelled', now);
    this.events.push({ type: 'instance.finished', instanceId, status: end });
  }

  /** A compensation succeeded: the node is COMPENSATED; the chain goes on. */
  compensated(instanceId: number, nodeId: string, result: unknown, attempt: number, now: number): void {
    this.repo.setNodeStatus.run('COMPENSATED', instanceId, nodeId);
    this.history(instanceId, nodeId, 'compensation.completed', now, result === undefined ? undefined : { result }, attempt);
    this.events.push({ type: 'node.changed', instanceId, nodeId, status: 'COMPENSATED' });
    this.continueCompensation(instanceId, now);
  }

  /**
   * A compensation attempt failed: retried by its policy, else the chain stops there and the
   * instance is SUSPENDED (DESIGN.md "Rules pinned"); resuming continues the chain.
   */
  compensationFailed(instanceId: number, nodeId: string, error: SerializedError, attempt: number, retryAt: number | null, now: number): void {
    if (retryAt !== null) {
      this.repo.insertSchedule.run(instanceId, nodeId, 'compensate', retryAt, attempt, now);
      this.history(instanceId, nodeId, 'compensation.failed', now, { error, willRetry: true, nextAttemptAt: retryAt }, attempt);
      return;
    }
    this.repo.waitNode.run('COMPENSATING', JSON.stringify({ kind: 'compensation' }), JSON.stringify(error), instanceId, nodeId);
    this.history(instanceId, nodeId, 'compensation.failed', now, { error, willRetry: false }, attempt);
    this.repo.deadLetter.run(instanceId, nodeId, 'compensation', attempt, JSON.stringify(error), now);
    this.suspend(instanceId, { kind: 'compensation', nodeId, error, attempts: attempt, at: now }, now);
  }

  /** Parks a node WAITING (timer or approval) with its schedule row. */
  waitNode(inst: InstanceHead, nodeId: string, wait: { kind: 'timer'; until: number; output?: unknown } | { kind: 'approval'; prompt?: string; timeoutAt?: number }, attempt: number, now: number): void {
    this.repo.waitNode.run('WAITING', JSON.stringify(wait), null, inst.id, nodeId);
    if (wait.kind === 'timer') {
      this.repo.insertSchedule.run(inst.id, nodeId, 'timer', wait.until, 0, now);
      this.history(inst.id, nodeId, 'timer.started', now, { until: wait.until }, attempt);
    } else {
      if (wait.timeoutAt !== undefined) this.repo.insertSchedule.run(inst.id, nodeId, 'timeout', wait.timeoutAt, 0, now);
      this.history(inst.id, nodeId, 'approval.requested', now, { prompt: wait.prompt, timeoutAt: wait.timeoutAt }, attempt);
      this.events.push({ type: 'approval.requested', instanceId: inst.id, nodeId, ...(wait.prompt === undefined ? {} : { prompt: wait.prompt }) });
    }
    this.events.push({ type: 'node.changed', instanceId: inst.id, nodeId, status: 'WAITING', attempt });
    this.settle(inst.id, now, inst);
  }

  /**
   * Recomputes a live instance's status from its node states: COMPLETED when no node is open,
   * else RUNNING while a node is ready or running, else WAITING. SUSPENDED and COMPENSATING are
   * left alone (they end by resume or by the compensation chain).
   *
   * `current` is the instance row when the caller read it in this transaction and its status
   * has not changed since (only the status is read): every transition settles, and reading the
   * row again was one of its most frequent statements (bench/profile.ts).
   */
  settle(instanceId: number, now: number, current?: InstanceHead): void {
    const inst = current ?? this.repo.instance.get(instanceId);
    if (!inst || TERMINAL_STATUSES.has(inst.status) || inst.status === 'COMPENSATING' || inst.status === 'SUSPENDED') return;
    const counts = this.repo.openCounts.get(instanceId);
    const open = counts?.open ?? 0;
    const active = counts?.active ?? 0;
    if (open === 0) {
      this.repo.endInstance.run('COMPLETED', null, now, now, instanceId);
      this.repo.deleteInstanceSchedule.run(instanceId);
      this.history(instanceId, null, 'instance.completed', now);
      this.events.push({ type: 'instance.finished', instanceId, status: 'COMPLETED' });
      return;
    }
    const status = active > 0 ? 'RUNNING' : 'WAITING';
    if (status !== inst.status) {
      this.repo.setInstanceStatus.run(status, now, instanceId);
      this.events.push({ type: 'instance.changed', instanceId, status });
    }
  }
}
