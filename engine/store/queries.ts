/**
 * The queries a transition runs inside one write transaction, by family (graphile-worker's
 * `src/sql/*.ts`: named functions with named parameters).
 *
 * A storage backend implements {@link Queries}; the state machine (engine/runtime/state-machine/)
 * is written against it and never sees SQL, parameter order or column encodings. Every function
 * runs synchronously inside the transaction its backend opened ({@link StorageBackend.write} in
 * ./port.ts), so a transition is plain synchronous code: nothing async inside a transaction
 * (STYLE.md habit 3). Times are epoch ms; JSON values are parsed and serialized here, at the
 * backend's edge.
 */
import type { SerializedError } from '../errors';
import type { InstanceStatus, NodeStatus, ScheduleKind } from '../vocabulary';

// ---------------------------------------------------------------- rows

/** Where a paused instance's rows wait (`next_run_at`): beyond any clock, so no claim sees them. */
export const PARKED_AT = Number.MAX_SAFE_INTEGER;

/** A `schedule` row: one unit of the single work queue (a lease is `nextRunAt` moved to its expiry). */
export interface ScheduleRow {
  id: number;
  instanceId: number;
  nodeId: string | null;
  kind: ScheduleKind;
  /** When it is due, or when its lease expires while leased. */
  nextRunAt: number;
  /** Attempts already made (a retry's or a compensation's row carries the failed attempt's number). */
  retryCount: number;
  /** The worker holding it, or null. A row leased once keeps its last owner until claimed again. */
  leaseOwner: string | null;
  /** Optimistic-lock version: bumped by every claim. */
  version: number;
}

/** What a transition needs of an instance without its variables: id, status, deadline, parent. */
export interface InstanceHead {
  id: number;
  status: InstanceStatus;
  /** When the instance must have ended, or null. */
  deadlineAt: number | null;
  /** The instance whose `subworkflow` or `map` node started this one, or null. */
  parentId: number | null;
  /** When it was paused (it starts no node until unpaused), or null. */
  pausedAt: number | null;
  /**
   * The concurrency slot it counts against (`<workflow name>` U+001F `<key value>`, see
   * {@link concurrencyKey}), or null when its workflow had no limit when it started.
   */
  concurrencyKey: string | null;
  /**
   * A test run (`instance:start` with `test: true`, or a child instance of one): its events say
   * so (`test: true`) and the metrics leave it out. Read with the row the transition reads
   * anyway, so knowing it costs no statement.
   */
  test: boolean;
}

/**
 * The concurrency slot of an instance of workflow `name` whose key expression yielded `value`
 * (no key expression: `undefined`, the name alone). The separator is U+001F, not NUL (PostgreSQL
 * text cannot hold NUL); a workflow name has no control character, so the name part is unambiguous.
 */
export function concurrencyKey(name: string, value: string | number | boolean | undefined): string {
  return value === undefined ? name : `${name}\u001f${String(value)}`;
}

/** An instance as the runtime needs it. */
export interface InstanceRow extends InstanceHead {
  workflowId: number;
  variables: Record<string, unknown>;
  /** Optimistic-lock version: bumped by every change of the row. */
  version: number;
  /** Why it is SUSPENDED, or null. */
  suspension: Suspension | null;
  /** What a COMPENSATING instance ends as. */
  endStatus: 'FAILED' | 'CANCELLED' | null;
  startedAt: number | null;
  error: SerializedError | null;
  /** A test run's pinned results by node id (see {@link Pins}), or null. */
  pins: Pins | null;
}

/**
 * A test run's pinned results by node id: a pinned node completes with its result instead of
 * running its handler (an http or custom node calls nothing), and its compensation does nothing.
 */
export type Pins = Record<string, unknown>;

/** Why an instance is SUSPENDED (DESIGN.md section 4). */
export interface Suspension {
  /** `incident`: a node with onFailure=suspend failed; `compensation`: a compensation failed. */
  kind: 'incident' | 'compensation';
  nodeId: string;
  error: SerializedError;
  attempts: number;
  at: number;
}

