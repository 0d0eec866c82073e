/**
 * One worker loop turn as one transaction: commit every outcome finished since the last turn,
 * extend the leases of long handlers, fire passed deadlines, and claim due rows up to the free
 * handler slots, starting at once the nodes the outcomes make ready (eager dispatch). Outcomes of
 * many instances thus share one commit (group commit), and claims ride along for free.
 */
import type { EngineError } from '../../errors';
import type { ScheduleRow } from '../../store/queries';
import type { ClaimedStep } from './claim';
import { claimDue, extendLeases, fireDeadlines, isDamagedRow, recordClockJump, takeDispatched } from './claim';
import { commitOutcome, type Outcome } from './outcome';
import { INSTANT_DISPATCH_PER_TX, type Dispatch, type Tx } from './tx';

/** Passed deadlines a loop turn fails at most (more wait for the next turn). */
export const DEADLINES_PER_TURN = 64;

/** Due rows that run no handler taking time (timers, wait timeouts, wakes, ready nodes of instant types) a loop turn claims beyond its free slots, at most. */
export const INSTANT_PER_TURN = 64;

/** What a loop turn is asked to do. */
export interface TurnRequest {
  /** The worker's lease owner name, and the length of its leases, ms. */
  owner: string;
  leaseMs: number;
  /** Outcomes to commit, oldest first. */
  outcomes: Outcome[];
  /** Leases of running steps to extend. */
  beats: readonly { id: number; version: number }[];
  /** Whether the worker takes new work (false while it stops): deadlines fire and rows are claimed only then. */
  claiming: boolean;
  /**
   * Takes the handler slots free now, inside the transaction (claims committed but not launched
   * yet hold theirs). Called only while `claiming`. The worker counts them held until it
   * learns how many the turn used.
   */
  takeSlots(): number;
  /** When the clock jumped back since the last turn: where it was, epoch ms. */
  clockJumpedFrom?: number;
  /** Commit each outcome, and claim each row, in a savepoint of its own, so one that fails leaves the others. */
  isolated: boolean;
  /** Says (once per version) that this process cannot run a workflow version. */
  onUnrunnable(workflowId: number, err: unknown): void;
  /** Where an outcome that failed to commit in isolation is reported (its claim stays leased, so the step is retried). */
  onCommitError(o: Outcome, err: unknown): void;
  /** Reports a due row put back because its instance's stored data is damaged. */
  onDamaged(row: ScheduleRow, err: EngineError): void;
}

/** What a loop turn did. */
export interface TurnResult {
  /** Steps claimed (due rows, then nodes started at once), for the worker to launch. */
  claimed: ClaimedStep[];
  /**
   * Slots the turn took (see {@link TurnRequest.takeSlots}); `claimed.length` of them stay held.
   * Rows that run no handler are claimed beyond them, so `claimed` may be the longer.
   */
  slots: number;
  /** Rows of running steps whose lease was lost (cancelled, or taken over): abort their handlers. */
  lostLeases: number[];
}

/** Thrown out of a turn committing without savepoints when one outcome failed: run it again isolated. */
export class IsolateOutcomes extends Error {
  constructor(readonly original: unknown) {
    super('an outcome failed to commit; the turn runs again with a savepoint per outcome');
  }
}

/**
 * Runs one loop turn in `tx` (see the module doc). Outcomes commit without a savepoint each (a
 * savepoint per outcome was ~10% of a transition) unless `isolated`; when one throws, the turn
 * throws {@link IsolateOutcomes} and the caller runs it again isolated.
 */
