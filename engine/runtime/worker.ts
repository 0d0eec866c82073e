/**
 * The worker loop of one process (DESIGN.md section 2; STYLE.md habit 3): each turn is one write
 * transaction (engine/runtime/state-machine/turn.ts) that commits the outcomes finished since the
 * last turn, extends leases and claims due work up to the free handler slots; handlers run
 * between turns (engine/runtime/step-executor.ts), never inside one.
 *
 * Handler slots are counted here: what runs, plus claims committed (or being committed) and not
 * launched yet, which hold their slots from the transaction that took them until launch.
 */
import { debugEnabled } from '../debug';
import { EngineError } from '../errors';
import type { LeaseKeeper, StorageBackend, WriteQueries } from '../store/port';
import type { Clock } from './clock';
import { systemClock } from './clock';
import type { CompiledWorkflow } from './compiled';
import type { EventHub } from './events';
import type { Faults } from './faults';
import type { RetentionPass } from './retention';
import { executeStep, type ExecutorDeps } from './step-executor';
import { DAMAGED_RETRY_MS, type ClaimedStep } from './state-machine/claim';
import { isInstantRow, type ScheduleRow } from '../store/queries';
import type { Outcome } from './state-machine/outcome';
import { IsolateOutcomes, runTurn, type TurnResult } from './state-machine/turn';
import { INSTANT_DISPATCH_PER_TX, makeTx, type Abort, type Dispatch, type Tx } from './state-machine/tx';
import { ScheduleFirer } from './schedules';

/** Tunables of the worker loop. */
export interface WorkerOptions {
  /** This worker's lease owner name; unique per process. */
  owner: string;
  /** Handlers running at once. Default 32. */
  concurrency: number;
  /** How long a claim is held before others may take it, ms. Default 30 000; renewals extend it. */
  leaseMs: number;
  /** Longest sleep between polls when nothing is due, ms. Default 50. */
  pollIntervalMs: number;
  /** Largest node result / variables document, bytes. Default 1 MiB. */
  maxResultBytes: number;
  /**
   * How long the loop's thread may go without a turn or a launch before its leases are left to
   * expire (another worker then takes its steps over), ms. Default max(10 × leaseMs, 60 000).
   */
  stallMs: number;
}

/** Shared engine parts the worker drives. */
export interface WorkerDeps {
  storage: StorageBackend;
  clock: Clock;
  events: EventHub;
  faults: Faults;
  /** A workflow version, compiled; inside a transaction it reads through that transaction's queries `q`. */
  workflow(id: number, q?: WriteQueries): CompiledWorkflow;
  /** A workflow version, compiled, outside a transaction. @throws EngineError NOT_FOUND */
  loadWorkflow(id: number): Promise<CompiledWorkflow>;
  /**
   * Retention run by the loop (never by `tick()`): a batch every `intervalMs` of wall time, and
   * batch after batch, a loop turn between each, while a pass has more. Absent: no retention.
   */
  retention?: { pass: RetentionPass; intervalMs: number };
}

/** A running execution. `controller` is undefined for instant types (nothing to abort). */
interface Inflight {
  step: ClaimedStep;
  controller: AbortController | undefined;
  beatAt: number;
}

/** How often the loop looks at the write-ahead log's size, ms. */
const WAL_CHECK_MS = 5000;

/** Longest sleep between failed loop turns (a full disk, a damaged file), ms. */
const MAX_FAILURE_BACKOFF_MS = 5000;

/** Slots taken by a transaction that offers eager dispatch, until it reports how many it used. */
export interface DispatchOffer {
  /** The dispatch to hand the transaction, or undefined when no slot is free. */
  dispatch: Dispatch | undefined;
  /** After commit: launches what the transaction dispatched and frees the slots it did not use. */
  launch(claimed: ClaimedStep[]): void;
  /** The transaction failed: frees every slot of the offer. */
  abandon(): void;
}

/**
 * The worker loop. `start()` runs it in the background; `tick()` runs one turn (tests and
 * `runUntil` drive it directly).
 */
export class Worker {
  /** Slots held by claims taken in a transaction and not launched yet (or by a transaction under way). */
  private held = 0;
  private readonly inflight = new Map<number, Inflight>();
  /** Of {@link inflight}, the steps that run no handler taking time (they hold no slot: see `launch`). */
  private slotFree = 0;
  private outcomes: Outcome[] = [];
  private running = false;
  private loopPromise: Promise<void> | undefined;
  private wakeResolve: (() => void) | undefined;
  private lastNow: number;
  private claiming = true;
  /** Stops under way: claiming resumes only when the last one ends. */
  private stopping = 0;
  private keeper: LeaseKeeper | undefined;
  private readonly unrunnable = new Set<number>();
  private readonly executorDeps: ExecutorDeps;
  /** The schedules this loop fires (engine/runtime/schedules.ts). */
  private readonly schedules: ScheduleFirer;