/** A node's state in one instance (`node_state`). */
export interface NodeRow {
  nodeId: string;
  status: NodeStatus;
  /** Attempts started so far (the running one included). */
  attempt: number;
  /** Attempts allowed in all (a retry of the instance raises it). */
  attemptLimit: number;
  /** Incoming edges not yet resolved. */
  pendingIn: number;
  /** Incoming edges resolved as taken. */
  takenIn: number;
  version: number;
  /** The result (undefined when none was recorded). */
  output: unknown;
  error: SerializedError | null;
  /** What it waits for (`{ kind, … }`, see NODE_WAIT_KINDS in engine/vocabulary.ts), or null. */
  wait: NodeWait | null;
  /** Order of completion (compensation runs in reverse of it), or null. */
  completedSeq: number | null;
  startedAt: number | null;
}

/** A node's wait, as `NodeRow.wait` holds it. */
export type NodeWait =
  | { kind: 'timer'; until: number; output?: unknown }
  | { kind: 'approval'; prompt?: string; timeoutAt?: number }
  | { kind: 'retry'; until: number }
  | { kind: 'incident' }
  | { kind: 'compensation' }
  | { kind: 'handled' }
  | EventWait
  | ChildrenWait;

/** An `event` node's wait: the event's name and key, its time limit, and the event once one was consumed. */
export interface EventWait {
  kind: 'event';
  name: string;
  /** Only an event sent with this key is taken; absent: any key. */
  key?: string;
  timeoutAt?: number;
  /** The event it consumed (its data becomes the result when the wake row is claimed). */
  received?: { eventId: number; data: unknown };
}

/**
 * A `subworkflow` or `map` node's wait on its child instances (one per item, `total` in all),
 * with the counters its children's ends move: at most `maxConcurrency` run at once; the node
 * fails once more than `toleratedFailures` failed (`failing`: the rest were cancelled).
 */
export interface ChildrenWait {
  kind: 'children';
  mode: 'subworkflow' | 'map';
  /** The child workflow version (its id, name and number), fixed when the node started. */
  workflowId: number;
  workflow: string;
  version: number;
  total: number;
  maxConcurrency: number;
  toleratedFailures: number;
  /** Children started so far (items `0 … started − 1`). */
  started: number;
  completed: number;
  /** Children that ended FAILED or CANCELLED. */
  failed: number;
  /** More failed than tolerated: the node fails when its wake row is claimed. */
  failing?: true;
  /** Each child's stored input is merged over the parent's globals when it starts (a map without `input`). */
  mergeGlobals?: true;
  timeoutAt?: number;
}
/** A node result as `$steps` shows it: a completed node's output, a FAILED node's `{ error }`. */
export type StepResults = Record<string, unknown>;

/**
 * Sets `steps[nodeId]` as an own property, whatever the id: node ids may be `__proto__`, which an
 * assignment would take for the object's prototype (every other step would then inherit that
 * node's result's keys).
 */
export function setStep(steps: StepResults, nodeId: string, value: unknown): void {
  Object.defineProperty(steps, nodeId, { value, enumerable: true, writable: true, configurable: true });
}

// ---------------------------------------------------------------- families

/**
 * Whether a new row of `kind` runs no handler that takes time, so every loop turn claims it
 * whatever its free handler slots (column `schedule.instant`, SQLite migration 19): a `timer`,
 * `timeout` or `wake` always; a `run` row when its node's type is instant (`instantType`: pass,
 * delay, approval, event, subworkflow, map; engine/nodes/types.ts); `deadline` and `compensate`
 * rows never.
 */
export function isInstantRow(kind: ScheduleKind, instantType: boolean | undefined): boolean {
  return kind === 'timer' || kind === 'timeout' || kind === 'wake' || (kind === 'run' && instantType === true);
}

