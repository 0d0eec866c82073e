/**
 * The storage port: everything the runtime asks of a database, as an interface a backend
 * implements: SQLite (engine/db/sqlite-storage.ts) and PostgreSQL (engine/db/postgres/storage.ts,
 * over a sync bridge to a thread that waits on the driver).
 *
 * Two kinds of operation, all Promise-returning so that a networked database can implement them:
 * - `write(fn)`: one write transaction, serialized per process, in which `fn` runs the state
 *   machine's transitions synchronously over the backend's {@link Queries}. SQLite keeps
 *   better-sqlite3 synchronous inside it (BEGIN IMMEDIATE … COMMIT with nothing awaited in
 *   between), so the hot path pays one resolved promise per loop turn. A backend whose driver is
 *   asynchronous gives `fn` queries that answer synchronously — over a working set it loaded at
 *   the start of the transaction, or from a thread that waits on the driver — and stays behind
 *   the same interface.
 * - named reads ({@link ReadModel}): what the API, the CLI and the worker's idle checks read,
 *   parsed at the backend's edge (API shapes, camelCase, JSON decoded).
 *
 * The runtime's named operations (claim due work and commit a turn's outcomes, start instances,
 * the manual actions, workflow management) are each one `write` of one state-machine function
 * (engine/runtime/state-machine/), so every backend runs the same transitions.
 */
import type { ApprovalItem, ChangeConsumer, ChangeEntry, HistoryEvent, InstanceDetail, InstanceListItem, Metrics, WorkflowSummary } from '../api/contract';
import type { Queries, Suspension } from './queries';
import type { StatePatch, StateQueries } from './history-state';
import type { WaitingFor } from '../vocabulary';
import type { SerializedError } from '../errors';

/** An instance with its node states, as `instance:get` answers, its suspension typed. */
export type InstanceView = Omit<InstanceDetail, 'suspension'> & { suspension?: Suspension };

/** A saved workflow version, as stored. */
export interface WorkflowVersionRow {
  id: number;
  name: string;
  version: number;
  /** The definition as saved (DSL format 1 JSON text, `ui` included). */
  dslJson: string;
  /** Hash of the definition without `ui` (engine/dsl/export.ts definitionHash). */
  definitionHash: string;
  createdAt: number;
}

/** One `node` row saved with a new version (what queries need of a node without parsing the definition). */
export interface WorkflowNodeRow {
  nodeId: string;
  type: string;
  name: string | null;
  retryJson: string;
  timeoutMs: number | null;
  scopeJson: string;
  onFailure: 'fail' | 'suspend';
  incoming: number;
}

/** Workflow versions inside a write transaction. */
export interface WorkflowQueries {
  /** The latest live (not deleted) version of `name`. */
  latest(name: string): WorkflowVersionRow | undefined;
  /** Live versions of `name`, newest first. */
  versions(name: string): WorkflowVersionRow[];
  /** The highest version ever saved under `name`, deleted ones included (0 when none). */
  maxVersion(name: string): number;
  /** Whether any version (deleted or not) has `name`. */
  nameUsed(name: string): boolean;
  /** Live instances of the live versions of `name`. */
  liveInstances(name: string): number;
  /** Replaces a version's stored definition (only its `ui` may differ). */
  updateDsl(id: number, dslJson: string): void;
  /** Moves one version to another name, with its definition and hash rewritten for it. */
  renameVersion(p: { id: number; name: string; dslJson: string; hash: string }): void;
  /** Marks every live version of `name` deleted at `now`; returns how many. */
  markDeleted(name: string, now: number): number;
  /** Inserts version `version` of `name` with its node rows; returns the new workflow id. */
  insert(p: { name: string; version: number; dslJson: string; hash: string; now: number; nodes: WorkflowNodeRow[] }): number;
  /** Any version by id (deleted ones too: their instances still run on them). */
  byId(id: number): WorkflowVersionRow | undefined;
}

/**
 * The change feed's named consumers inside a write transaction (table `change_consumer`).
 * Cursors are history ids (see {@link ReadModel.changes}).
 */