  constructor(
    private readonly deps: WorkerDeps,
    private readonly opts: WorkerOptions,
  ) {
    this.lastNow = deps.clock.now();
    this.schedules = new ScheduleFirer({
      storage: deps.storage,
      clock: deps.clock,
      events: deps.events,
      workflow: (id, q) => deps.workflow(id, q),
      loadWorkflow: (id) => deps.loadWorkflow(id),
      applyAborts: (aborts) => this.applyAborts(aborts),
    });
    this.executorDeps = {
      clock: deps.clock,
      maxResultBytes: opts.maxResultBytes,
      childWorkflow: async (name, version) => {
        const row = await deps.storage.read.workflowVersion(name, version);
        if (!row) {
          const what = version === undefined ? `workflow "${name}" does not exist` : `workflow "${name}" has no version ${version}`;
          throw new EngineError('NOT_FOUND', `${what} (called as a child workflow)`, { retryable: false });
        }
        return deps.loadWorkflow(row.id);
      },
      childResults: (instanceId, nodeId, attempt) => deps.storage.read.childResults(instanceId, nodeId, attempt),
      log: (step, message, data) => {
        // Best-effort and small: a handler's log line lands in history on its own.
        void deps.storage
          .write((q) =>
            q.history.append({ instanceId: step.row.instanceId, nodeId: step.nodeId, type: 'node.log', at: deps.clock.now(), attempt: step.attempt, data: data === undefined ? { message } : { message, data } }),
          )
          .catch(() => undefined);
      },
    };
  }

  /** Handlers now running in this process. */
  get inflightCount(): number {
    return this.inflight.size;
  }

  /** Whether outcomes wait to be committed, or claims committed here wait to be launched. */
  get hasPendingOutcomes(): boolean {
    return this.outcomes.length > 0 || this.held > 0;
  }

  /** Wakes the loop at once (new work was scheduled in this process). */
  wake(): void {
    // What an idle turn read may be out of date now (work was added in this process).
    this.nextDueRead = undefined;
    const w = this.wakeResolve;
    this.wakeResolve = undefined;
    w?.();
  }

  /** The live schedules changed in this process (a deploy, a pause): the next turn looks at them. */
  schedulesChanged(): void {
    this.schedules.invalidate();
    this.wake();
  }

  /** Starts the loop in the background. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.claiming = true;
    this.retentionDueAt = Date.now() + (this.deps.retention?.intervalMs ?? 0);
    this.loopPromise = this.loop();
  }

  /**
   * Stops claiming, lets running handlers finish (up to `graceMs`), commits their outcomes, and
   * releases the leases of any still running so another worker can take them at once.
   */
  async stop(graceMs = 10_000): Promise<void> {
    // A worker that never ran and holds nothing (an engine a read command opened) has nothing to
    // commit or release: no turn, so no write and no worker message from a command that ran none.
    if (!this.running && this.inflight.size === 0 && !this.hasPendingOutcomes) return;
    this.stopping++;
    this.claiming = false;
    const deadline = Date.now() + graceMs;
    // Claims committed but not launched yet (a start dispatched at once) are waited for too.
    // A turn that fails here (a full disk, a damaged file) leaves its outcomes' claims leased: they
    // expire and the steps run again elsewhere, as after a crash; the stop itself goes on.
    const turn = async (): Promise<void> => {
      try {
        await this.tick();
      } catch (err) {
        this.stopFailed('commit what finished', err);
      }
    };
    while ((this.inflight.size > 0 || this.held > 0) && Date.now() < deadline) {
      await turn();
      if (this.inflight.size > 0 || this.held > 0) await this.sleep(20);
    }
    await turn();
    this.running = false;
    this.wake();
    await this.loopPromise;
    const keeper = this.keeper;
    this.keeper = undefined;
    await keeper?.stop();
    if (this.inflight.size > 0) {
      for (const f of this.inflight.values()) f.controller?.abort(new EngineError('CANCELLED', 'worker stopping'));
      await this.deps.storage
        .releaseLeases(this.opts.owner, this.deps.clock.now())
        .catch((err: unknown) => this.stopFailed(`release the leases of ${this.inflight.size} running step${this.inflight.size === 1 ? '' : 's'}`, err));
    }
    // Claiming stops only for the stop itself: turns driven by hand afterwards (`tick()`) must
    // claim again, or they would silently run nothing.
    if (--this.stopping === 0) this.claiming = true;
  }

