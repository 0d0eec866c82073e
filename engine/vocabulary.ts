/**
 * The domain's vocabulary, defined once: instance and node statuses, what a node waits for,
 * schedule row kinds, and the stable error codes.
 *
 * A pure module (no imports): the engine, the storage implementations, the API contract, the CLI
 * and the renderer all import it, so no list is copied anywhere and none needs checking against
 * another (DBOS Transact's `StatusString`, `as const` with a doc line a member).
 */

// ---------------------------------------------------------------- instance statuses

/**
 * Instance statuses (DESIGN.md section 2).
 *
 * - `PENDING`: created, no node has started yet;
 * - `RUNNING`: a node is ready or running;
 * - `WAITING`: every open node waits (a timer, a retry's backoff, an approval);
 * - `SUSPENDED`: waits for a person's resume (an incident, or a compensation that failed);
 * - `COMPENSATING`: failing or cancelling: running nodes finish, then compensations run in
 *   reverse completion order;
 * - `COMPLETED`, `FAILED`, `CANCELLED`: ended ({@link TERMINAL_STATUSES}).
 */
export const INSTANCE_STATUSES = ['PENDING', 'RUNNING', 'WAITING', 'SUSPENDED', 'COMPENSATING', 'COMPLETED', 'FAILED', 'CANCELLED'] as const;
/** One of {@link INSTANCE_STATUSES}. */
export type InstanceStatus = (typeof INSTANCE_STATUSES)[number];

/** Instance statuses after which nothing runs. */
export const TERMINAL_STATUSES: ReadonlySet<string> = new Set<InstanceStatus>(['COMPLETED', 'FAILED', 'CANCELLED']);

/** Whether `status` is an ended instance's ({@link TERMINAL_STATUSES}). */
export function isTerminal(status: string): boolean {
  return TERMINAL_STATUSES.has(status);
}

/** Statuses of an instance that is failing or ended: no new node may start in it. */
export function startsNothing(status: string): boolean {
  return status === 'COMPENSATING' || TERMINAL_STATUSES.has(status);
}

// ---------------------------------------------------------------- node statuses

/**
 * Node states (one `node_state` row per node of an instance).
 *
 * - `PENDING`: some incoming edge is unresolved;
 * - `READY`: due to run (a `run` schedule row waits for a claim);
 * - `RUNNING`: an attempt runs, leased to a worker;
 * - `WAITING`: parked on a timer or an approval;
 * - `RETRYING`: an attempt failed; the next one waits for its backoff;
 * - `COMPLETED`, `FAILED`, `SKIPPED` (no incoming edge was taken);
 * - `COMPENSATING`, `COMPENSATED`: its compensation is under way / done;
 * - `CANCELLED`: never ran to an end (cancel, or the instance failed before it started).
 */
export const NODE_STATUSES = [
  'PENDING',
  'READY',
  'RUNNING',
  'WAITING',
  'RETRYING',
  'COMPLETED',
  'FAILED',
  'SKIPPED',
  'COMPENSATING',
  'COMPENSATED',
  'CANCELLED',
] as const;
/** One of {@link NODE_STATUSES}. */
export type NodeStatus = (typeof NODE_STATUSES)[number];

/** Node states that still owe work: the instance is not done while one exists. */
export const OPEN_NODE_STATUSES: readonly NodeStatus[] = ['PENDING', 'READY', 'RUNNING', 'WAITING', 'RETRYING'];

// ---------------------------------------------------------------- waits

/**
 * What an instance waits for, in lists and filters: `timer` (a delay), `approval` (a person's
 * decision), `retry` (a failed attempt's backoff), `person` (SUSPENDED: a person must resume it),
 * `event` (an `event` node: something sent to it), `children` (a `subworkflow` or `map` node:
 * its child instances), `concurrency` (PENDING beyond its workflow's concurrency limit: a slot).
 */
export const WAITING_FOR_VALUES = ['timer', 'approval', 'retry', 'person', 'event', 'children', 'concurrency'] as const;
/** One of {@link WAITING_FOR_VALUES}. */
export type WaitingFor = (typeof WAITING_FOR_VALUES)[number];

