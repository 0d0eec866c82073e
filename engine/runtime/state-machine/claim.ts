/**
 * Claim transitions: take due schedule rows under a lease and start their attempts, turn the
 * nodes eager dispatch started into claims (or take them back), fire passed deadlines, and keep
 * leases alive.
 */
import { EngineError } from '../../errors';
import { isTerminal, startsNothing } from '../../vocabulary';
import type { CompiledWorkflow } from '../compiled';
import type { InstanceHead, NodeWait, Pins, ScheduleRow, StepResults } from '../../store/queries';
import { testMark, type Dispatch, type Tx } from './tx';
import { failOnDeadline, pastDeadline } from './instance';
import { continueCompensation } from './compensation';

/** How long a row this process cannot run waits before it is looked at again, ms. */
export const UNRUNNABLE_RETRY_MS = 5000;

/** How long a row whose instance or node state is damaged (DATABASE_CORRUPT) waits before it is looked at again, ms. */
export const DAMAGED_RETRY_MS = 60_000;

/** A claimed step: its leased row and what its execution needs, read in the claiming transaction. */
export interface ClaimedStep {
  /** The schedule row as leased (its version after the claim). */
  row: ScheduleRow;
  workflowId: number;
  nodeId: string;
  /** The attempt this run is (1-based), and the node's limit. */
  attempt: number;
  attemptLimit: number;
  /** Attempts were used up by lost leases: the step fails without running. */
  exhausted: boolean;
  /** When the claim was made, epoch ms. */
  startedAt: number;
  /** When the step became due, epoch ms: its row's due time before the claim (a start at once: `startedAt`). */
  dueAt: number;
  /**
   * Its instance is a test run: the events of its outcome say so, and the metrics leave its
   * attempt out (read with the instance row the claim reads anyway).
   */
  test: boolean;
  /** The instance's global variables. */
  variables: Record<string, unknown>;
  /** `$steps`, when the workflow reads it, the node follows an error edge, or it is a compensation; else `{}`. */
  steps: StepResults;
  /** For a node reached by an error edge: its source's failure (`$error`). */
  error: unknown;
  /** A timer's wait (its due time and the output it completes with). */
  wait?: NodeWait | null;
  /** A compensation's node result, as it completed. */
  ownResult?: unknown;
  /**
   * The node's pinned result in a test run (`instance:start` with `pins`): the attempt completes
   * with it and the handler does not run; a compensation of a pinned node does nothing.
   */
  pin?: { result: unknown };
}

/** `{ pin }` of `nodeId` when `pins` (a test run's) has one, else nothing: spread into a {@link ClaimedStep}. */
function pinOf(pins: Pins | null, nodeId: string): { pin?: { result: unknown } } {
  return pins !== null && Object.hasOwn(pins, nodeId) ? { pin: { result: pins[nodeId] } } : {};
}

/**
 * Whether a WAITING node's wait is over, so its `wake` row is work: its event came, or its
 * children all ended (or more failed than tolerated). A row left from an earlier attempt's wait is not.
 */
function wakeIsDue(w: NodeWait | null): boolean {
  if (w?.kind === 'event') return w.received !== undefined;
  if (w?.kind === 'children') return w.failing === true || w.completed + w.failed === w.total;
  return false;
}

/** Options of {@link claimDue}. */
export interface ClaimOptions {
  owner: string;
  leaseMs: number;
  limit: number;
  /** Says (once per version) that this process cannot run a workflow version; its rows are left to another worker. */
  onUnrunnable(workflowId: number, err: unknown): void;
  /**
   * Claim each row in a savepoint of its own: a row whose stored data is damaged (DATABASE_CORRUPT)
   * is put back for {@link DAMAGED_RETRY_MS} and reported, and the others are claimed. Off, such a
   * row throws (the caller runs the turn again isolated).
   */
  isolated: boolean;
  /** Reports a row put back because its stored data is damaged. */
  onDamaged(row: ScheduleRow, err: EngineError): void;
  /**
   * Which due rows: every kind by priority (the default), or only those that run no handler
   * taking time (`instant`: timers, wait timeouts, wakes, ready nodes of instant types), which a
   * turn takes whatever its free slots.
   */
  rows?: 'due' | 'instant';
}

/** Whether `err` is a damaged row's (a stored JSON text that does not parse, …). */
export function isDamagedRow(err: unknown): err is EngineError {
  return err instanceof EngineError && err.code === 'DATABASE_CORRUPT';
}