/** The `schedule` queue. */
export interface ScheduleQueries {
  /**
   * Rows due at `now` (expired leases included), at most `limit`: the highest priority first
   * (their instances'), oldest first within a priority.
   */
  due(p: { now: number; limit: number }): ScheduleRow[];
  /** How many rows are due at `now`, counted up to `limit`. */
  countDue(p: { now: number; limit: number }): number;
  /** Passed deadline rows, oldest first, at most `limit`. */
  dueDeadlines(p: { now: number; limit: number }): ScheduleRow[];
  /**
   * Due rows that run no handler taking time ({@link isInstantRow}: timers, wait timeouts, wakes,
   * and ready nodes of instant types; expired leases included), oldest first, at most `limit`,
   * whatever their priority (index schedule_instant).
   */
  dueInstant(p: { now: number; limit: number }): ScheduleRow[];
  /** Deletes a row while nobody changed it; false when another worker had it. */
  take(p: { id: number; version: number }): boolean;
  /** Leases a row to `owner` until `until` (due again then) while nobody changed it; false when another worker had it. */
  lease(p: { id: number; version: number; owner: string; until: number }): boolean;
  /** Extends this owner's lease (the version stays); false when the lease is gone (cancelled, or taken over). */
  extendLease(p: { id: number; version: number; owner: string; until: number }): boolean;
  /**
   * Whether `owner` still holds the row at `version` (a row of instance `instanceId`). What the
   * caller writes next depends on the answer, so it must stay true until the transaction ends:
   * where writers run in parallel (PostgreSQL) the instance's lock is taken before the row is read.
   */
  holds(p: { id: number; version: number; owner: string; instanceId: number }): boolean;
  /** Puts a claimed row back, due at `at`, with the owner it had before the claim. */
  defer(p: { id: number; owner: string | null; at: number }): void;
  /**
   * Parks a claimed row of a paused instance: out of every claim's reach ({@link PARKED_AT}), with
   * the owner it had before the claim and the time it had left (`remainingMs`), due again that
   * much after the unpause.
   */
  park(p: { id: number; owner: string | null; remainingMs: number }): void;
  /** Parks every row of a paused instance that no live lease holds (see {@link ScheduleQueries.park}), each with the time it has left at `now`. */
  parkForInstance(p: { instanceId: number; now: number }): void;
  /** An unpaused instance's parked rows are due again: `now` plus the time each had left. */
  unparkForInstance(p: { instanceId: number; now: number }): void;
  /**
   * Turns a consumed claim's row into the lease of a node of the same instance started at once
   * (updated in place: no DELETE and INSERT); its version goes up by one. Like
   * {@link ScheduleQueries.insertLeased}'s, the row is not instant: recovered after a lost lease,
   * it waits for a slot.
   */
  reuseForRun(p: { id: number; nodeId: string; leaseUntil: number; now: number }): void;
  /**
   * A new row (its priority its instance's); returns its id. `instant`: a `run` row's node type is
   * instant (see {@link isInstantRow}).
   */
  insert(p: { instanceId: number; nodeId: string | null; kind: ScheduleKind; at: number; retryCount: number; now: number; instant?: boolean }): number;
  /** A new `run` row leased to `owner` until `leaseUntil` (eager dispatch); returns its id (version 1). */
  insertLeased(p: { instanceId: number; nodeId: string; owner: string; leaseUntil: number; now: number }): number;
  delete(id: number): void;
  /** Every row of an instance. */
  deleteForInstance(instanceId: number): void;
  /**
   * An instance admitted past its concurrency limit: its rows parked while it was held (at
   * {@link PARKED_AT}, no `paused_ms`) are due at `now`; when it is paused they stay parked and
   * get `paused_ms` 0 instead, so they fire at the unpause.
   */
  releaseHeld(p: { instanceId: number; now: number; paused: boolean }): void;
  /** Rows of an instance nobody holds: ready steps, timers and approval timeouts (not leases, deadlines or compensations). */
  deleteUnleasedForInstance(instanceId: number): void;
  deleteDeadline(instanceId: number): void;
  /** The run, timer, timeout and wake rows of one node. */
  deleteForNode(instanceId: number, nodeId: string): void;
  /** The timeout and wake rows of one node (its wait ended). */
  deleteWaitRows(instanceId: number, nodeId: string): void;
  /** After the clock went back from `from` to `to`: rows due at or before `from` and not leased are due at `to`. */
  rebaseDue(p: { from: number; to: number }): void;
  /** After the clock went back by `byMs`: leases expiring after `now` move back with it. */
  shiftLeases(p: { byMs: number; now: number }): void;
  /** Every lease of `owner` expires at `now` (a stopping worker hands its work on). */
  releaseLeases(p: { owner: string; now: number }): void;
}

