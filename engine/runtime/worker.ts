/**
 * The worker loop: claim due schedule rows, run their handlers with bounded concurrency, and
 * commit their outcomes (DESIGN.md section 2; STYLE.md habit 3).
 *
 * One loop turn is one write transaction that (1) commits every outcome finished since the last
 * turn, each in its own savepoint, (2) extends the leases of long handlers, and (3) claims new
 * due rows up to the free concurrency. Outcomes of many instances thus share one commit (group
 * commit), and claims ride along for free. Handlers and expressions (async) run between
 * transactions, never inside one.
 */
import { EngineError, serializeError, type SerializedError } from '../errors';
import { backoffDelayMs } from '../dsl/schema';
import { applyInput, applyOutput, evaluateWhen, renderTemplates, type ExpressionScope } from '../dsl/expressions';
import type { RunnelDb } from '../db/open-database';
import type { InstanceHead, NodeStateRow, RuntimeRepository, ScheduleRow } from '../db/repositories/runtime-repository';
import { TERMINAL_STATUSES } from '../vocabulary';
import type { NodeResult } from '../nodes/types';
import type { CompiledNode, CompiledWorkflow, CompiledEdge } from './compiled';
import type { Clock } from './clock';
import type { EventHub } from './events';
import type { Faults } from './faults';
import type { EagerDispatch, EdgeDecision, StateMachine } from './state-machine';

/** Tunables of the worker loop. */
export interface WorkerOptions {
  /** This worker's lease owner name; unique per process. */
  owner: string;
  /** Handlers running at once. Default 32. */
  concurrency: number;
  /** How long a claim is held before others may take it, ms. Default 30 000; heartbeats extend it. */
  leaseMs: number;
  /** Longest sleep between polls when nothing is due, ms. Default 50. */
  pollIntervalMs: number;
  /** Largest node result / variables document, bytes. Default 1 MiB. */
  maxResultBytes: number;
}

/** A claimed schedule row with what its execution needs. */
interface Claimed {
  row: ScheduleRow;
  wf: CompiledWorkflow;
  node: CompiledNode | undefined;
  state: NodeStateRow | undefined;
  variables: Record<string, unknown>;
  steps: Record<string, unknown>;
  /** For a node reached by an error edge: the failure of that edge's source (`$error`). */
  error: unknown;
  attempt: number;
  /** Attempts were used up by lost leases: fail without running. */
  exhausted: boolean;
  startedAt: number;
}

/** What an execution produced; committed in the next loop turn. */
type Outcome =
  | { kind: 'completed'; c: Claimed; output: unknown; patch: Record<string, unknown>; decisions: EdgeDecision[] }
  | { kind: 'failed'; c: Claimed; error: SerializedError; final: boolean; decisions: EdgeDecision[] }
  | { kind: 'wait'; c: Claimed; result: Extract<NodeResult, { wait: unknown }> }
  | { kind: 'compensated'; c: Claimed; result: unknown }
  | { kind: 'compensation_failed'; c: Claimed; error: SerializedError; final: boolean };

/** Shared engine parts the worker drives. */
export interface WorkerDeps {
  db: RunnelDb;
  repo: RuntimeRepository;
  sm: StateMachine;
  clock: Clock;
  events: EventHub;
  faults: Faults;
  workflowById(id: number): CompiledWorkflow;
}

/**
 * Results of an instance's nodes by id (`$steps`): a completed node's output; a FAILED node's
 * `{ error }`, so the handler behind an error edge can read what went wrong.
 */
export function readSteps(repo: RuntimeRepository, instanceId: number): Record<string, unknown> {
  const steps: Record<string, unknown> = {};
  for (const s of repo.completedOutputs.all(instanceId)) {
    if (s.status === 'FAILED') steps[s.node_id] = { error: s.error_json === null ? null : (JSON.parse(s.error_json) as unknown) };
    else steps[s.node_id] = s.output_json === null ? null : (JSON.parse(s.output_json) as unknown);
  }
  return steps;
}

/**
 * The node_state of an attempt just started, as the execution reads it (attempt, limit; no wait,
 * output or error), without reading the row back.
 */
function runningState(instanceId: number, nodeId: string, attempt: number, attemptLimit: number, now: number): NodeStateRow {
  return {
    instance_id: instanceId,
    node_id: nodeId,
    status: 'RUNNING',
    attempt,
    attempt_limit: attemptLimit,
    pending_in: 0,
    taken_in: 0,
    version: 0,
    output_json: null,
    error_json: null,
    wait_json: null,
    completed_seq: null,
    started_at: now,
  };
}

/** Thrown out of a turn whose outcomes committed without savepoints when one of them failed. */
class IsolateOutcomes extends Error {
  constructor(readonly original: unknown) {
    super('an outcome failed to commit; the turn runs again with a savepoint per outcome');
  }
}

/** Passed deadlines a loop turn fails at most (more wait for the next turn). */
const DEADLINES_PER_TURN = 64;

/** The signal an instant type's handler gets: it never aborts (the handler settles at once). */
const NEVER_ABORTED: AbortSignal = new AbortController().signal;

/** How long a row this process cannot run waits before it is looked at again, ms. */
export const UNRUNNABLE_RETRY_MS = 5000;