export interface ConsumerQueries {
  /** Consumer `name`, or undefined when it is not registered. */
  get(name: string): ChangeConsumer | undefined;
  /**
   * Records that `name` has read through `cursor`, registering it when new. A cursor below the
   * stored one leaves it as it is (acknowledging is monotonic: a repeated or late ack never moves
   * a consumer back). Answers the consumer as stored.
   */
  ack(p: { name: string; cursor: number; now: number }): ChangeConsumer;
  /** Unregisters `name` (retention no longer waits for it); whether it was registered. */
  remove(name: string): boolean;
  /**
   * The lowest cursor of any registered consumer, or undefined when none is registered: retention
   * must keep every history row whose id is above it.
   */
  lowestConsumerCursor(): number | undefined;
  /** The highest history id handed out (0 when none yet): deleting the newest rows does not lower it, and no later row takes an id at or below it. */
  head(): number;
}

/** A live schedule's state (table `workflow_schedule`, migration 12 / PostgreSQL 8). Times are epoch ms. */
export interface WorkflowScheduleRow {
  workflow: string;
  scheduleId: string;
  /** The expression and time zone of the latest version's schedule. */
  cron: string;
  timezone: string | null;
  paused: boolean;
  /** The next due time not yet fired (null: the expression has no time to come). */
  nextDueAt: number | null;
  /** The due time it last started an instance for (a trigger by hand: the time of the trigger), or null. */
  lastDueAt: number | null;
  /** The instance it started last, or null. */
  lastInstanceId: number | null;
  updatedAt: number;
}

/** The live schedules inside a write transaction (engine/runtime/schedules.ts drives them). */
export interface WorkflowScheduleQueries {
  /** Every row of `workflow`, by schedule id. */
  forWorkflow(workflow: string): WorkflowScheduleRow[];
  get(workflow: string, scheduleId: string): WorkflowScheduleRow | undefined;
  /** Inserts a row, or replaces the expression, time zone, paused flag and next due time of an existing one. */
  upsert(p: { workflow: string; scheduleId: string; cron: string; timezone: string | null; paused: boolean; nextDueAt: number | null; now: number }): void;
  remove(workflow: string, scheduleId: string): void;
  /** Every row of `workflow` (a deleted workflow); how many. */
  removeWorkflow(workflow: string): number;
  /** Moves the rows of `from` to `to` (a renamed workflow). */
  renameWorkflow(from: string, to: string): void;
  /**
   * Claims due time `expectedNextDueAt` of an unpaused row: its next due time becomes `nextDueAt`,
   * only while it still is `expectedNextDueAt`. False when another worker claimed it first (or it
   * was paused or redeployed meanwhile): then the caller starts nothing.
   */
  claim(p: { workflow: string; scheduleId: string; expectedNextDueAt: number; nextDueAt: number | null; now: number }): boolean;
  /** Records that due time `dueAt` started instance `instanceId`. */
  fired(p: { workflow: string; scheduleId: string; dueAt: number; instanceId: number; now: number }): void;
  /** Sets the paused flag and the next due time. */
  setPaused(p: { workflow: string; scheduleId: string; paused: boolean; nextDueAt: number | null; now: number }): void;
}

/** The queries of a write transaction, workflow versions, feed consumers and schedules included. */
export interface WriteQueries extends Queries {
  readonly workflows: WorkflowQueries;
  readonly consumers: ConsumerQueries;
  /** Time travel's record (engine/store/history-state.ts): backends' `write` uses it; transitions never do. */
  readonly states: StateQueries;
  readonly workflowSchedules: WorkflowScheduleQueries;
}

/** The change feed's part of the read model (engine/db/queries/changes.ts, engine/db/postgres/changes.ts). */
export type FeedReads = 'changes' | 'changeConsumers';

/** The schedules' part of the read model (engine/db/queries/workflow-schedules.ts and its PostgreSQL twin). */
export type ScheduleReads = 'workflowSchedules' | 'nextScheduleDue' | 'dueSchedules';

/** What {@link ReadModel.changes} answers. */
export interface ChangePage {
  /** Entries with after < cursor <= `cursor` (below), oldest first, at most `limit`. */
  entries: ChangeEntry[];
  /**
   * Where the next read resumes (its `after`): the last entry's cursor when the page is full,
   * else the feed's safe head, so a filtered read moves past entries it did not match. Never
   * below the `after` given.
   */
  cursor: number;
  /** The feed's safe head: every entry at or below it has committed, and no later commit gets a lower cursor. */
  head: number;
}

/** Time travel's part of the read model (engine/db/queries/history-state.ts, engine/db/postgres/history-state.ts). */
export type TimeTravelReads = 'stateTimeline';