/** What a step that reads neither `$steps` nor `$error` gets (shared: nothing writes to it). */
const NO_STEP_INPUTS: { steps: StepResults; error: unknown } = Object.freeze({ steps: Object.freeze({}) as StepResults, error: undefined });

/**
 * What a claimed row's execution needs besides the row: `$steps` when the workflow reads it, the
 * node follows an error edge or it is a compensation, and then `$error` for a node reached by an
 * error edge (its source's failure, as the edge's `when` saw it).
 */
function stepInputs(tx: Tx, wf: CompiledWorkflow, row: ScheduleRow): { steps: StepResults; error: unknown } {
  const node = wf.nodes.get(row.nodeId ?? '');
  const afterError = node?.incoming.some((e) => e.on === 'error') === true;
  if (!wf.usesSteps && !afterError && row.kind !== 'compensate') return NO_STEP_INPUTS;
  const steps = tx.q.nodes.results(row.instanceId);
  let error: unknown;
  if (afterError && node) {
    for (const e of node.incoming) {
      const s = (Object.hasOwn(steps, e.from) ? steps[e.from] : undefined) as { error?: unknown } | null | undefined;
      if (e.on === 'error' && s && typeof s === 'object' && 'error' in s) {
        error = s.error;
        break;
      }
    }
  }
  return { steps, error };
}

/**
 * A node's attempt started in an instance: wakes a PENDING/WAITING instance (RUNNING) and notes
 * its first start; `attempt` undefined: no attempt runs (exhausted), so no RUNNING event.
 */
function noteStart(
  tx: Tx,
  inst: { id: number; status: string; startedAt: number | null; test: boolean },
  nodeId: string,
  attempt: number | undefined,
): void {
  const wakes = inst.status === 'PENDING' || inst.status === 'WAITING';
  // A node starting in an instance already RUNNING changes nothing on the instance row:
  // rewriting it (and its version) on every claim was a row write per transition.
  if (wakes || inst.startedAt === null)
    tx.q.instances.touch({
      id: inst.id,
      status: wakes ? 'RUNNING' : (inst.status as 'RUNNING'),
      now: tx.now,
    });
  if (wakes) tx.events.push({ type: 'instance.changed', instanceId: inst.id, status: 'RUNNING', ...testMark(inst) });
  if (attempt !== undefined)
    tx.events.push({ type: 'node.changed', instanceId: inst.id, nodeId, status: 'RUNNING', attempt, ...testMark(inst) });
}

/**
 * Claims up to `limit` due schedule rows for `owner` (a lease of `leaseMs`) and starts their
 * attempts. A row another worker took first is passed over; a row of an ended instance, or of a
 * node no longer waiting for it, is dropped; a row of a paused instance is parked until the
 * unpause; a deadline row fails its instance. An attempt lost
 * with its worker (an expired lease) counts (DESIGN.md "an attempt counts when it starts"),
 * except for instant types, which run again under the same number.
 */
export function claimDue(tx: Tx, o: ClaimOptions): ClaimedStep[] {
  const { q, now } = tx;
  const out: ClaimedStep[] = [];
  const rows = o.rows === 'instant' ? q.schedule.dueInstant({ now, limit: o.limit }) : q.schedule.due({ now, limit: o.limit });
  for (const row of rows) {
    if (!o.isolated) {
      claimRow(tx, o, row, out);
      continue;
    }
    const events = tx.events.length;
    const aborts = tx.aborts.length;
    try {
      q.savepoint(() => claimRow(tx, o, row, out));
    } catch (err) {
      if (!isDamagedRow(err)) throw err;
      tx.events.length = events;
      tx.aborts.length = aborts;
      q.schedule.defer({ id: row.id, owner: row.leaseOwner, at: now + DAMAGED_RETRY_MS });
      o.onDamaged(row, err);
    }
  }
  return out;
}