/** A node of a new instance ({@link NodeQueries.insertAll}): PENDING (`pendingIn` > 0), READY, or RUNNING with attempt 1. */
export interface NewNode {
  nodeId: string;
  status: 'PENDING' | 'READY' | 'RUNNING';
  attemptLimit: number;
  pendingIn: number;
}

/** Per-node state (`node_state`). */
export interface NodeQueries {
  /** A node of a new instance: PENDING (`pendingIn` > 0), READY, or RUNNING with attempt 1 started at `now`. */
  insert(p: { instanceId: number; nodeId: string; status: 'PENDING' | 'READY' | 'RUNNING'; attemptLimit: number; pendingIn: number; now: number }): void;
  /**
   * The nodes of a new instance, each as {@link insert} stores it, in as few statements as the
   * backend can (SQLite: one multi-row INSERT per 32 nodes).
   */
  insertAll(p: { instanceId: number; now: number; nodes: readonly NewNode[] }): void;
  get(instanceId: number, nodeId: string): NodeRow | undefined;
  /** Every node of an instance. */
  all(instanceId: number): NodeRow[];
  /** Open nodes (PENDING, READY, RUNNING, WAITING, RETRYING). */
  open(instanceId: number): { nodeId: string; status: NodeStatus }[];
  /** How many nodes are open, and how many of them READY or RUNNING. */
  openCounts(instanceId: number): { open: number; active: number };
  /** `$steps` of an instance: COMPLETED/COMPENSATING/COMPENSATED outputs and FAILED errors. */
  results(instanceId: number): StepResults;
  /** COMPLETED nodes that completed (a completion order), newest completion first. */
  compensable(instanceId: number): { nodeId: string; completedSeq: number }[];
  /** FAILED nodes with an open incident other than `exceptNodeId`, oldest first. */
  otherIncidents(p: { instanceId: number; exceptNodeId: string }): { nodeId: string; error: SerializedError | null; attempt: number; endedAt: number | null }[];
  /** Starts the next attempt: RUNNING, attempt + 1, started at `now`, no wait. */
  startAttempt(p: { instanceId: number; nodeId: string; now: number }): void;
  /**
   * Starts the next attempt of a READY or RETRYING node with attempts left (a fresh claim's
   * usual case, one statement); undefined when the node is in any other state.
   */
  startReadyAttempt(p: { instanceId: number; nodeId: string; now: number }): { attempt: number; attemptLimit: number } | undefined;
  /**
   * Resolves one incoming edge of a node; when it was the last unresolved one and the node is
   * PENDING, decides it in the same statement: READY (or RUNNING with its attempt started at
   * `now` when `start`) if at least `need` incoming edges were taken, else SKIPPED. A node in
   * any other state keeps it (its counters still move). Returns the row after the change.
   */
  resolveEdge(p: { instanceId: number; nodeId: string; taken: boolean; need: number; start: boolean; now: number }): { pendingIn: number; status: NodeStatus; attempt: number; attemptLimit: number } | undefined;
  /** COMPLETED with `output` at `now`, completion order `seq`; error and wait cleared. */
  complete(p: { instanceId: number; nodeId: string; output: unknown; now: number; seq: number }): void;
  /** FAILED with `error` at `now`. */
  fail(p: { instanceId: number; nodeId: string; error: SerializedError; now: number }): void;
  /** Parks a node: `status` with `wait`, and `error` when given (a retry's last failure). */
  park(p: { instanceId: number; nodeId: string; status: 'WAITING' | 'RETRYING' | 'COMPENSATING'; wait: NodeWait; error?: SerializedError }): void;
  /** Sets the wait of a FAILED node: an open `incident`, or `handled` by an error edge. */
  markFailure(p: { instanceId: number; nodeId: string; wait: { kind: 'incident' } | { kind: 'handled' } }): void;
  /** Replaces the wait of a node that keeps waiting (its due times moved: an unpause). */
  setWait(p: { instanceId: number; nodeId: string; wait: NodeWait }): void;
  /** READY again with a new attempt limit (a retry by hand); the error is cleared. */
  ready(p: { instanceId: number; nodeId: string; attemptLimit: number }): void;
  setStatus(p: { instanceId: number; nodeId: string; status: NodeStatus }): void;
  /** Takes back an attempt started at once that never ran: `status` (CANCELLED: its instance is failing; READY: it is paused), attempt − 1. */
  unstart(p: { instanceId: number; nodeId: string; status: 'CANCELLED' | 'READY' }): void;
  /**
   * A compensation is over for this node (it succeeded, or a person skipped it): COMPENSATED, its
   * wait and the failed attempts' error cleared (history keeps them).
   */
  compensated(p: { instanceId: number; nodeId: string }): void;
  /** COMPENSATING nodes (a compensation that failed) back to COMPLETED, wait and error cleared. */
  resetFailedCompensations(instanceId: number): void;
}