export function runTurn(tx: Tx, r: TurnRequest): TurnResult {
  const { q, now } = tx;
  if (r.clockJumpedFrom !== undefined) recordClockJump(tx, r.clockJumpedFrom);
  const capacity = r.claiming ? r.takeSlots() : 0;
  // Passed deadlines first, whatever the slots: they run no handler, and the outcomes and starts
  // of this turn then see their instances failing.
  if (r.claiming) fireDeadlines(tx, DEADLINES_PER_TURN);
  // Nodes the outcomes make ready start at once while slots are free: no READY row to claim in a
  // later statement, no second read of the node. While rows are due (new instances, timers,
  // retries), up to a quarter of the slots (at least one) is kept for them, so running chains
  // cannot starve them; chains keep the rest, which keeps an instance's steps in this process
  // (measured against a backlog: 1/4 beat 1/2 and 1/8).
  // Nodes of instant types (pass, delay, approval, …) start at once whatever the slots: they take
  // none, up to INSTANT_DISPATCH_PER_TX a turn (beyond it they are READY, for the instant claims).
  let eagerSlots = 0;
  if (capacity > 0 && r.outcomes.length > 0) {
    const waiting = q.schedule.countDue({ now, limit: capacity });
    eagerSlots = capacity - Math.min(waiting, Math.ceil(capacity / 4));
  }
  const dispatch: Dispatch | undefined =
    r.claiming && r.outcomes.length > 0 ? { owner: r.owner, leaseUntil: now + r.leaseMs, slots: eagerSlots, instant: INSTANT_DISPATCH_PER_TX, claims: [] } : undefined;
  const ctx: Tx = { ...tx, dispatch };
  if (r.isolated) {
    for (const o of r.outcomes) commitIsolated(ctx, o, r);
  } else {
    for (const o of r.outcomes) {
      try {
        commitOutcome(ctx, o, r.owner);
      } catch (err) {
        // A full disk or damaged pages fail every outcome alike: the turn fails, to be tried again.
        if (q.isStorageFailure(err)) throw err;
        throw new IsolateOutcomes(err);
      }
    }
  }
  const lostLeases = r.beats.length > 0 ? extendLeases(tx, r.owner, r.leaseMs, r.beats) : [];
  // Due rows first (a passed deadline among them fails its instance), then the nodes started at
  // once: one whose instance a deadline just failed is taken back before it ever runs.
  const left = capacity - (dispatch?.claims.length ?? 0);
  let polled: ClaimedStep[] = [];
  const claim = (limit: number, rows: 'due' | 'instant'): ClaimedStep[] => {
    try {
      return claimDue(tx, { owner: r.owner, leaseMs: r.leaseMs, limit, onUnrunnable: r.onUnrunnable, isolated: r.isolated, onDamaged: r.onDamaged, rows });
    } catch (err) {
      if (r.isolated || !isDamagedRow(err)) throw err;
      // A damaged row among the due ones: the turn runs again with a savepoint per claim.
      throw new IsolateOutcomes(err);
    }
  };
  if (left > 0) polled = claim(left, 'due');
  // Due rows that run no handler taking time (a timer firing, a wait's timeout, a wake, a ready
  // pass, delay, approval or event) whatever the free slots: each settles at once after the
  // commit, and waiting behind long handlers for a slot fired a 500 ms delay 15 s late and
  // requested an approval 16 s late. The worker lets them past its concurrency (it bounds handlers).
  if (r.claiming) polled = polled.concat(claim(INSTANT_PER_TURN, 'instant'));
  const claimed = dispatch ? takeDispatched(tx, dispatch).concat(polled) : polled;
  return { claimed, slots: capacity, lostLeases };
}

/** Commits one outcome in a savepoint; when it fails, its changes, events and dispatches are undone. */
function commitIsolated(tx: Tx, o: Outcome, r: TurnRequest): void {
  const events = tx.events.length;
  const aborts = tx.aborts.length;
  const d = tx.dispatch;
  const claims = d?.claims.length ?? 0;
  const slots = d?.slots ?? 0;
  try {
    tx.q.savepoint(() => commitOutcome(tx, o, r.owner));
  } catch (err) {
    if (tx.q.isStorageFailure(err)) throw err;
    tx.events.length = events;
    tx.aborts.length = aborts;
    if (d) {
      d.claims.length = claims;
      d.slots = slots;
    }
    // The claim stays leased; when it expires a turn retries the step (at least once).
    r.onCommitError(o, err);
  }
}

/**
 * Runs `create` (which creates instances in `tx`) with the eager dispatch `tx` offers (entry
 * nodes start at once, leased to the worker), then turns what was dispatched into claims.
 */
export function startInstances(tx: Tx, create: (tx: Tx) => number[]): { ids: number[]; claimed: ClaimedStep[] } {
  const ids = create(tx);
  const claimed = tx.dispatch ? takeDispatched(tx, tx.dispatch) : [];
  return { ids, claimed };
}

export type { ClaimedStep, Outcome };