/** Claims one due row (see {@link claimDue}); a claimed step is pushed onto `out`. */
function claimRow(tx: Tx, o: ClaimOptions, row: ScheduleRow, out: ClaimedStep[]): void {
  const { q, now } = tx;
  const lease = now + o.leaseMs;
  const recovered = row.leaseOwner !== null;
  if (!q.schedule.lease({ id: row.id, version: row.version, owner: o.owner, until: lease })) return;
  const leased: ScheduleRow = { ...row, version: row.version + 1, leaseOwner: o.owner, nextRunAt: lease };
  let inst = q.instances.get(row.instanceId);
  if (inst && row.kind !== 'deadline' && pastDeadline(tx, inst)) {
    failOnDeadline(tx, inst);
    inst = q.instances.get(row.instanceId);
  }
  if (!inst || isTerminal(inst.status)) {
    q.schedule.delete(row.id);
    return;
  }
  if (inst.pausedAt !== null) {
    // Paused: the row waits, with the time it had left, until the unpause.
    q.schedule.park({ id: row.id, owner: row.leaseOwner, remainingMs: Math.max(0, row.nextRunAt - now) });
    return;
  }
  let wf: CompiledWorkflow;
  try {
    wf = tx.workflow(inst.workflowId);
  } catch (err) {
    // This process cannot run the workflow (a custom node type registered only by another
    // process): leave the row to a worker that can, and keep working everything else.
    q.schedule.defer({ id: row.id, owner: row.leaseOwner, at: now + UNRUNNABLE_RETRY_MS });
    o.onUnrunnable(inst.workflowId, err);
    return;
  }
  if (row.kind === 'deadline') {
    q.schedule.delete(row.id);
    failOnDeadline(tx, inst);
    return;
  }
  const nodeId = row.nodeId ?? '';
  // The usual case in one statement: a fresh claim of a READY/RETRYING node with attempts left.
  const started =
    row.kind === 'run' && !recovered && inst.status !== 'COMPENSATING'
      ? q.nodes.startReadyAttempt({ instanceId: inst.id, nodeId, now })
      : undefined;
  if (started) {
    noteStart(tx, inst, nodeId, started.attempt);
    const inputs = stepInputs(tx, wf, leased);
    out.push({
      row: leased,
      workflowId: wf.id,
      nodeId,
      attempt: started.attempt,
      attemptLimit: started.attemptLimit,
      exhausted: false,
      startedAt: now,
      dueAt: row.nextRunAt,
      test: inst.test,
      variables: inst.variables,
      steps: inputs.steps,
      error: inputs.error,
      ...pinOf(inst.pins, nodeId),
    });
    return;
  }
  const state = q.nodes.get(inst.id, nodeId);
  if (!state) {
    q.schedule.delete(row.id);
    return;
  }
  if (inst.status === 'COMPENSATING' && row.kind !== 'compensate') {
    // The instance is failing: nothing new starts.
    q.schedule.delete(row.id);
    if (state.status !== 'COMPLETED' && state.status !== 'FAILED')
      q.nodes.setStatus({ instanceId: inst.id, nodeId, status: 'CANCELLED' });
    continueCompensation(tx, inst.id);
    return;
  }
  const expected =
    row.kind === 'run'
      ? ['READY', 'RETRYING', 'RUNNING']
      : row.kind === 'compensate'
        ? ['COMPENSATING']
        : ['WAITING'];
  if (!expected.includes(state.status) || (row.kind === 'wake' && !wakeIsDue(state.wait))) {
    q.schedule.delete(row.id);
    return;
  }
  let attempt: number;
  let exhausted = false;
  if (row.kind === 'run') {
    // An instant type's attempt lost with its worker had no effect outside the engine: it is
    // run again under the same attempt number instead of using one up.
    const uncounted =
      recovered &&
      state.status === 'RUNNING' &&
      state.attempt > 0 &&
      wf.nodes.get(nodeId)?.type.instant === true;
    attempt = uncounted ? state.attempt : state.attempt + 1;
    exhausted = attempt > state.attemptLimit;
    if (exhausted) attempt = state.attempt;
    else if (!uncounted) q.nodes.startAttempt({ instanceId: inst.id, nodeId, now });
    if (recovered) {
      q.history.append({
        instanceId: inst.id,
        nodeId,
        type: 'node.recovered',
        at: now,
        attempt,
        data: {
          reason: 'recovered after a lost lease',
          attemptsLeft: Math.max(0, state.attemptLimit - state.attempt),
          counted: !uncounted,
        },
      });
    }
    noteStart(tx, inst, nodeId, exhausted ? undefined : attempt);
  } else if (row.kind === 'compensate') {
    attempt = row.retryCount + 1;
    if (recovered)
      q.history.append({
        instanceId: inst.id,
        nodeId,
        type: 'compensation.recovered',
        at: now,
        attempt,
        data: { reason: 'recovered after a lost lease' },
      });
  } else {
    attempt = state.attempt;
    if (row.kind === 'timer' && !recovered) {
      q.history.append({
        instanceId: inst.id,
        nodeId,
        type: 'timer.fired',
        at: now,
        attempt,
        data: { dueAt: row.nextRunAt, lateMs: Math.max(0, now - row.nextRunAt) },
      });
    }
  }
  const inputs = stepInputs(tx, wf, leased);
  out.push({
    row: leased,
    workflowId: wf.id,
    nodeId,
    attempt,
    attemptLimit: state.attemptLimit,
    exhausted,
    startedAt: now,
    dueAt: row.nextRunAt,
    test: inst.test,
    variables: inst.variables,
    steps: inputs.steps,
    error: inputs.error,
    wait: state.wait,
    ownResult: state.output,
    ...pinOf(inst.pins, nodeId),
  });
}