/** Instances. */
export interface InstanceQueries {
  /**
   * A new instance; returns its id. `input` is stored once while it equals the variables. A child
   * instance names the instance and node that started it (`parentId`, `parentNodeId`).
   */
  insert(p: {
    workflowId: number;
    status: 'PENDING' | 'RUNNING';
    variablesJson: string;
    now: number;
    deadlineAt: number | null;
    businessKey: string | null;
    parentId?: number;
    parentNodeId?: string;
    /** Its concurrency slot ({@link InstanceHead.concurrencyKey}); `held`: it waits for one. */
    concurrencyKey?: string | null;
    held?: boolean;
    /**
     * Its priority (higher first in claims); when not given, its parent's (a child runs as urgently
     * as the instance waiting for it), else 0. Its schedule rows copy it as they are inserted.
     */
    priority?: number;
    /** A test run (excluded from metrics and the default list); when not given, its parent's, else not. */
    test?: boolean;
    /** A test run's pinned results by node id, as JSON ({@link Pins}). */
    pinsJson?: string | null;
  }): number;
  get(id: number): InstanceRow | undefined;
  head(id: number): InstanceHead | undefined;
  /** The status, whether paused, whether a test run, and the variables only (what a step started at once runs with). */
  variables(id: number): { status: InstanceStatus; pausedAt: number | null; test: boolean; variables: Record<string, unknown>; pins: Pins | null } | undefined;
  /** Status (and the first start time), version + 1. */
  touch(p: { id: number; status: InstanceStatus; now: number }): void;
  /** Replaces the variables (the start variables are kept apart from then on). */
  setVariables(p: { id: number; variables: Record<string, unknown>; now: number }): void;
  /** The variables merged with `patch` as they are now (parallel branches both land). */
  mergeVariables(p: { id: number; patch: Record<string, unknown>; now: number }): void;
  setStatus(p: { id: number; status: InstanceStatus; now: number }): void;
  /** Ends it: `status`, `error` when given, ended at `now`, no suspension. */
  end(p: { id: number; status: 'COMPLETED' | 'FAILED' | 'CANCELLED'; error?: SerializedError; now: number }): void;
  /** Paused at `now` (version + 1). */
  pause(p: { id: number; now: number }): void;
  /** No longer paused; its deadline moves on by the time it was paused (the deadline clock stops while paused). Nothing when not paused. */
  unpause(p: { id: number; now: number }): void;
  /** SUSPENDED; one already SUSPENDED keeps the suspension it shows. */
  suspend(p: { id: number; suspension: Suspension; now: number }): void;
  /** COMPENSATING, ending as `endStatus`, with `error` when given; no suspension. */
  startCompensating(p: { id: number; endStatus: 'FAILED' | 'CANCELLED'; error?: SerializedError; now: number }): void;
  /** Out of SUSPENDED into `status`. */
  clearSuspension(p: { id: number; status: InstanceStatus; now: number }): void;
  /**
   * Serializes admissions to one concurrency slot across transactions running in parallel (a
   * transaction-scoped lock on PostgreSQL; nothing on SQLite, whose writers take turns anyway).
   */
  lockConcurrency(key: string): void;
  /** How many instances of `key` are admitted (not held) and not ended. */
  countAdmitted(key: string): number;
  /** The held instance of `key` to admit next (the highest priority, then the lowest id), or undefined. */
  oldestHeld(key: string): { id: number; workflowId: number; pausedAt: number | null; test: boolean } | undefined;
  /** Admits a held instance (held = 0, version + 1). */
  admit(p: { id: number; now: number }): void;
  /** Holds an instance for a concurrency slot again (PENDING, held = 1, version + 1): a retry past a full limit. */
  hold(p: { id: number; now: number }): void;
  /** A FAILED instance runs again (retry): RUNNING, no end, no error, deadline `deadlineAt`. */
  reopen(p: { id: number; deadlineAt: number | null; now: number }): void;
}