/**
 * Kinds of a node's `wait` (stored as `node_state.wait_json`, `{ kind, … }`):
 * - `timer`: a delay, `{ until, output? }`; `approval`: `{ prompt?, timeoutAt? }`;
 * - `retry`: the next attempt's backoff, `{ until }`;
 * - `incident`: a FAILED node with onFailure=suspend, waiting for a person's resume;
 * - `compensation`: a compensation that failed after its retries (the instance is SUSPENDED);
 * - `handled`: a FAILED node whose failure an error edge handled: it waits for nothing, and a
 *   retry of the instance leaves it alone (the API shows no wait for it);
 * - `event`: an `event` node waiting for an event sent to the instance, `{ name, key?, timeoutAt?,
 *   received? }` (`received`: the event it consumed, `{ eventId, data }`, once one came);
 * - `children`: a `subworkflow` or `map` node waiting for its child instances, with its counters
 *   (engine/store/queries.ts `ChildrenWait`).
 */
export const NODE_WAIT_KINDS = ['timer', 'approval', 'retry', 'incident', 'compensation', 'handled', 'event', 'children'] as const;
/** One of {@link NODE_WAIT_KINDS}. */
export type NodeWaitKind = (typeof NODE_WAIT_KINDS)[number];

/**
 * The range of an instance's priority: an integer, higher first when workers claim work (due
 * rows of a higher priority before older rows of a lower one, as pg-boss orders jobs); 0 by
 * default. A child instance has its parent's.
 */
export const PRIORITY_RANGE = { min: -1_000_000, max: 1_000_000 } as const;

/**
 * Kinds of `schedule` rows, the single work queue (DESIGN.md section 2): `run` (a ready step or a
 * retry), `timer` (a delay), `timeout` (a wait's time limit: an approval's, an event's, a child
 * instance's), `deadline` (the instance's), `compensate` (a compensation step), `wake` (a WAITING
 * node's wait is over — its event came, its child instances ended — and its result is to be
 * settled).
 */
export const SCHEDULE_KINDS = ['run', 'timer', 'timeout', 'deadline', 'compensate', 'wake'] as const;
/** One of {@link SCHEDULE_KINDS}. */
export type ScheduleKind = (typeof SCHEDULE_KINDS)[number];

// ---------------------------------------------------------------- error codes

/**
 * Stable error codes of the engine. Tests and UIs match on these, never on messages.
 *
 * Each is user-fixable, transient or unexpected by default (engine/errors.ts `defaultKind`).
 */