  /**
   * Offers eager dispatch to a transaction of the caller's (an instance start): while the loop
   * runs and slots are free, they are taken now — held until the offer launches or is abandoned,
   * so concurrent starts keep the concurrency bound — and the entry nodes the transaction makes
   * ready start in it, leased to this worker. Call inside the transaction (the lease dates from it).
   */
  offerDispatch(now: number): DispatchOffer {
    if (!this.running || !this.claiming) return { dispatch: undefined, launch: () => undefined, abandon: () => undefined };
    // Entry nodes of instant types start whatever the slots (bounded per transaction).
    const slots = Math.max(0, this.freeSlots());
    this.held += slots;
    let settled = false;
    return {
      dispatch: { owner: this.opts.owner, leaseUntil: now + this.opts.leaseMs, slots, instant: INSTANT_DISPATCH_PER_TX, claims: [] },
      launch: (claimed) => {
        if (settled) return;
        settled = true;
        this.held -= slots - claimed.length;
        for (const c of claimed) this.launch(c);
        this.wake();
      },
      abandon: () => {
        if (settled) return;
        settled = true;
        this.held -= slots;
      },
    };
  }

  /**
   * Aborts running handlers of an instance in this process — its nodes' attempts, never its
   * compensations: the deadline or the cancel that aborts them is what started those (in the
   * same turn, for a deadline), and they must run to their end (DESIGN.md "Rules pinned").
   */
  abortInstance(instanceId: number, reason: EngineError): void {
    for (const f of this.inflight.values()) if (f.step.row.instanceId === instanceId && f.step.row.kind !== 'compensate') f.controller?.abort(reason);
  }

  /** Applies the aborts a committed transaction asked for (cancel, deadline). */
  applyAborts(aborts: readonly Abort[]): void {
    for (const a of aborts) this.abortInstance(a.instanceId, new EngineError(a.code, a.message));
  }

  /** Turns failed in a row, and the code of the last failure (logged once per change). */
  private failedTurns = 0;
  private failureCode: string | undefined;