/** The append-only history and the dead letters. */
export interface HistoryQueries {
  /** Appends an event; returns its id (ids only grow). `data` is stored as JSON; omit it for none. */
  append(p: { instanceId: number | null; nodeId: string | null; type: string; at: number; attempt?: number; actor?: string; data?: unknown }): number;
  /** Records work whose retries ran out. */
  deadLetter(p: { instanceId: number; nodeId: string | null; kind: 'node' | 'compensation'; attempts: number; error: SerializedError; now: number }): void;
}

/** Where a child instance stands in its parent: the node attempt that runs it and its item. */
export interface ChildLink {
  instanceId: number;
  nodeId: string;
  attempt: number;
  index: number;
}

/** The children of `subworkflow` and `map` node attempts (`child`). */
export interface ChildQueries {
  /** One row per item of a node attempt, in order, each with its child's start variables (JSON text). */
  insertItems(p: { instanceId: number; nodeId: string; attempt: number; inputs: readonly string[]; concurrencyKeys?: readonly (string | null)[] }): void;
  /** Item `index`'s start variables (JSON text) and concurrency slot, or undefined when it started (or does not exist). */
  input(p: { instanceId: number; nodeId: string; attempt: number; index: number }): { json: string; concurrencyKey: string | null } | undefined;
  /** Item `index` started as instance `childId` (its start variables are dropped: the child keeps them). */
  started(p: { instanceId: number; nodeId: string; attempt: number; index: number; childId: number }): void;
  /** Where child instance `childId` stands in its parent, or undefined. */
  link(childId: number): ChildLink | undefined;
  /** Started children of an instance (of one node when `nodeId` is given) neither ended nor COMPENSATING, oldest first. */
  live(p: { instanceId: number; nodeId?: string }): number[];
}

/** Events sent to instances (`event`). */
export interface EventQueries {
  /** Records an event sent to an instance at `now`; returns its id. */
  insert(p: { instanceId: number; name: string; key: string | null; data: unknown; actor: string | null; now: number }): number;
  /** The oldest event of `name` sent to the instance and not consumed (with `key` when given), or undefined. */
  firstOpen(p: { instanceId: number; name: string; key: string | null }): { id: number; data: unknown } | undefined;
  /** Marks an event consumed by `nodeId` at `now`. */
  consume(p: { id: number; nodeId: string; now: number }): void;
}