export const ErrorCodes = {
  /** A workflow definition failed validation (`details` lists every problem). */
  INVALID_WORKFLOW: 'INVALID_WORKFLOW',
  /** A request, a command-line argument or a node's rendered config is invalid; the field is named. */
  INVALID_INPUT: 'INVALID_INPUT',
  /** Start or resume variables are not an object, fail `inputSchema`, or are too large. */
  INVALID_VARIABLES: 'INVALID_VARIABLES',
  /** No such workflow, version, instance, node or file. */
  NOT_FOUND: 'NOT_FOUND',
  /** A version check failed: another writer changed it first (reload and try again). */
  CONFLICT: 'CONFLICT',
  /** The action does not apply to the instance's or node's state now. */
  INVALID_STATE: 'INVALID_STATE',
  /** The file is not a Runnel database, or is damaged. */
  DATABASE_CORRUPT: 'DATABASE_CORRUPT',
  /** The write lock stayed taken by other processes past the write path's patience. */
  DATABASE_BUSY: 'DATABASE_BUSY',
  /** The database server cannot be reached, or refused the connection (its address, user or password); the password is never shown. */
  DATABASE_UNAVAILABLE: 'DATABASE_UNAVAILABLE',
  /** The disk is full (or the database reached its size limit): nothing was written; work resumes when space comes back. */
  DATABASE_FULL: 'DATABASE_FULL',
  /** The file's schema is newer than this build. */
  DATABASE_NEWER: 'DATABASE_NEWER',
  /** The database is open read-only (the file or its directory is not writable) and a change was asked for. */
  DATABASE_READONLY: 'DATABASE_READONLY',
  /** An attempt, a wait or an operation took longer than its limit. */
  TIMEOUT: 'TIMEOUT',
  /** Aborted: the instance was cancelled, or the worker is stopping. */
  CANCELLED: 'CANCELLED',
  /** A result or the variables exceed the size or nesting limit (not retryable). */
  RESULT_TOO_LARGE: 'RESULT_TOO_LARGE',
  /** A result holds what the engine does not keep: a `__proto__` key (not retryable). */
  INVALID_RESULT: 'INVALID_RESULT',
  /** A JSONata expression or template failed to evaluate. */
  EXPRESSION_ERROR: 'EXPRESSION_ERROR',
  /** A node handler threw (a plain Error becomes this, retryable). */
  HANDLER_ERROR: 'HANDLER_ERROR',
  /** An http node's request failed or answered an unexpected status. */
  HTTP_ERROR: 'HTTP_ERROR',
  /** A script threw, ran out of time or memory, or does not compile. */
  SCRIPT_ERROR: 'SCRIPT_ERROR',
  /** The attempt's lease was lost (its worker died, or another took it over). */
  LEASE_LOST: 'LEASE_LOST',
  /** The instance passed its `deadlineMs` (not retryable). */
  DEADLINE_EXCEEDED: 'DEADLINE_EXCEEDED',
  /** A person rejected an approval. */
  APPROVAL_REJECTED: 'APPROVAL_REJECTED',
  /** A child instance of a `subworkflow` node failed or was cancelled, or more of a `map` node's than it tolerates (`details` names them). */
  CHILD_FAILED: 'CHILD_FAILED',
  /** A bug or a broken environment. */
  INTERNAL: 'INTERNAL',
} as const;

/** One of {@link ErrorCodes}. */
export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

/**
 * Error codes only hosts produce, on top of {@link ErrorCodes}:
 * - `BAD_REQUEST`: the payload failed the channel's input schema (`details.issues` names fields);
 * - `UNKNOWN_CHANNEL`: no such channel;
 * - `UNAUTHORIZED`: missing or wrong token (HTTP 401);
 * - `FORBIDDEN`: wrong Host / Origin, or an untrusted IPC sender (HTTP 403);
 * - `PAYLOAD_TOO_LARGE`: the body is above the host's limit (HTTP 413);
 * - `NETWORK_ERROR`: a client could not reach its host (set by clients, never by a host).
 */
export const HostErrorCodes = {
  BAD_REQUEST: 'BAD_REQUEST',
  UNKNOWN_CHANNEL: 'UNKNOWN_CHANNEL',
  UNAUTHORIZED: 'UNAUTHORIZED',
  FORBIDDEN: 'FORBIDDEN',
  PAYLOAD_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  NETWORK_ERROR: 'NETWORK_ERROR',
} as const;

/**
 * Control characters (C0, DEL, C1), the line and paragraph separators and the bidirectional
 * controls: what names and keys may not hold (a terminal line printing one would be driven, split
 * or reordered). One source for the API's fields, the DSL's names and the event node's key.
 */
// eslint-disable-next-line no-control-regex -- control characters are what it finds
export const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

/** A UTF-16 surrogate without its pair: not a Unicode character, and stored differently by each backend. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Why `text` cannot be kept as a text column alike on both backends, or undefined when it can:
 * PostgreSQL's text holds no U+0000 (SQLite's does), and a lone surrogate is stored as U+FFFD by
 * one and as bytes by the other (a signal by that key would then not find it). For user text
 * stored in a column of its own: business keys, concurrency keys.
 */
export function unstorableText(text: string): string | undefined {
  if (text.includes('\u0000')) return 'must not hold U+0000 (NUL)';
  if (LONE_SURROGATE.test(text)) return 'must be well-formed Unicode (it holds a lone surrogate)';
  return undefined;
}
