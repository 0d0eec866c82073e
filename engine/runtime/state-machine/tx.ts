/**
 * The context every transition runs in: one write transaction.
 *
 * A transition is a plain synchronous function `(tx, …) => result` (DBOS Transact's
 * system_database.ts: every recorded outcome goes through one module): it reads and writes only
 * through `tx.q`, dates everything `tx.now` (read inside the transaction, after any wait for the
 * write lock), pushes the events its changes cause onto `tx.events` (emitted by the caller after
 * commit), and may start ready nodes at once only through `tx.dispatch`. No transition keeps state
 * between calls, and no caller sets fields around one.
 */
import type { EngineEvent } from '../events';
import type { CompiledWorkflow } from '../compiled';
import type { InstanceHead, Queries } from '../../store/queries';

/**
 * Eager dispatch offered to a transaction (Temporal's eager activity execution: a worker that
 * completes a task and has a free slot starts the next one in the same round trip). A node made
 * ready while `slots` is above 0 is started in the transaction (RUNNING, its attempt counted, its
 * schedule row leased to `owner` until `leaseUntil`) instead of being made READY for a later claim.
 */
export interface Dispatch {
  /** The worker's lease owner name. */
  readonly owner: string;
  /** Lease expiry of rows dispatched at once, epoch ms. */
  readonly leaseUntil: number;
  /** Free handler slots left (may be 0); each dispatch of a node whose handler takes time takes one. */
  slots: number;
  /**
   * Starts left for nodes of instant types (pass, delay, approval, …), which take no slot: bounded
   * so that chains of them cannot make a turn, and the turn after it, arbitrarily long.
   */
  instant: number;
  /** Dispatched so far in this transaction, in order. */
  readonly claims: EagerClaim[];
}

/** A node started by eager dispatch, for the worker to run once the transaction commits. */
export interface EagerClaim {
  /** Its schedule row, leased to the worker, and that row's version. */
  scheduleId: number;
  version: number;
  instanceId: number;
  workflowId: number;
  nodeId: string;
  /** The attempt just started (1-based) and the node's limit. */
  attempt: number;
  attemptLimit: number;
}

/** Running handlers of an instance to abort after commit, and why. */
export interface Abort {
  instanceId: number;
  code: 'CANCELLED' | 'DEADLINE_EXCEEDED';
  message: string;
}

/** One write transaction, as transitions see it. */
export interface Tx {
  /** The backend's queries, inside this transaction. */
  readonly q: Queries;
  /** Now, epoch ms, read inside the transaction. */
  readonly now: number;
  /** Events of this transaction; the caller emits them after commit. */
  readonly events: EngineEvent[];
  /** Eager dispatch, when the caller's worker has free slots (see {@link Dispatch}). */
  readonly dispatch: Dispatch | undefined;
  /** Instances whose running handlers must be aborted once this transaction committed (cancel, deadline). */
  readonly aborts: Abort[];
  /**
   * Instances whose every schedule row this transaction deleted ({@link unschedule}: they ended or
   * were cancelled): a claim's row of theirs is gone already, and deleting it again is a statement
   * for nothing.
   */
  readonly unscheduled: Set<number>;
  /** A workflow version by id, compiled (versions never change). @throws EngineError when this process cannot run it. */
  workflow(id: number): CompiledWorkflow;
}

/**
 * The schedule row of the claim whose outcome is being committed, checked as this worker's and
 * about to be consumed: a node of the same instance started at once takes it over in place.
 * Passed down explicitly, and `taken` says whether somebody did.
 */
export interface SpareRow {
  readonly id: number;
  readonly version: number;
  readonly instanceId: number;
  taken: boolean;
}

/**
 * An instance as transitions name it to the events they push: its id and whether it is a test
 * run. An {@link InstanceHead} or an InstanceRow is one: the flag comes with the row a transition
 * reads anyway, never from a statement of its own.
 */
export type InstanceRef = Pick<InstanceHead, 'id' | 'test'>;

const TEST_RUN = Object.freeze({ test: true as const });

/**
 * `{ test: true }` for a test run, else undefined: spread last into every event about `inst`
 * (`{ type: 'node.changed', …, ...testMark(inst) }`), so a normal run's events have no `test` field.
 */
export function testMark(inst: { readonly test: boolean }): { readonly test: true } | undefined {
  return inst.test ? TEST_RUN : undefined;
}

/** Builds a {@link Tx}. */
export function makeTx(q: Queries, now: number, workflow: (id: number) => CompiledWorkflow, dispatch?: Dispatch): Tx {
  return { q, now, events: [], aborts: [], unscheduled: new Set(), dispatch, workflow };
}

/** Whether eager dispatch may start one more node in this transaction. */
export function canDispatch(tx: Tx, instant = false): tx is Tx & { dispatch: Dispatch } {
  return tx.dispatch !== undefined && (instant ? tx.dispatch.instant : tx.dispatch.slots) > 0;
}

/** Takes what a dispatch of a node of `instant` type costs: a slot, or one of the instant starts. */
export function takeDispatch(d: Dispatch, instant: boolean): void {
  if (instant) d.instant--;
  else d.slots--;
}

/** Starts of nodes of instant types one transaction dispatches at most ({@link Dispatch.instant}). */
export const INSTANT_DISPATCH_PER_TX = 256;

/** Deletes every schedule row of `instanceId` (it ended, or is cancelled) and notes it in {@link Tx.unscheduled}. */
export function unschedule(tx: Tx, instanceId: number): void {
  tx.q.schedule.deleteForInstance(instanceId);
  tx.unscheduled.add(instanceId);
}