/** What {@link ReadModel.stateTimeline} answers. */
export interface StateTimeline {
  /** The instance's history: its first and last entry (ids and times, epoch ms) and how many; nulls and 0 when it has none. */
  range: { firstId: number | null; lastId: number | null; firstAt: number | null; lastAt: number | null; entries: number };
  /** The entry asked for: by id, or the last one at or before the time; absent when there is none. */
  entry?: HistoryEvent;
  /** The state patches up to that entry, oldest first (engine/store/history-state.ts); absent with `entry`. */
  patches?: StatePatch[];
  /** The entry's place in the instance's history, 1-based; absent with `entry`. */
  position?: number;
}

/** Filter of instance lists, counts and bulk actions. Times are epoch ms, inclusive. */
export interface InstanceFilter {
  status?: string[];
  workflow?: string;
  workflowVersion?: number;
  createdFrom?: number;
  createdTo?: number;
  /** Matches the id, the business key, the error or the suspension text. */
  text?: string;
  /** Only instances waiting for this. */
  waitingFor?: WaitingFor;
  /** Only the child instances of this instance (started by its `subworkflow` and `map` nodes). */
  parentId?: number;
  /** Only instances with exactly this business key. */
  businessKey?: string;
  /** Only paused instances (true), or only those not paused (false). */
  paused?: boolean;
  /** Only instances whose current nodes include this node id. */
  node?: string;
  /**
   * Only test runs (true) or only real ones (false). Not given: real ones only, unless the filter
   * names `ids` or a `parentId` (then both: the rows asked for, a test run's children).
   */
  test?: boolean;
  /** Only these instance ids (a live view refreshing the rows it shows). */
  ids?: number[];
  /** Keyset paging: rows with id < beforeId (lists are newest first). */
  beforeId?: number;
  /** Rows with id > afterId: what is new since a page was loaded (oldest first). */
  afterId?: number;
  /** Only rows with id <= upToId (a bulk action touches what its preview counted, not newer rows). */
  upToId?: number;
  /** Page size, 1–1000 (default 50). */
  limit?: number;
}

/** A child instance of a node attempt as its parent's result reads it (`status` null: never started). */
export interface ChildResult {
  index: number;
  childId: number | null;
  status: string | null;
  /** Its final variables (while it runs: as they are). */
  variables: Record<string, unknown> | null;
  /** Its start variables. */
  input: Record<string, unknown> | null;
  error: SerializedError | null;
}

/** An approval waiting for a person, before its node's config (assignee, form) is looked up. */
export type ApprovalRow = Omit<ApprovalItem, 'assignee' | 'form'> & { workflowId: number };

/** One time bucket of {@link ReadModel.series}: counts and duration percentiles (ms). */
export interface SeriesRow {
  bucket: number;
  started: number;
  completed: number;
  failed: number;
  cancelled: number;
  p50Ms: number | null;
  p99Ms: number | null;
}