/** One instance of a tree {@link RetentionQueries.trees} answers: a root or one of its descendants. */
export interface TreeMember {
  id: number;
  /** The root (no parent) the instance descends from; its own id for a root. */
  rootId: number;
  parentId: number | null;
  status: InstanceStatus;
  /** The highest history id it owns, or null when it owns none. */
  lastHistoryId: number | null;
}

/** Rows deleted (or, measured, that would be) with a set of instances, per table. */
export interface PurgeCounts {
  instances: number;
  nodeStates: number;
  schedule: number;
  deadLetters: number;
  history: number;
  events: number;
  children: number;
}

/** Ended instances, found and deleted with everything they own (retention, prune, delete by id). */
export interface RetentionQueries {
  /**
   * The highest id of an instance with `status` that ended before `endedBefore` (epoch ms), child
   * or root, of any workflow; null when none did. A pass's walk of the status stops there
   * ({@link candidates}' `upToId`): every instance past it ended later.
   */
  newestEnded(p: { status: 'COMPLETED' | 'FAILED' | 'CANCELLED'; endedBefore: number }): number | null;
  /**
   * Ids of ended root instances (no parent) with `status`, ended before `endedBefore` (epoch ms),
   * of workflow `workflow` (any version; every workflow when omitted), with `afterId` < id <=
   * `upToId`, lowest id first, at most `limit`.
   */
  candidates(p: { status: 'COMPLETED' | 'FAILED' | 'CANCELLED'; endedBefore: number; workflow?: string; afterId: number; upToId: number; limit: number }): number[];
  /** The instances `rootIds` (that exist) and all their descendants (by `parent_id`), each with its root, status and last history id. */
  trees(rootIds: readonly number[]): TreeMember[];
  /**
   * Takes the locks of `ids` without waiting (PostgreSQL: try-locks; SQLite, one writer at a time:
   * all of them). Returns the ids locked; the others are in another transaction's hands.
   */
  tryLock(ids: readonly number[]): number[];
  /** The rows `purge(ids)` would delete, counted (nothing changes). */
  measure(ids: readonly number[]): PurgeCounts;
  /**
   * Deletes the ENDED instances among `ids` with their node states, schedule rows, dead letters,
   * history, events and child rows (those they own and those that point at them). An instance of
   * `ids` that is not ended is left alone and not counted.
   */
  purge(ids: readonly number[]): PurgeCounts;
  /**
   * Gives the file's free pages back to the file system after a purge (SQLite: `PRAGMA
   * incremental_vacuum` on a file with `auto_vacuum = INCREMENTAL`, nothing on other files;
   * PostgreSQL: nothing, autovacuum does it).
   */
  reclaim(): void;
  /** Names of every workflow saved (deleted ones too), each with its latest version's definition (JSON text). */
  workflowDefinitions(): { name: string; dslJson: string }[];
}

/** Every family, inside one transaction. */
export interface Queries {
  readonly schedule: ScheduleQueries;
  readonly nodes: NodeQueries;
  readonly instances: InstanceQueries;
  readonly history: HistoryQueries;
  readonly children: ChildQueries;
  readonly events: EventQueries;
  readonly retention: RetentionQueries;
  /**
   * Runs `fn` in a savepoint nested in the transaction: when it throws, its changes are undone
   * and the error is rethrown; the transaction goes on (unless the error is a storage failure).
   */
  savepoint<T>(fn: () => T): T;
  /**
   * Whether `err` is the storage failing rather than one change being refused — a full disk,
   * damaged pages, a lost lock: it dooms the whole transaction, so no savepoint can contain it and
   * the caller must let the transaction fail (and try it again later).
   */
  isStorageFailure(err: unknown): boolean;
}