/** JSON size in bytes (UTF-8). */
export function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value ?? null), 'utf8');
}

/** Evaluates the `when` of `edges` against a scope; returns a decision per edge. */
export async function decideEdges(edges: readonly CompiledEdge[], scope: ExpressionScope): Promise<EdgeDecision[]> {
  const out: EdgeDecision[] = [];
  for (const e of edges) {
    if (e.when === undefined) {
      out.push({ edgeId: e.id, to: e.to, taken: true });
      continue;
    }
    const r = await evaluateWhen(e.when, scope);
    const d: EdgeDecision = { edgeId: e.id, to: e.to, taken: r.taken };
    if (r.reason !== undefined && r.reason !== 'condition is false') d.reason = r.reason;
    out.push(d);
  }
  return out;
}

/**
 * The worker loop of one process. `start()` runs it in the background; `tick()` runs one turn
 * (tests and `runUntil` drive it directly).
 */
export class Worker {
  /** Instances failed by a deadline in the turn under way: their handlers are aborted after its commit. */
  private turnAborts: number[] = [];
  /** Claims committed (or being committed) in this process and not launched yet; they hold slots. */
  private reserved = 0;
  /** Running executions by schedule row id; `controller` is undefined for instant types (nothing to abort). */
  private readonly inflight = new Map<number, { c: Claimed; controller: AbortController | undefined; beatAt: number }>();
  private outcomes: Outcome[] = [];
  private running = false;
  private loopPromise: Promise<void> | undefined;
  private wakeResolve: (() => void) | undefined;
  private lastNow: number;
  private claiming = true;
  /** Stops under way: claiming resumes only when the last one ends. */
  private stopping = 0;

  /** Commits one outcome in its own savepoint (prepared once: better-sqlite3 builds a wrapper per call of `transaction`). */
  private readonly commitInSavepoint: (o: Outcome, now: number) => void;

  constructor(
    private readonly deps: WorkerDeps,
    private readonly opts: WorkerOptions,
  ) {
    this.lastNow = deps.clock.now();
    this.commitInSavepoint = deps.db.raw.transaction((o: Outcome, now: number) => this.commit(o, now));
  }

  /** Handlers now running in this process. */
  get inflightCount(): number {
    return this.inflight.size;
  }

  /** Whether outcomes wait to be committed, or claims committed here wait to be launched. */
  get hasPendingOutcomes(): boolean {
    return this.outcomes.length > 0 || this.reserved > 0;
  }

  /** Wakes the loop at once (new work was scheduled in this process). */
  wake(): void {
    const w = this.wakeResolve;
    this.wakeResolve = undefined;
    w?.();
  }

  /** Starts the loop in the background. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.claiming = true;
    this.loopPromise = this.loop();
  }

  /**
   * Stops claiming, lets running handlers finish (up to `graceMs`), commits their outcomes, and
   * releases the leases of any still running so another worker can take them at once.
   */
  async stop(graceMs = 10_000): Promise<void> {
    this.stopping++;
    this.claiming = false;
    const deadline = Date.now() + graceMs;
    // Claims committed but not launched yet (a start dispatched at once) are waited for too.
    while ((this.inflight.size > 0 || this.reserved > 0) && Date.now() < deadline) {
      await this.tick();
      if (this.inflight.size > 0 || this.reserved > 0) await this.sleep(20);
    }
    await this.tick();
    this.running = false;
    this.wake();
    await this.loopPromise;
    if (this.inflight.size > 0) {
      for (const f of this.inflight.values()) f.controller?.abort(new EngineError('CANCELLED', 'worker stopping'));
      const now = this.deps.clock.now();
      await this.deps.db.write(() => this.deps.repo.releaseLeases.run(now, this.opts.owner));
    }
    // Claiming stops only for the stop itself: turns driven by hand afterwards (`tick()`) must
    // claim again, or they would silently run nothing.
    if (--this.stopping === 0) this.claiming = true;
  }

  private readonly unrunnable = new Set<number>();

  /** Says once per workflow version that this process cannot run it (and why). */
  private warnUnrunnable(workflowId: number, err: unknown): void {
    if (this.unrunnable.has(workflowId)) return;
    this.unrunnable.add(workflowId);
    const message = err instanceof Error ? err.message : String(err);
    console.error(`runnel worker: cannot run workflow version ${workflowId} here (${message}); its steps are left to a worker that can`);
  }

  /**
   * Runs `fn` inside a caller's write transaction with eager dispatch offered (while the loop
   * runs and slots are free): nodes `fn` makes ready start at once, leased to this worker (an
   * instance's entry nodes as it is created). Returns `fn`'s result, `launch` (call it once the
   * transaction committed: it runs what was dispatched) and `abandon` (call it when the
   * transaction failed: it frees the slots the dispatch held). The clock for the leases is read
   * here, inside the transaction, after any wait for the write lock.
   */
  withEager<T>(fn: () => T): { result: T; launch: () => void; abandon: () => void } {
    const { sm } = this.deps;
    const slots = this.running && this.claiming ? this.freeSlots() : 0;
    if (slots <= 0) return { result: fn(), launch: () => undefined, abandon: () => undefined };
    // Read inside the caller's transaction, after any wait for the write lock.
    const now = this.deps.clock.now();
    const eager: EagerDispatch = { owner: this.opts.owner, leaseUntil: now + this.opts.leaseMs, slots, claims: [] };
    sm.eager = eager;
    let result: T;
    try {
      result = fn();
    } finally {
      sm.eager = undefined;
    }
    const claimed = this.takeEager(eager, now);
    // Their slots are held from now on: concurrent starts committing before this one launches
    // must not count them free.
    this.reserved += claimed.length;
    let settled = false;
    return {
      result,
      launch: () => {
        if (settled) return;
        settled = true;
        for (const c of claimed) this.launch(c);
      },
      abandon: () => {
        if (settled) return;
        settled = true;
        this.reserved -= claimed.length;
      },
    };
  }