/** The reads the API, the CLI and the worker need, parsed at the backend's edge. */
export interface ReadModel {
  /** An instance with its node states (the API's `instance:get` shape), or undefined. */
  instance(id: number): Promise<InstanceView | undefined>;
  /** The children of a node attempt (`subworkflow`, `map`), in item order, each with its instance's status, variables and error. */
  childResults(instanceId: number, nodeId: string, attempt: number): Promise<ChildResult[]>;
  /** An instance's status and version only (what an action answers with), or undefined. */
  instanceState(id: number): Promise<{ id: number; status: string; version: number } | undefined>;
  /** Instances matching `filter`, newest first (oldest first with only `afterId`), with "why is it stuck". */
  listInstances(filter: InstanceFilter): Promise<InstanceListItem[]>;
  /** Instance count per status under `filter` (status and paging ignored); statuses with none are absent. */
  countByStatus(filter: InstanceFilter): Promise<Record<string, number>>;
  /** Ids of instances matching `filter` whose status is one of `eligible`, oldest first, at most `limit`; and how many in all. */
  matchInstances(filter: InstanceFilter, eligible: readonly string[], limit: number): Promise<{ ids: number[]; total: number }>;
  /** The highest instance id (0 when none). */
  maxInstanceId(): Promise<number>;
  /**
   * Instances by age at `now` (epoch ms): live ones by the time since they were created, ended
   * ones by the time since they ended (what retention reads). Always the four buckets, in order.
   */
  instanceAges(now: number): Promise<InstanceAgeRow[]>;
  /**
   * The change feed: committed history events with id > `after`, oldest first, at most `limit`
   * (1–10,000), only those of workflow `workflow` (by name) when given. Only entries at or below
   * the feed's safe head are answered: no transaction still running can commit an entry below
   * it, so resuming after any answered cursor skips nothing (SQLite: ids are assigned in the one
   * write transaction at a time; PostgreSQL: see engine/db/postgres/changes.ts).
   */
  changes(o: { after: number; limit: number; workflow?: string }): Promise<ChangePage>;
  /** The registered consumers of the change feed, by name. */
  changeConsumers(): Promise<ChangeConsumer[]>;
  /**
   * Time travel: the history entry of instance `instanceId` that `at` names (a history id of that
   * instance, or the last entry at or before epoch ms `atMs`) with the state patches up to it,
   * and the instance's history range.
   */
  stateTimeline(instanceId: number, at: { historyId: number } | { atMs: number }): Promise<StateTimeline>;
  /** History events of an instance after `afterId`, oldest first, at most `limit`. */
  history(id: number, afterId: number, limit: number): Promise<HistoryEvent[]>;
  /** Approvals waiting for a person, the longest-waiting first, at most `limit`; and how many in all. */
  approvals(o: { workflow?: string; limit?: number }): Promise<{ rows: ApprovalRow[]; total: number }>;
  /** The live instance that has waited longest (WAITING or SUSPENDED, started first), or null. */
  oldestWaiting(): Promise<InstanceListItem | null>;
  /** Counts by status, queue depth, durations, failures, dead letters (the dashboard). */
  metrics(): Promise<Omit<Metrics, 'oldestWaiting'>>;
  /** Instances ended (and started) in [from, to) per bucket of `bucketMs`; buckets without any are absent. */
  series(from: number, to: number, bucketMs: number, workflow?: string): Promise<SeriesRow[]>;
  /** Every live workflow with its latest version and instance counts. */
  workflowSummaries(): Promise<WorkflowSummary[]>;
  /** A live workflow version: the latest when `version` is omitted. */
  workflowVersion(name: string, version?: number): Promise<WorkflowVersionRow | undefined>;
  /** Live versions of a workflow, newest first. */
  workflowVersions(name: string): Promise<WorkflowVersionRow[]>;
  /** Any workflow version by id (deleted ones too). */
  workflowById(id: number): Promise<WorkflowVersionRow | undefined>;
  /** The earliest due time in the work queue, or null when it is empty. */
  nextDue(): Promise<number | null>;
  /** The live schedules (of `workflow` only, when given), by workflow then schedule id. */
  workflowSchedules(workflow?: string): Promise<WorkflowScheduleRow[]>;
  /** The earliest next due time of an unpaused schedule, or null (one index seek). */
  nextScheduleDue(): Promise<number | null>;
  /** Unpaused schedules due at `now`, earliest first, at most `limit`. */
  dueSchedules(now: number, limit: number): Promise<WorkflowScheduleRow[]>;
  /**
   * A workflow version with work, other than those of `except`: a run, timer or compensation row,
   * or any row due at `now`; undefined when none. The first row found answers (no walk over the
   * whole queue: an idle check polls it while a worker runs).
   */
  workflowWithWork(now: number, except: readonly number[]): Promise<number | undefined>;
}

/** The age buckets of {@link ReadModel.instanceAges}: under a day, a week, 30 days, and older. */
export const AGE_BUCKETS = ['day', 'week', 'month', 'older'] as const;

/** Ages bounding {@link AGE_BUCKETS} (the last is open), ms. */
export const AGE_BOUNDS_MS = [86_400_000, 7 * 86_400_000, 30 * 86_400_000] as const;

/** One bucket of {@link ReadModel.instanceAges}. */
export interface InstanceAgeRow {
  age: (typeof AGE_BUCKETS)[number];
  live: number;
  ended: number;
}

/** Folds `(bucket index, live, ended)` rows into the four {@link AGE_BUCKETS} (absent ones zero). */
export function toAgeRows(rows: readonly { bucket: number; live: number; ended: number }[]): InstanceAgeRow[] {
  const out = AGE_BUCKETS.map((age) => ({ age, live: 0, ended: 0 }));
  for (const r of rows) {
    const b = out[Number(r.bucket)];
    if (b) {
      b.live += Number(r.live);
      b.ended += Number(r.ended);
    }
  }
  return out;
}

/** The SQL of the bucket of an instance row (parameters: the three bounds as epoch ms, newest first). */
export const AGE_BUCKET_SQL = (p: [string, string, string]): string =>
  `CASE WHEN coalesce(ended_at, created_at) >= ${p[0]} THEN 0 WHEN coalesce(ended_at, created_at) >= ${p[1]} THEN 1 WHEN coalesce(ended_at, created_at) >= ${p[2]} THEN 2 ELSE 3 END`;