/**
 * Turns the nodes eager dispatch started in this transaction into claims (after every other
 * change of the transaction). One whose instance began failing later in the same transaction is
 * taken back: it never ran, and "no new node starts" once an instance fails (DESIGN.md).
 */
export function takeDispatched(tx: Tx, d: Dispatch): ClaimedStep[] {
  const { q, now } = tx;
  const out: ClaimedStep[] = [];
  for (const e of d.claims) {
    const inst = q.instances.variables(e.instanceId);
    if (!inst || startsNothing(inst.status)) {
      q.schedule.delete(e.scheduleId);
      q.nodes.unstart({ instanceId: e.instanceId, nodeId: e.nodeId, status: 'CANCELLED' });
      tx.events.push({
        type: 'node.changed',
        instanceId: e.instanceId,
        nodeId: e.nodeId,
        status: 'CANCELLED',
        ...(inst === undefined ? undefined : testMark(inst)),
      });
      continueCompensation(tx, e.instanceId);
      continue;
    }
    if (inst.pausedAt !== null) {
      // A paused instance starts no node: it is READY again, its row parked until the unpause.
      q.nodes.unstart({ instanceId: e.instanceId, nodeId: e.nodeId, status: 'READY' });
      q.schedule.park({ id: e.scheduleId, owner: null, remainingMs: 0 });
      tx.events.push({ type: 'node.changed', instanceId: e.instanceId, nodeId: e.nodeId, status: 'READY', ...testMark(inst) });
      continue;
    }
    const row: ScheduleRow = {
      id: e.scheduleId,
      instanceId: e.instanceId,
      nodeId: e.nodeId,
      kind: 'run',
      nextRunAt: d.leaseUntil,
      retryCount: 0,
      leaseOwner: d.owner,
      version: e.version,
    };
    const inputs = stepInputs(tx, tx.workflow(e.workflowId), row);
    out.push({
      row,
      workflowId: e.workflowId,
      nodeId: e.nodeId,
      attempt: e.attempt,
      attemptLimit: e.attemptLimit,
      exhausted: false,
      startedAt: now,
      dueAt: now,
      test: inst.test,
      variables: inst.variables,
      steps: inputs.steps,
      error: inputs.error,
      ...pinOf(inst.pins, e.nodeId),
    });
  }
  return out;
}

/** Fails the live instances of up to `limit` passed deadlines (each row taken unless another worker did). */
export function fireDeadlines(tx: Tx, limit: number): void {
  for (const row of tx.q.schedule.dueDeadlines({ now: tx.now, limit })) {
    if (!tx.q.schedule.take({ id: row.id, version: row.version })) continue;
    const inst: InstanceHead | undefined = tx.q.instances.head(row.instanceId);
    if (!inst || isTerminal(inst.status)) continue;
    failOnDeadline(tx, inst);
  }
}

/** Extends this worker's leases of running steps to `tx.now + leaseMs`; returns the rows whose lease was lost. */
export function extendLeases(
  tx: Tx,
  owner: string,
  leaseMs: number,
  rows: readonly { id: number; version: number }[],
): number[] {
  const lost: number[] = [];
  for (const r of rows) {
    if (!tx.q.schedule.extendLease({ id: r.id, version: r.version, owner, until: tx.now + leaseMs }))
      lost.push(r.id);
  }
  return lost;
}

/**
 * The clock went back from `from` to `tx.now` (more than a second): rows already due stay due,
 * leases move back with the clock (or they would outlive their workers by the jump), and the
 * jump is recorded (C05).
 */
export function recordClockJump(tx: Tx, from: number): void {
  const { q, now } = tx;
  q.schedule.rebaseDue({ from, to: now });
  q.schedule.shiftLeases({ byMs: from - now, now });
  q.history.append({
    instanceId: null,
    nodeId: null,
    type: 'clock.jumped',
    at: now,
    data: { fromMs: from, toMs: now, direction: 'backwards' },
  });
  tx.events.push({ type: 'clock.jumped', fromMs: from, toMs: now });
}