  /** Aborts running handlers of an instance (cancel, deadline) in this process. */
  abortInstance(instanceId: number, reason: EngineError): void {
    for (const f of this.inflight.values()) if (f.c.row.instance_id === instanceId) f.controller?.abort(reason);
  }

  private async loop(): Promise<void> {
    while (this.running) {
      let worked = 0;
      try {
        worked = await this.tick();
      } catch (err) {
        // Never crash the worker: a failed turn leaves claims leased, which expire and are retried.
        console.error('runnel worker: loop turn failed', err);
        await this.sleep(this.opts.pollIntervalMs);
      }
      if (!this.running) break;
      if (worked > 0 || this.outcomes.length > 0) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        continue;
      }
      await this.sleep(this.nextSleepMs());
    }
  }

  private nextSleepMs(): number {
    const next = this.deps.repo.nextDue.get()?.at;
    if (next === null || next === undefined) return this.opts.pollIntervalMs;
    return Math.max(1, Math.min(this.opts.pollIntervalMs, next - this.deps.clock.now()));
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        this.wakeResolve = undefined;
        resolve();
      }, ms);
      this.wakeResolve = () => {
        clearTimeout(t);
        resolve();
      };
    });
  }

  /**
   * One loop turn: commit finished outcomes, heartbeat, claim. Returns the number of outcomes
   * committed plus rows claimed.
   */
  async tick(): Promise<number> {
    const { db, sm, clock, events } = this.deps;
    const before = clock.now();
    const jumped = this.checkClock(before);
    const outcomes = this.outcomes;
    this.outcomes = [];
    // After a clock jump every running handler beats: its last beat may lie in the new "future",
    // and a lease left to expire would let this or another worker run the step a second time.
    const beats = [...this.inflight.entries()].filter(([, f]) => jumped !== undefined || before - f.beatAt >= this.opts.leaseMs / 3);
    let claimed: Claimed[] = [];
    let emitted: typeof sm.events = [];
    let aborts: number[] = [];
    let reserved = 0;
    // Outcomes commit without a savepoint each (a savepoint per outcome was ~10% of a
    // transition); when one throws, the whole turn rolls back and runs again with savepoints, so
    // a bad outcome is isolated and the others still commit.
    const turn = (isolated: boolean) => () => {
      // Read inside the transaction: a turn that waited for the write lock must not date its
      // commits and leases from before the wait (a lease already expired would let another
      // worker run the same step).
      const now = Math.max(before, clock.now());
      sm.events = [];
      // Free slots, counted inside the transaction: claims committed but not launched yet (a
      // start dispatched at once by the API) hold theirs.
      const capacity = this.claiming ? this.freeSlots() : 0;
      if (jumped) this.recordJump(jumped.from, now);
      const abortsOfTurn: number[] = [];
      this.turnAborts = abortsOfTurn;
      // Passed deadlines first, whatever the slots: they run no handler, and the outcomes and
      // starts of this turn then see their instances failing.
      if (this.claiming) for (const d of this.deps.repo.dueDeadlines.all(now, DEADLINES_PER_TURN)) this.fireDeadline(d, now);
      // Nodes the outcomes make ready start at once while slots are free (eager dispatch): no
      // READY row to claim in a later statement, no second read of the node. While rows are due
      // (new instances, timers, retries), up to a quarter of the slots (at least one) is kept for
      // them, so running chains cannot starve them; chains keep the rest, which keeps an
      // instance's steps in this process (measured against a backlog: 1/4 beat 1/2 and 1/8).
      let eagerSlots = 0;
      if (capacity > 0 && outcomes.length > 0) {
        const waiting = this.deps.repo.dueCount.get(now, capacity)?.n ?? 0;
        eagerSlots = capacity - Math.min(waiting, Math.ceil(capacity / 4));
      }
      const eager: EagerDispatch | undefined = eagerSlots > 0 ? { owner: this.opts.owner, leaseUntil: now + this.opts.leaseMs, slots: eagerSlots, claims: [] } : undefined;
      sm.eager = eager;
      try {
        if (isolated) for (const o of outcomes) this.commitSafely(o, now);
        else {
          for (const o of outcomes) {
            try {
              this.commit(o, now);
            } catch (err) {
              throw new IsolateOutcomes(err);
            }
          }
        }
      } finally {
        sm.eager = undefined;
      }
      for (const [id, f] of beats) {
        const r = this.deps.repo.heartbeat.run(now + this.opts.leaseMs, now + this.opts.leaseMs, id, this.opts.owner, f.c.row.version);
        if (r.changes === 0) f.controller?.abort(new EngineError('LEASE_LOST', 'the lease was lost (cancelled or taken over)'));
        else f.beatAt = now;
      }
      // Due rows first (a passed deadline among them fails its instance), then the nodes started
      // at once: one whose instance a deadline just failed is taken back before it ever runs.
      const left = capacity - (eager?.claims.length ?? 0);
      const polled = left > 0 ? this.claim(left, now) : [];
      claimed = (eager ? this.takeEager(eager, now) : []).concat(polled);
      aborts = abortsOfTurn;
      emitted = sm.events;
      sm.events = [];
      reserved = claimed.length;
      this.reserved += reserved;
    };
    const write = async (isolated: boolean): Promise<void> => {
      try {
        await db.write(turn(isolated));
      } catch (err) {
        // The transaction rolled back (or never committed): its claims do not exist.
        this.reserved -= reserved;
        reserved = 0;
        throw err;
      }
    };
    try {
      await write(false);
    } catch (err) {
      if (!(err instanceof IsolateOutcomes)) throw err;
      await write(true);
    }
    try {
      events.emit(emitted);
      if (this.deps.faults.armed) {
        for (const o of outcomes) this.deps.faults.hit('committed', { instanceId: o.c.row.instance_id, nodeId: o.c.row.node_id, attempt: o.c.attempt });
      }
    } finally {
      // Committed claims are launched whatever a listener or a fault point threw: they hold slots.
      for (const c of claimed) this.launch(c);
      // Aborts of this turn (a deadline) reach handlers launched in it too.
      for (const id of aborts) this.abortInstance(id, new EngineError('DEADLINE_EXCEEDED', 'instance deadline passed'));
    }
    return outcomes.length + claimed.length;
  }

  /** Handler slots free: the concurrency less what runs and what was claimed but not launched yet. */
  private freeSlots(): number {
    return this.opts.concurrency - this.inflight.size - this.reserved;
  }

  private checkClock(now: number): { from: number } | undefined {
    const last = this.lastNow;
    this.lastNow = now;
    // Jumps of more than a second backwards are recorded; timers already due stay due.
    return now < last - 1000 ? { from: last } : undefined;
  }

  private recordJump(from: number, now: number): void {
    const { repo, sm } = this.deps;
    repo.rebaseDue.run(now, from);
    repo.shiftLeases.run(from - now, from - now, now);
    sm.history(null, null, 'clock.jumped', now, { fromMs: from, toMs: now, direction: 'backwards' });
    sm.events.push({ type: 'clock.jumped', fromMs: from, toMs: now });
  }

  private commitSafely(o: Outcome, now: number): void {
    const { sm } = this.deps;
    const mark = sm.events.length;
    const eager = sm.eager;
    const claimsMark = eager?.claims.length ?? 0;
    const slotsMark = eager?.slots ?? 0;
    try {
      this.commitInSavepoint(o, now);
    } catch (err) {
      sm.events.length = mark;
      if (eager) {
        eager.claims.length = claimsMark;
        eager.slots = slotsMark;
      }
      // The claim stays leased; when it expires another turn retries the step (at least once).
      console.error(`runnel worker: cannot commit ${o.kind} of instance ${o.c.row.instance_id} node ${o.c.row.node_id ?? '-'}`, err);
    }
  }

  /** Takes a passed deadline row (unless another worker did) and fails its live instance. */
  private fireDeadline(row: ScheduleRow, now: number): void {
    const { repo } = this.deps;
    if (repo.takeRow.run(row.id, row.version).changes === 0) return;
    const inst = repo.instanceHead.get(row.instance_id);
    if (!inst || TERMINAL_STATUSES.has(inst.status)) return;
    this.failOnDeadline(inst.id, now);
  }

  /**
   * Whether an instance this turn touches is past its deadline and not failed yet. A turn fires at
   * most {@link DEADLINES_PER_TURN} deadline rows; an instance whose row waits for a later turn
   * is failed as soon as one of its steps is claimed or committed, so none of its nodes starts
   * after the deadline (many instances started together share one deadline).
   */
  private pastDeadline(inst: InstanceHead, now: number): boolean {
    return inst.deadline_at !== null && inst.deadline_at <= now && !TERMINAL_STATUSES.has(inst.status) && inst.status !== 'COMPENSATING';
  }

  /** Fails an instance whose deadline passed (its deadline row goes too); running handlers are aborted after the commit. */
  private failOnDeadline(instanceId: number, now: number): void {
    const err = new EngineError('DEADLINE_EXCEEDED', `instance ${instanceId} passed its deadline`, { retryable: false }).toJSON();
    this.deps.sm.failInstance(instanceId, err, 'FAILED', now);
    // Aborted after the commit, when this turn's claims of the instance are launched too.
    this.turnAborts.push(instanceId);
  }

  /** Claims up to `limit` due rows (inside the turn's transaction). */
  private claim(limit: number, now: number): Claimed[] {
    const { repo, sm } = this.deps;
    const out: Claimed[] = [];
    const rows = repo.dueRows.all(now, limit);
    for (const row of rows) {
      const recovered = row.lease_owner !== null;
      const lease = now + this.opts.leaseMs;
      if (repo.lease.run(this.opts.owner, lease, lease, row.id, row.version).changes === 0) continue;
      const leased: ScheduleRow = { ...row, version: row.version + 1, lease_owner: this.opts.owner, next_run_at: lease };
      let inst = repo.instance.get(row.instance_id);
      if (inst && row.kind !== 'deadline' && this.pastDeadline(inst, now)) {
        this.failOnDeadline(inst.id, now);
        inst = repo.instance.get(row.instance_id);
      }
      if (!inst || TERMINAL_STATUSES.has(inst.status)) {
        repo.deleteSchedule.run(row.id);
        continue;
      }
      let wf: CompiledWorkflow;
      try {
        wf = this.deps.workflowById(inst.workflow_id);
      } catch (err) {
        // This process cannot run the workflow (a custom node type registered only by another
        // process): leave the row to a worker that can, and keep working everything else.
        repo.deferClaim.run(row.lease_owner, now + UNRUNNABLE_RETRY_MS, row.id);
        this.warnUnrunnable(inst.workflow_id, err);
        continue;
      }
      if (row.kind === 'deadline') {
        repo.deleteSchedule.run(row.id);
        this.failOnDeadline(inst.id, now);
        continue;
      }
      const nodeId = row.node_id ?? '';
      // The usual case in one statement: a fresh claim of a READY/RETRYING node with attempts left.
      const started = row.kind === 'run' && !recovered && inst.status !== 'COMPENSATING' ? repo.startReadyAttempt.get(now, inst.id, nodeId) : undefined;
      if (started) {
        this.noteStart(inst, nodeId, started.attempt, now);
        const state = runningState(inst.id, nodeId, started.attempt, started.attempt_limit, now);
        out.push(this.claimed(leased, wf, inst.id, JSON.parse(inst.variables_json) as Record<string, unknown>, state, started.attempt, false, now));
        continue;
      }
      const state = repo.nodeState.get(inst.id, nodeId);
      if (!state) {
        repo.deleteSchedule.run(row.id);
        continue;
      }
      if (inst.status === 'COMPENSATING' && row.kind !== 'compensate') {
        // The instance is failing: nothing new starts.
        repo.deleteSchedule.run(row.id);
        if (state.status !== 'COMPLETED' && state.status !== 'FAILED') repo.setNodeStatus.run('CANCELLED', inst.id, nodeId);
        sm.continueCompensation(inst.id, now);
        continue;
      }
      const expected = row.kind === 'run' ? ['READY', 'RETRYING', 'RUNNING'] : row.kind === 'compensate' ? ['COMPENSATING'] : ['WAITING'];
      if (!expected.includes(state.status)) {
        repo.deleteSchedule.run(row.id);
        continue;
      }
      let attempt: number;
      let exhausted = false;
      if (row.kind === 'run') {
        // An instant type's attempt lost with its worker had no effect outside the engine: it is
        // run again under the same attempt number instead of using one up.
        const uncounted = recovered && state.status === 'RUNNING' && state.attempt > 0 && wf.nodes.get(nodeId)?.type.instant === true;
        attempt = uncounted ? state.attempt : state.attempt + 1;
        exhausted = attempt > state.attempt_limit;
        if (exhausted) attempt = state.attempt;
        else if (!uncounted) repo.startAttempt.run(now, inst.id, nodeId);
        if (recovered) {
          sm.history(inst.id, nodeId, 'node.recovered', now, { reason: 'recovered after a lost lease', attemptsLeft: Math.max(0, state.attempt_limit - state.attempt), counted: !uncounted }, attempt);
        }
        if (exhausted) this.noteStart(inst, nodeId, undefined, now);
        else this.noteStart(inst, nodeId, attempt, now);
      } else if (row.kind === 'compensate') {
        attempt = row.retry_count + 1;
        if (recovered) sm.history(inst.id, nodeId, 'compensation.recovered', now, { reason: 'recovered after a lost lease' }, attempt);
      } else {
        attempt = state.attempt;
        if (row.kind === 'timer' && !recovered) {
          sm.history(inst.id, nodeId, 'timer.fired', now, { dueAt: row.next_run_at, lateMs: Math.max(0, now - row.next_run_at) }, attempt);
        }
      }
      out.push(this.claimed(leased, wf, inst.id, JSON.parse(inst.variables_json) as Record<string, unknown>, state, attempt, exhausted, now));
    }
    return out;
  }

  /**
   * A node's attempt started in an instance: wakes a PENDING/WAITING instance (RUNNING) and notes
   * its start time; `attempt` undefined: no attempt runs (exhausted), so no RUNNING event.
   */
  private noteStart(inst: { id: number; status: string; started_at: number | null }, nodeId: string, attempt: number | undefined, now: number): void {
    const { repo, sm } = this.deps;
    const wakes = inst.status === 'PENDING' || inst.status === 'WAITING';
    // A node starting in an instance already RUNNING changes nothing on the instance row:
    // rewriting it (and its version) on every claim was a row write per transition.
    if (wakes || inst.started_at === null) repo.touchInstance.run(wakes ? 'RUNNING' : inst.status, now, now, inst.id);
    if (wakes) sm.events.push({ type: 'instance.changed', instanceId: inst.id, status: 'RUNNING' });
    if (attempt !== undefined) sm.events.push({ type: 'node.changed', instanceId: inst.id, nodeId, status: 'RUNNING', attempt });
  }

  /** What a claimed row's execution needs besides the row: `$steps` and `$error` when it reads them. */
  private claimed(row: ScheduleRow, wf: CompiledWorkflow, instanceId: number, variables: Record<string, unknown>, state: NodeStateRow, attempt: number, exhausted: boolean, now: number): Claimed {
    const node = wf.nodes.get(row.node_id ?? '');
    const afterError = node?.incoming.some((e) => e.on === 'error') === true;
    const steps: Record<string, unknown> = wf.usesSteps || afterError || row.kind === 'compensate' ? readSteps(this.deps.repo, instanceId) : {};
    // A node reached by an error edge sees its source's failure as `$error`, as the edge's `when` did.
    let error: unknown;
    if (afterError && node) {
      for (const e of node.incoming) {
        const s = steps[e.from] as { error?: unknown } | null | undefined;
        if (e.on === 'error' && s && typeof s === 'object' && 'error' in s) {
          error = s.error;
          break;
        }
      }
    }
    return { row, wf, node, state, variables, steps, error, attempt, exhausted, startedAt: now };
  }

  /**
   * Turns the nodes eager dispatch started during this turn's commits into claims (inside the
   * transaction, after every outcome). One whose instance began failing later in the same turn is
   * taken back: it never ran, and "no new node starts" once an instance fails (DESIGN.md).
   */
  private takeEager(eager: EagerDispatch, now: number): Claimed[] {
    const { repo, sm } = this.deps;
    const out: Claimed[] = [];
    for (const e of eager.claims) {
      const inst = repo.instanceVariables.get(e.instanceId);
      if (!inst || inst.status === 'COMPENSATING' || TERMINAL_STATUSES.has(inst.status)) {
        repo.deleteSchedule.run(e.scheduleId);
        repo.unstartNode.run(e.instanceId, e.nodeId);
        sm.events.push({ type: 'node.changed', instanceId: e.instanceId, nodeId: e.nodeId, status: 'CANCELLED' });
        sm.continueCompensation(e.instanceId, now);
        continue;
      }
      const row: ScheduleRow = {
        id: e.scheduleId,
        instance_id: e.instanceId,
        node_id: e.nodeId,
        kind: 'run',
        next_run_at: eager.leaseUntil,
        retry_count: 0,
        lease_owner: eager.owner,
        version: e.version,
      };
      const state = runningState(e.instanceId, e.nodeId, e.attempt, e.attemptLimit, now);
      out.push(this.claimed(row, e.wf, e.instanceId, JSON.parse(inst.variables_json) as Record<string, unknown>, state, e.attempt, false, now));
    }
    return out;
  }

  /** Starts a claim committed in this process; it held a reserved slot until now. */
  private launch(c: Claimed): void {
    this.reserved--;
    // An instant type's handler settles without waiting on anything (no I/O, no timer): there is
    // nothing to abort, and an AbortController per step was a measurable share of a transition.
    const instant = c.row.kind === 'run' && c.node?.type.instant === true && c.node.def.timeoutMs === undefined;
    const controller = instant ? undefined : new AbortController();
    this.inflight.set(c.row.id, { c, controller, beatAt: c.startedAt });
    // An exhausted claim runs no handler, so a crash "during the attempt" cannot happen there.
    if (this.deps.faults.armed && !c.exhausted) this.deps.faults.hit('claimed', { instanceId: c.row.instance_id, nodeId: c.row.node_id, attempt: c.attempt });
    void this.execute(c, controller).then((o) => {
      this.inflight.delete(c.row.id);
      if (this.deps.faults.armed) this.deps.faults.hit('handler-done', { instanceId: c.row.instance_id, nodeId: c.row.node_id, attempt: c.attempt });
      this.outcomes.push(o);
      this.wake();
    });
  }

  /** Runs one claimed row to an outcome. Never throws. */
  private async execute(c: Claimed, controller: AbortController | undefined): Promise<Outcome> {
    const node = c.node;
    if (!node) {
      const error = new EngineError('INTERNAL', `node "${c.row.node_id}" is not in workflow ${c.wf.name} v${c.wf.version}`).toJSON();
      return { kind: 'failed', c, error, final: true, decisions: [] };
    }
    const scope: ExpressionScope = { variables: c.variables, steps: c.steps, ...(c.error === undefined ? {} : { error: c.error }) };
    try {
      switch (c.row.kind) {
        case 'run': {
          if (c.exhausted) {
            const err = new EngineError('LEASE_LOST', `attempt ${c.attempt} of node "${node.id}" was lost with its worker and no attempts are left`, { retryable: false });
            return await this.failure(c, node, err, scope);
          }
          return await this.runHandler(c, node, scope, controller);
        }
        case 'timer': {
          const wait = JSON.parse(c.state?.wait_json ?? '{}') as { output?: unknown; until?: number };
          return await this.completion(c, node, wait.output ?? { firedAt: this.deps.clock.now(), until: wait.until }, scope);
        }
        case 'timeout': {
          const err = new EngineError('TIMEOUT', `node "${node.id}" timed out after ${node.def.timeoutMs ?? 0} ms waiting for a decision`);
          return await this.failure(c, node, err, scope);
        }
        case 'compensate':
          return await this.runCompensation(c, node, scope, controller);
        default:
          throw new EngineError('INTERNAL', `unknown schedule kind ${String(c.row.kind)}`);
      }
    } catch (err) {
      return this.failure(c, node, err, scope);
    }
  }

  private async runHandler(c: Claimed, node: CompiledNode, scope: ExpressionScope, controller: AbortController | undefined): Promise<Outcome> {
    const input = await applyInput(node.def.input, scope);
    const rawConfig = node.def.config ?? {};
    const rendered = node.type.templates === false ? rawConfig : await renderTemplates(rawConfig, scope);
    const parsed = node.type.configSchema.safeParse(rendered);
    if (!parsed.success) {
      const first = parsed.error.issues[0];
      const where = first ? `config.${first.path.join('.')}` : 'config';
      throw new EngineError('INVALID_INPUT', `node "${node.id}": ${where} ${first?.message ?? 'is invalid'} (after templates)`, {
        retryable: false,
        details: parsed.error.issues,
      });
    }
    const result = await this.withTimeout(node.def.timeoutMs, controller, (signal) =>
      node.type.execute({
        instanceId: c.row.instance_id,
        nodeId: node.id,
        type: node.def.type,
        attempt: c.attempt,
        idempotencyKey: `${c.row.instance_id}:${node.id}`,
        config: parsed.data,
        input,
        variables: Object.freeze({ ...c.variables }),
        steps: c.steps,
        signal,
        now: () => this.deps.clock.now(),
        log: (message, data) => this.log(c, message, data),
      }),
      // Approvals wait for a person: their timeoutMs bounds the wait, not the handler.
      node.def.type === 'approval',
    );
    if ('wait' in result) return { kind: 'wait', c, result };
    return this.completion(c, node, result.output, scope);
  }

  private async runCompensation(c: Claimed, node: CompiledNode, scope: ExpressionScope, controller: AbortController | undefined): Promise<Outcome> {
    const spec = node.def.compensate;
    const comp = node.compensate;
    if (!spec || !comp) return { kind: 'compensated', c, result: undefined };
    try {
      const result = c.state?.output_json ? (JSON.parse(c.state.output_json) as unknown) : null;
      const compScope: ExpressionScope = { ...scope, result };
      const input = spec.input === undefined ? { ...c.variables } : await applyInput(spec.input, compScope);
      const rawConfig = spec.config ?? {};
      const rendered = comp.type.templates === false ? rawConfig : await renderTemplates(rawConfig, compScope);
      const parsed = comp.type.configSchema.safeParse(rendered);
      if (!parsed.success) {
        throw new EngineError('INVALID_INPUT', `node "${node.id}": compensate.config is invalid: ${parsed.error.issues[0]?.message ?? ''}`, { retryable: false });
      }
      const r = await this.withTimeout(spec.timeoutMs, controller, (signal) =>
        comp.type.execute({
          instanceId: c.row.instance_id,
          nodeId: node.id,
          type: spec.type,
          attempt: c.attempt,
          idempotencyKey: `${c.row.instance_id}:${node.id}:compensate`,
          config: parsed.data,
          input,
          variables: Object.freeze({ ...c.variables }),
          steps: c.steps,
          signal,
          now: () => this.deps.clock.now(),
          result,
          log: (message, data) => this.log(c, message, data),
        }),
        false,
      );
      return { kind: 'compensated', c, result: 'output' in r ? r.output : undefined };
    } catch (err) {
      const error = serializeError(err);
      const final = error.retryable === false || c.attempt >= comp.retry.maxAttempts;
      return { kind: 'compensation_failed', c, error, final };
    }
  }

  private log(c: Claimed, message: string, data: unknown): void {
    // Logs are committed with the outcome's turn; kept small and best-effort.
    void this.deps.db
      .write(() => this.deps.sm.history(c.row.instance_id, c.row.node_id, 'node.log', this.deps.clock.now(), data === undefined ? { message } : { message, data }, c.attempt))
      .catch(() => undefined);
  }

  /** Runs `fn` with an AbortSignal cut at `timeoutMs` (a timed-out attempt is a failed attempt). */
  private async withTimeout<T>(timeoutMs: number | undefined, controller: AbortController | undefined, fn: (signal: AbortSignal) => Promise<T>, noTimer: boolean): Promise<T> {
    if (!controller) return fn(NEVER_ABORTED);
    let timer: NodeJS.Timeout | undefined;
    if (timeoutMs !== undefined && !noTimer) {
      timer = setTimeout(() => controller.abort(new EngineError('TIMEOUT', `attempt timed out after ${timeoutMs} ms`)), timeoutMs);
    }
    const aborted = new Promise<never>((_, reject) => {
      const onAbort = () => reject(controller.signal.reason instanceof Error ? controller.signal.reason : new EngineError('CANCELLED', 'aborted'));
      if (controller.signal.aborted) onAbort();
      else controller.signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      return await Promise.race([fn(controller.signal), aborted]);
    } finally {
      if (timer) clearTimeout(timer);
    }
  }

  private async completion(c: Claimed, node: CompiledNode, output: unknown, scope: ExpressionScope): Promise<Outcome> {
    const value = output === undefined ? null : output;
    const size = jsonBytes(value);
    if (size > this.opts.maxResultBytes) {
      throw new EngineError('RESULT_TOO_LARGE', `node "${node.id}": result is ${size} bytes, above the limit of ${this.opts.maxResultBytes} bytes`, { retryable: false });
    }
    const patch = await applyOutput(node.def.output, value, scope);
    const variables = { ...c.variables, ...patch };
    if (Object.keys(patch).length > 0) {
      const vsize = jsonBytes(variables);
      if (vsize > this.opts.maxResultBytes) {
        throw new EngineError('RESULT_TOO_LARGE', `node "${node.id}": variables would be ${vsize} bytes, above the limit of ${this.opts.maxResultBytes} bytes`, { retryable: false });
      }
    }
    const decisions = await decideEdges(node.outgoing, { variables, steps: { ...c.steps, [node.id]: value } });
    return { kind: 'completed', c, output: value, patch, decisions };
  }

  private async failure(c: Claimed, node: CompiledNode, err: unknown, scope: ExpressionScope): Promise<Outcome> {
    const error = serializeError(err);
    const limit = c.state?.attempt_limit ?? node.retry.maxAttempts;
    const final = error.retryable === false || c.attempt >= limit || c.row.kind === 'timeout' && c.attempt >= limit;
    let decisions: EdgeDecision[] = [];
    if (final && node.errorOut.length > 0) {
      try {
        decisions = await decideEdges(node.errorOut, { ...scope, error });
      } catch (e) {
        return { kind: 'failed', c, error: serializeError(e), final: true, decisions: [] };
      }
    }
    return { kind: 'failed', c, error, final, decisions };
  }

  /** Commits one outcome (inside the turn's transaction, in its own savepoint). */
  private commit(o: Outcome, now: number): void {
    const { repo, sm } = this.deps;
    const row = o.c.row;
    // Nothing when the lease was lost or cancelled. The claim's row is consumed at the end, unless
    // a node this outcome dispatches at once took it over (sm.spareRow).
    if (repo.holdsLease.get(row.id, this.opts.owner, row.version) === undefined) return;
    sm.spareRow = { id: row.id, version: row.version, instanceId: row.instance_id };
    try {
      this.commitHeld(o, now);
    } finally {
      if (sm.spareRow !== undefined) repo.deleteSchedule.run(row.id);
      sm.spareRow = undefined;
    }
  }

  /** Commits an outcome whose claim this worker still holds (see {@link commit}). */
  private commitHeld(o: Outcome, now: number): void {
    const { repo, sm } = this.deps;
    const row = o.c.row;
    let inst = repo.instanceHead.get(row.instance_id);
    if (inst && this.pastDeadline(inst, now)) {
      // Its deadline row waits for a later turn: fail it now, so this outcome starts nothing.
      this.failOnDeadline(inst.id, now);
      inst = repo.instanceHead.get(row.instance_id);
    }
    if (!inst || TERMINAL_STATUSES.has(inst.status)) return;
    const nodeId = row.node_id ?? '';
    const wf = o.c.wf;
    if (inst.status === 'COMPENSATING' && o.kind === 'wait') {
      // The instance failed meanwhile: nothing new waits, but the attempt's end is recorded.
      repo.setNodeStatus.run('CANCELLED', inst.id, nodeId);
      sm.history(inst.id, nodeId, 'node.cancelled', now, { reason: 'the instance is failing: the wait was not started' }, o.c.attempt);
      sm.continueCompensation(inst.id, now);
      return;
    }
    switch (o.kind) {
      case 'completed':
        sm.completeNode(inst, wf, nodeId, o.output, o.patch, o.decisions, now, o.c.attempt, o.c.startedAt);
        return;
      case 'wait': {
        const w = o.result.wait;
        if ('until' in w) {
          const output = 'output' in o.result ? o.result.output : undefined;
          sm.waitNode(inst, nodeId, { kind: 'timer', until: w.until, ...(output === undefined ? {} : { output }) }, o.c.attempt, now);
        } else {
          const timeoutMs = o.c.node?.def.timeoutMs;
          sm.waitNode(inst, nodeId, { kind: 'approval', ...(w.prompt === undefined ? {} : { prompt: w.prompt }), ...(timeoutMs === undefined ? {} : { timeoutAt: now + timeoutMs }) }, o.c.attempt, now);
        }
        return;
      }
      case 'failed': {
        // A failing instance retries nothing: a running node's failure is recorded as final.
        if (!o.final && o.c.node && inst.status !== 'COMPENSATING') {
          const delay = backoffDelayMs(o.c.node.retry, o.c.attempt);
          sm.retryNode(inst, nodeId, o.error, o.c.attempt, now + delay, now, o.c.startedAt);
          return;
        }
        sm.failNode(inst, wf, nodeId, o.error, o.c.attempt, o.decisions, now, o.c.startedAt);
        return;
      }
      case 'compensated':
        sm.compensated(inst.id, nodeId, o.result, o.c.attempt, now);
        return;
      case 'compensation_failed': {
        const retry = o.c.node?.compensate?.retry;
        const retryAt = !o.final && retry ? now + backoffDelayMs(retry, o.c.attempt) : null;
        sm.compensationFailed(inst.id, nodeId, o.error, o.c.attempt, retryAt, now);
        return;
      }
    }
  }
}