/** The size and settings of a SQLite file (see {@link SqliteFileAccess.stats}). */
export interface SqliteFileStats {
  /** The database file's and its WAL's sizes, bytes. */
  bytes: number;
  walBytes: number;
  pageSize: number;
  pageCount: number;
  /** Pages free inside the file (given back by an incremental vacuum when `autoVacuum` is incremental). */
  freePages: number;
  autoVacuum: 'none' | 'full' | 'incremental';
}

/** What only a SQLite file has: its path and pages (absent on PostgreSQL). */
export interface SqliteFileAccess {
  /** The file, absolute. */
  readonly path: string;
  /** better-sqlite3's `nativeBinding` the file was opened with (the desktop app's addon), for helper connections. */
  readonly nativeBinding?: string | undefined;
  /** Sizes and page counts (cheap: file stats and header pragmas). */
  stats(): SqliteFileStats;
  /**
   * Gives up to `pages` free pages back to the file system in one write transaction (`PRAGMA
   * incremental_vacuum(n)`); resolves how many pages are still free after it.
   */
  incrementalVacuum(pages: number): Promise<number>;
}

/** How the database itself is doing (what `metrics:get` and the status bar show). */
export interface StorageHealth {
  /**
   * The write-ahead log's size and the size it is kept to, bytes (SQLite; absent elsewhere). A
   * WAL past its bound means a reader holds old frames (a long read transaction, often in another
   * process): checkpoints cannot reset it until that reader lets go.
   */
  wal?: { bytes: number; limitBytes: number };
  /**
   * WAL checkpoints this process ran off the loop's thread that copied frames, since it started:
   * how many, their time in all and the last one's, ms (SQLite's upkeep thread; absent where unknown).
   */
  checkpoints?: { count: number; totalMs: number; lastMs: number };
}

/** Lease renewal kept alive off the loop's thread (see {@link StorageBackend.keepLeases}). */
export interface LeaseKeeper {
  /** Tells the keeper the loop is alive (cheap: called every loop turn). */
  alive(): void;
  /** Stops renewing; resolves when the keeper has stopped. */
  stop(): Promise<void>;
}

/** A database the engine runs on. */
export interface StorageBackend {
  /** Where it is, for messages (a file path, or a connection URL without its password). */
  readonly location: string;
  /** Opened read-only: `write` rejects with DATABASE_READONLY. */
  readonly readonly: boolean;
  /**
   * Runs `fn` in one write transaction, serialized with every other write of this process, and
   * resolves with its result once committed. `fn` must be synchronous; when it throws, nothing
   * it did is kept and the promise rejects with its error. A backend may roll back and run `fn`
   * again within one call (PostgreSQL on a serialization failure, a deadlock or a unique
   * violation raised by a race): whatever `fn` does outside the queries must be safe to repeat,
   * with only the last run's effects counted.
   *
   * @throws EngineError DATABASE_BUSY (the write lock stayed taken past the backend's patience), DATABASE_READONLY.
   */
  write<T>(fn: (q: WriteQueries) => T): Promise<T>;
  /** Named reads. */
  readonly read: ReadModel;
  /**
   * Renews `owner`'s leases every `leaseMs / 3` from outside the loop's thread while the loop
   * said it was alive within the last `stallMs`, so a busy loop thread never loses its steps to
   * another worker, and a hung one does after `stallMs`.
   */
  keepLeases(o: { owner: string; leaseMs: number; stallMs: number }): LeaseKeeper;
  /** How the database itself is doing (cheap: no query). */
  health(): StorageHealth;
  /** The SQLite file (absent on PostgreSQL). */
  readonly file?: SqliteFileAccess;
  /** Hands `owner`'s leases on at once (a stopping worker): they expire at `now`. */
  releaseLeases(owner: string, now: number): Promise<void>;
  /** Background upkeep while the worker loop runs (SQLite: WAL checkpoints on a thread of their own). */
  startUpkeep(): void;
  stopUpkeep(): Promise<void>;
  /**
   * Calls `onChange` after commits made by OTHER connections (another process's deploy, another
   * engine on the same database), at most once per `intervalMs`; never for this backend's own
   * writes. Returns the function that stops watching.
   */
  watchChanges(onChange: () => void, intervalMs: number): () => void;
  /** Closes the database (after a last checkpoint where that applies). */
  close(): Promise<void>;
}