  private async loop(): Promise<void> {
    // Whether the last turn found nothing to do: only then does the next one read before it
    // writes. A worker's first turn writes at once (on PostgreSQL the first read opens a
    // connection of the read pool, which delayed a fresh worker's first claims), and a busy loop
    // pays no read beside its writes.
    let idle = false;
    while (this.running) {
      let worked = 0;
      try {
        worked = await this.tick(idle);
        if (this.failedTurns > 0) this.turnsRecovered();
      } catch (err) {
        // Never crash the worker: a failed turn leaves claims leased, which expire and are retried.
        // A full disk or a damaged file fails every turn: back off, and say so once per change.
        this.turnFailed(err);
        await this.sleep(Math.min(MAX_FAILURE_BACKOFF_MS, this.opts.pollIntervalMs * 2 ** Math.min(this.failedTurns - 1, 10)));
      }
      if (!this.running) break;
      if (this.deps.retention && Date.now() >= this.retentionDueAt) await this.retain(this.deps.retention);
      if (!this.running) break;
      idle = worked === 0 && this.outcomes.length === 0;
      if (!idle) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        continue;
      }
      await this.sleep(await this.nextSleepMs());
    }
  }

  /** Wall time of the next retention batch (the first: one interval after the loop started). */
  private retentionDueAt = Date.now();
  private retentionFailure: string | undefined;

  /** One retention batch; the next is due at once while the pass has more, else an interval later. Never throws. */
  private async retain(r: { pass: RetentionPass; intervalMs: number }): Promise<void> {
    try {
      const { more, deleted } = await r.pass.step();
      this.retentionFailure = undefined;
      if (this.deps.faults.armed && deleted.instances > 0) this.deps.faults.hit('pruned', { instanceId: 0, nodeId: null });
      this.retentionDueAt = more ? 0 : Date.now() + r.intervalMs;
    } catch (err) {
      // A full disk, a busy lock past patience: the next interval tries again; said once per code.
      const code = err instanceof EngineError ? err.code : err instanceof Error ? err.name : 'ERROR';
      if (code !== this.retentionFailure) {
        this.retentionFailure = code;
        console.error(`runnel worker: retention failed: ${code}: ${err instanceof Error ? err.message : String(err)} (tried again in ${Math.round(r.intervalMs / 1000)} s)`);
      }
      this.retentionDueAt = Date.now() + r.intervalMs;
    }
  }

  /**
   * The earliest next_run_at an idle turn read (null: no row) and the engine-clock time it read it
   * at: the sleep after that turn uses it instead of reading again.
   */
  private nextDueRead: { next: number | null; at: number } | undefined;

  private async nextSleepMs(): Promise<number> {
    const read = this.nextDueRead;
    this.nextDueRead = undefined;
    const fresh = read !== undefined && this.deps.clock.now() - read.at < 5;
    const next = fresh ? read.next : await this.deps.storage.read.nextDue();
    const now = this.deps.clock.now();
    const poll = Math.min(this.opts.pollIntervalMs, Math.max(1, this.schedules.dueInMs(now)));
    if (next === null) return poll;
    return Math.max(1, Math.min(poll, next - now));
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
   * Logs a failed turn: one line when the failure differs from the last one (its code and
   * message; the stack only with RUNNEL_DEBUG=1), nothing while the same failure repeats.
   */
  private turnFailed(err: unknown): void {
    this.failedTurns++;
    const code = err instanceof EngineError ? err.code : err instanceof Error ? err.name : 'ERROR';
    if (code === this.failureCode) return;
    this.failureCode = code;
    const message = err instanceof Error ? err.message : String(err);
    console.error(`runnel worker: loop turns fail: ${code}: ${message} (retrying with backoff; said once until it changes)`);
    if (debugEnabled() && err instanceof Error && err.stack) console.error(err.stack);
  }

  /**
   * Logs what a stop could not do (once per code, and not when the loop's turns said the same
   * failure: {@link turnFailed}): nothing is retried, the
   * leases it holds expire and their steps run again elsewhere, as after a crash.
   */
  private stopFailed(what: string, err: unknown): void {
    const code = err instanceof EngineError ? err.code : err instanceof Error ? err.name : 'ERROR';
    // Said already: by the loop's turns (the same failure) or by this stop.
    if (code === this.failureCode || code === this.stopFailureCode) return;
    this.stopFailureCode = code;
    const message = err instanceof Error ? err.message : String(err);
    console.error(`runnel worker: stopping: could not ${what}: ${code}: ${message} (its leases expire and the steps run again elsewhere)`);
    if (debugEnabled() && err instanceof Error && err.stack) console.error(err.stack);
  }

  private stopFailureCode: string | undefined;

  /** Logs that turns commit again after failing. */
  private turnsRecovered(): void {
    console.error(`runnel worker: loop turns commit again after ${this.failedTurns} failed (${this.failureCode ?? 'error'})`);
    this.failedTurns = 0;
    this.failureCode = undefined;
  }

  private readonly damagedInstances = new Set<number>();

  private walCheckedAt = 0;
  private walOver = false;

  /**
   * Says once when the write-ahead log passes its bound (a reader holds old frames, so checkpoints
   * cannot reset it: issue 17 saw 818 MiB in 45 s) and once when it is back; looked at every few
   * seconds (a stat, no query).
   */
  private watchWal(): void {
    const t = Date.now();
    if (t - this.walCheckedAt < WAL_CHECK_MS) return;
    this.walCheckedAt = t;
    const wal = this.deps.storage.health().wal;
    if (!wal) return;
    const over = wal.bytes > wal.limitBytes;
    if (over === this.walOver) return;
    this.walOver = over;
    const mib = (b: number) => `${(b / (1024 * 1024)).toFixed(b >= 10 * 1024 * 1024 ? 0 : 1)} MiB`;
    console.error(
      over
        ? `runnel worker: the write-ahead log is ${mib(wal.bytes)}, above its bound of ${mib(wal.limitBytes)}: a reader holds old frames (a long read transaction, often in another process); it shrinks back once that reader lets go`
        : `runnel worker: the write-ahead log is back within its bound (${mib(wal.bytes)})`,
    );
  }

  /** Says once per instance that a row of it is damaged and its step waits. */
  private warnDamaged(row: ScheduleRow, err: EngineError): void {
    if (this.damagedInstances.has(row.instanceId)) return;
    this.damagedInstances.add(row.instanceId);
    console.error(`runnel worker: instance ${row.instanceId} cannot be worked: ${err.message} (its step is looked at again every ${DAMAGED_RETRY_MS / 1000} s)`);
  }

  /** Says once per workflow version that this process cannot run it (and why). */
  private warnUnrunnable(workflowId: number, err: unknown): void {
    if (this.unrunnable.has(workflowId)) return;
    this.unrunnable.add(workflowId);
    const message = err instanceof Error ? err.message : String(err);
    console.error(`runnel worker: cannot run workflow version ${workflowId} here (${message}); its steps are left to a worker that can`);
  }

  /**
   * One loop turn: commit finished outcomes, extend leases, claim. Returns the number of outcomes
   * committed plus steps claimed. With `skipIdle` (the loop's own turns), a turn with nothing to
   * commit or renew first reads the earliest due time, and writes nothing when no row is due (then
   * it fires due schedules only). Without it (a turn driven by hand, a stop) the write is the
   * turn's first step, so a turn issued before another write goes first.
   */
  async tick(skipIdle = false): Promise<number> {
    const { storage, clock, events } = this.deps;
    const turnStart = performance.now();
    this.keeper?.alive();
    this.watchWal();
    const before = clock.now();
    const jumpedFrom = this.checkClock(before);
    const outcomes = this.outcomes;
    this.outcomes = [];
    // After a clock jump every running handler beats: its last beat may lie in the new "future",
    // and a lease left to expire would let this or another worker run the step a second time.
    const beating = [...this.inflight.values()].filter((f) => jumpedFrom !== undefined || before - f.beatAt >= this.opts.leaseMs / 3);
    const beats = beating.map((f) => ({ id: f.step.row.id, version: f.step.row.version }));
    if (skipIdle && outcomes.length === 0 && beats.length === 0 && jumpedFrom === undefined) {
      // Nothing to commit or renew: a turn would only claim, and every claim (due rows, instant
      // rows, deadlines, expired leases) takes a schedule row whose next_run_at has come. One read
      // of the earliest says whether any has; when none has, the write transaction (BEGIN
      // IMMEDIATE and five statements, which also held off other processes' writes) is skipped.
      // An idle worker polled with one every 50 ms: 2.4 CPU s a minute.
      const next = await storage.read.nextDue();
      if (next === null || next > before) {
        this.nextDueRead = { next, at: before };
        return this.claiming ? await this.schedules.turn() : 0;
      }
    }
    let taken = 0;
    const attempt = (isolated: boolean) =>
      storage.write((q): { result: TurnResult; tx: Tx } => {
        // Read inside the transaction: a turn that waited for the write lock must not date its
        // commits and leases from before the wait (a lease already expired would let another
        // worker run the same step).
        const tx = makeTx(q, Math.max(before, clock.now()), (id) => this.deps.workflow(id, q));
        const result = runTurn(tx, {
          owner: this.opts.owner,
          leaseMs: this.opts.leaseMs,
          outcomes,
          beats,
          claiming: this.claiming,
          // Free slots, counted inside the transaction: claims committed but not launched yet (a
          // start dispatched at once by the API) hold theirs.
          takeSlots: () => {
            // A backend may run this transaction more than once (PostgreSQL retries a
            // serialization failure): what an earlier run took is given back first.
            this.held -= taken;
            taken = Math.max(0, this.freeSlots());
            this.held += taken;
            return taken;
          },
          ...(jumpedFrom === undefined ? {} : { clockJumpedFrom: jumpedFrom }),
          isolated,
          onUnrunnable: (id, err) => this.warnUnrunnable(id, err),
          onCommitError: (o, err) => console.error(`runnel worker: cannot commit ${o.kind} of instance ${o.step.row.instanceId} node ${o.step.nodeId}`, err),
          onDamaged: (row, err) => this.warnDamaged(row, err),
        });
        return { result, tx };
      });
    const write = async (isolated: boolean) => {
      try {
        return await attempt(isolated);
      } catch (err) {
        // The transaction rolled back (or never committed): its claims do not exist.
        this.held -= taken;
        taken = 0;
        throw err;
      }
    };
    let turn: { result: TurnResult; tx: Tx };
    const writeStart = performance.now();
    try {
      try {
        turn = await write(false);
      } catch (err) {
        if (!(err instanceof IsolateOutcomes)) throw err;
        turn = await write(true);
      }
    } catch (err) {
      // Nothing of the turn committed (a full disk, a damaged file, a lost lock): its outcomes
      // wait for the next turn, their claims still leased here.
      this.outcomes = outcomes.concat(this.outcomes);
      throw err;
    }
    const commitMs = performance.now() - writeStart;
    const { result, tx } = turn;
    this.held -= result.slots - result.claimed.length;
    const now = tx.now;
    for (const f of beating) if (!result.lostLeases.includes(f.step.row.id)) f.beatAt = now;
    try {
      for (const id of result.lostLeases) this.inflightById(id)?.controller?.abort(new EngineError('LEASE_LOST', 'the lease was lost (cancelled or taken over)'));
      events.emit(tx.events);
      if (this.deps.faults.armed) {
        for (const o of outcomes) this.deps.faults.hit('committed', { instanceId: o.step.row.instanceId, nodeId: o.step.nodeId, attempt: o.step.attempt });
      }
    } finally {
      // Committed claims are launched whatever a listener or a fault point threw: they hold slots.
      for (const c of result.claimed) this.launch(c);
      // Aborts of this turn (a deadline) reach handlers launched in it too.
      this.applyAborts(tx.aborts);
    }
    if (events.listening) {
      const turnMs = performance.now() - turnStart;
      events.emit([{ type: 'worker.turn', turnMs, commitMs, committedAt: clock.now(), outcomes, claimed: result.claimed.length }]);
    }
    // Due schedules after the turn: its write goes first, as it would without schedules (a cancel
    // issued with a tick must meet the claim the tick makes, not wait behind a schedule read); the
    // instances they start are claimed by the next turn, which the loop runs at once.
    const scheduled = this.claiming ? await this.schedules.turn() : 0;
    return scheduled + outcomes.length + result.claimed.length;
  }

  private inflightById(scheduleId: number): Inflight | undefined {
    return this.inflight.get(scheduleId);
  }

  /** Handler slots free: the concurrency less what runs and what is held for claims not launched yet. */
  private freeSlots(): number {
    return this.opts.concurrency - (this.inflight.size - this.slotFree) - this.held;
  }

  private checkClock(now: number): number | undefined {
    const last = this.lastNow;
    this.lastNow = now;
    // Jumps of more than a second backwards are recorded; timers already due stay due.
    return now < last - 1000 ? last : undefined;
  }

  /** Starts a claim committed in this process; it held a slot until now. */
  private launch(step: ClaimedStep): void {
    this.held--;
    let wf: CompiledWorkflow;
    try {
      wf = this.deps.workflow(step.workflowId);
    } catch (err) {
      // Claimed rows are of versions this process compiled in the claiming transaction.
      console.error('runnel worker: cannot launch a claimed step', err);
      return;
    }
    const node = wf.nodes.get(step.nodeId);
    // An instant type's handler settles without waiting on anything (no I/O, no timer): there is
    // nothing to abort, and an AbortController per step was a measurable share of a transition.
    const instant = step.row.kind === 'run' && node?.type.instant === true && node.def.timeoutMs === undefined;
    const controller = instant ? undefined : new AbortController();
    if (!instant) this.keepLeases();
    // A timer, a wait's timeout, a wake or a step of an instant type settles at once: it holds no
    // handler slot while it runs, as the turn claimed it whatever the slots.
    const slotFree = isInstantRow(step.row.kind, node?.type.instant);
    if (slotFree) this.slotFree++;
    // A launch is progress too: steps started one after another by a busy thread are not a hang.
    this.keeper?.alive();
    this.inflight.set(step.row.id, { step, controller, beatAt: step.startedAt });
    // An exhausted claim runs no handler, so a crash "during the attempt" cannot happen there.
    if (this.deps.faults.armed && !step.exhausted) this.deps.faults.hit('claimed', { instanceId: step.row.instanceId, nodeId: step.nodeId, attempt: step.attempt });
    void executeStep(this.executorDeps, wf, step, controller).then((o) => {
      this.inflight.delete(step.row.id);
      if (slotFree) this.slotFree--;
      if (this.deps.faults.armed) this.deps.faults.hit('handler-done', { instanceId: step.row.instanceId, nodeId: step.nodeId, attempt: step.attempt });
      this.outcomes.push(o);
      this.wake();
    });
  }

  /**
   * Renews leases off this thread from the first step that can take time (see StorageBackend
   * keepLeases); only on the wall clock — a test clock moves leases by hand, and the loop's own
   * heartbeats follow it.
   */
  private keepLeases(): void {
    if (this.keeper !== undefined || !this.running || this.deps.clock !== systemClock) return;
    this.keeper = this.deps.storage.keepLeases({ owner: this.opts.owner, leaseMs: this.opts.leaseMs, stallMs: this.opts.stallMs });
  }
}
