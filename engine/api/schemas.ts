/**
 * The entity schemas of the API contract: the status values and the shapes handlers return
 * (workflow summaries, instances, node states, history, metrics, approvals, bulk results, …),
 * each with its type. contract.ts re-exports every name here: importing them from contract.ts
 * stays the way in.
 *
 * Imported by the renderer through contract.ts: zod and engine/vocabulary.ts only, never Node or
 * engine runtime code (the lint fence of contract.ts covers this file).
 */
import { z } from 'zod';
import {
  INSTANCE_STATUSES,
  NODE_STATUSES,
  WAITING_FOR_VALUES,
  type InstanceStatus,
  type NodeStatus,
  type WaitingFor,
} from '../vocabulary';
import { epochMs, LIMITS, name, nodeId, rowId, storableText, version } from './fields';

// ---------------------------------------------------------------- statuses

/** Instance statuses (engine/vocabulary.ts). */
export const INSTANCE_STATUS_VALUES = INSTANCE_STATUSES;
/** One of {@link INSTANCE_STATUS_VALUES}. */
export type InstanceStatusValue = InstanceStatus;

/** Node statuses (engine/vocabulary.ts). */
export const NODE_STATUS_VALUES = NODE_STATUSES;
/** One of {@link NODE_STATUS_VALUES}. */
export type NodeStatusValue = NodeStatus;

export { WAITING_FOR_VALUES };
/** One of {@link WAITING_FOR_VALUES}. */
export type WaitingForValue = WaitingFor;

// ---------------------------------------------------------------- entities

/** One validation problem (engine/dsl `Problem`): a code, a one-line message, where it is. */
export const ProblemSchema = z.object({
  code: z.string(),
  message: z.string(),
  nodeId: z.string().optional(),
  edgeId: z.string().optional(),
  path: z.array(z.union([z.string(), z.number()])),
});
/** See {@link ProblemSchema}. */
export type Problem = z.output<typeof ProblemSchema>;

/** A workflow in lists: its latest version and instance counts. */
export const WorkflowSummarySchema = z.object({
  name: z.string(),
  latestVersion: z.number(),
  latestId: z.number(),
  versions: z.number(),
  /** When the latest version was saved, epoch ms. */
  updatedAt: z.number(),
  instances: z.number(),
  /** Instances not yet COMPLETED, FAILED or CANCELLED. */
  liveInstances: z.number(),
});
/** See {@link WorkflowSummarySchema}. */
export type WorkflowSummary = z.output<typeof WorkflowSummarySchema>;

/** A node type as the palette and property forms see it. */
export const NodeTypeSchema = z.object({
  type: z.string(),
  title: z.string(),
  description: z.string(),
  /** An icon name the renderer maps to an icon (`globe`, `code`, `clock`, `check`, …). */
  icon: z.string(),
  /** Palette group (`Core`, `Integration`, `Human`, …). */
  group: z.string(),
  /** JSON Schema (draft 2020-12, input mode) of the node's `config`. */
  configJsonSchema: z.record(z.string(), z.unknown()),
  hasCompensate: z.boolean(),
  /**
   * Whether `{{ … }}` in the type's string config values are templates (false for `script`), so a
   * designer validating with the engine's validator checks them the same way. Absent: true.
   */
  templates: z.boolean().optional(),
});
/** See {@link NodeTypeSchema}. */
export type NodeTypeInfo = z.output<typeof NodeTypeSchema>;

/** An instance in lists. Times are epoch ms. */
export const InstanceSummarySchema = z.object({
  id: z.number(),
  workflow: z.string(),
  workflowVersion: z.number(),
  status: z.string(),
  businessKey: z.string().nullable(),
  createdAt: z.number(),
  startedAt: z.number().nullable(),
  endedAt: z.number().nullable(),
  /** Optimistic-lock version: pass it back as `expectedVersion` to refuse stale actions. */
  version: z.number(),
  error: z.unknown().optional(),
  suspension: z.unknown().optional(),
  /** The instance whose `subworkflow` or `map` node started this one (null: started by a person or a program). */
  parentId: z.number().nullable().optional(),
  /** That node's id. */
  parentNodeId: z.string().nullable().optional(),
  /** Since when it is paused (epoch ms), or null: a paused instance starts no node until unpaused. */
  pausedAt: z.number().nullable().optional(),
  /** Whether it waits PENDING for a slot of its workflow's concurrency limit (nothing of it runs until admitted). */
  held: z.boolean().optional(),
  /** Higher first when workers claim work (0 unless its start or its workflow gave one). */
  priority: z.number().optional(),
  /** A test run (`instance:start` with `test: true`, or a test run's child): left out of the metrics and the default list. */
  test: z.boolean().optional(),
});
/** See {@link InstanceSummarySchema}. */
export type InstanceSummary = z.output<typeof InstanceSummarySchema>;

/**
 * An instance in the monitor's list: the summary plus "why is it stuck", computed in SQL per row.
 * Times are epoch ms.
 */
export const InstanceListItemSchema = InstanceSummarySchema.extend({
  /** Nodes running, ready, waiting, retrying or compensating; the failed ones of a FAILED or SUSPENDED instance. */
  currentNodes: z.array(z.string()),
  /** Attempt n of m of the most telling current node (retrying, then failed, running, waiting). */
  attempt: z.number().nullable(),
  maxAttempts: z.number().nullable(),
  /** When a retrying node's next attempt is due. */
  nextRetryAt: z.number().nullable(),
  waitingFor: z.enum(WAITING_FOR_VALUES).nullable(),
  /** Since when it waits (the waiting node's start, or when it was suspended). */
  waitingSince: z.number().nullable(),
  /** When the wait ends by itself: a timer's due time, an approval's timeout, the next retry. */
  waitingUntil: z.number().nullable(),
  /** Why it is SUSPENDED (the failed step, its attempts and error) or FAILED (the error), one line. */
  reason: z.string().nullable(),
});
/** See {@link InstanceListItemSchema}. */
export type InstanceListItem = z.output<typeof InstanceListItemSchema>;

/** One approval waiting for a person (the Approvals inbox). Times are epoch ms. */
export const ApprovalItemSchema = z.object({
  instanceId: z.number(),
  workflow: z.string(),
  workflowVersion: z.number(),
  businessKey: z.string().nullable(),
  /** The instance's optimistic-lock version when read. */
  instanceVersion: z.number(),
  nodeId: z.string(),
  nodeName: z.string().nullable(),
  /** The approval's prompt, its expressions filled in. */
  prompt: z.string().nullable(),
  /** Who should decide (the node's `config.assignee`), if named. */
  assignee: z.string().nullable(),
  /** JSON Schema of the data a decision may carry (the node's `config.form`), if any. */
  form: z.record(z.string(), z.unknown()).nullable(),
  /** When the approval was requested. */
  since: z.number().nullable(),
  /** When it times out, if it does. */
  timeoutAt: z.number().nullable(),
  attempt: z.number(),
});
/** See {@link ApprovalItemSchema}. */
export type ApprovalItem = z.output<typeof ApprovalItemSchema>;

/** One time bucket of `metrics:series`: counts, and duration percentiles (ms) of the completed. */
export const SeriesPointSchema = z.object({
  /** The bucket's start, epoch ms. */
  t: z.number(),
  started: z.number(),
  completed: z.number(),
  failed: z.number(),
  cancelled: z.number(),
  p50Ms: z.number().nullable(),
  p99Ms: z.number().nullable(),
});
/** See {@link SeriesPointSchema}. */
export type SeriesPoint = z.output<typeof SeriesPointSchema>;

/** One node's state within an instance. Times are epoch ms. */
export const NodeStateSchema = z.object({
  id: z.string(),
  status: z.string(),
  attempt: z.number(),
  maxAttempts: z.number(),
  output: z.unknown().optional(),
  error: z.unknown().optional(),
  /** What the node waits for (`{ kind: 'approval', prompt, … }`, a timer), when WAITING. */
  wait: z.unknown().optional(),
  completedSeq: z.number().nullable(),
  startedAt: z.number().nullable(),
  endedAt: z.number().nullable(),
  nextRunAt: z.number().nullable(),
});
/** See {@link NodeStateSchema}. */
export type NodeState = z.output<typeof NodeStateSchema>;

/**
 * The child instances of one `subworkflow` or `map` node of an instance (its latest attempt's),
 * counted by where they are: `completed`; `failed` (FAILED or CANCELLED); `running` (PENDING,
 * RUNNING, COMPENSATING); `waiting` (WAITING, SUSPENDED); `queued` (items not started yet).
 */
export const ChildGroupSchema = z.object({
  nodeId: z.string(),
  attempt: z.number(),
  /** The child workflow and version (null while none started). */
  workflow: z.string().nullable(),
  workflowVersion: z.number().nullable(),
  total: z.number(),
  completed: z.number(),
  failed: z.number(),
  running: z.number(),
  waiting: z.number(),
  queued: z.number(),
});
/** See {@link ChildGroupSchema}. */
export type ChildGroup = z.output<typeof ChildGroupSchema>;

/** An instance with its variables and node states. Times are epoch ms. */
export const InstanceDetailSchema = InstanceSummarySchema.extend({
  workflowId: z.number(),
  variables: z.record(z.string(), z.unknown()),
  input: z.record(z.string(), z.unknown()),
  updatedAt: z.number(),
  deadlineAt: z.number().nullable(),
  nodes: z.array(NodeStateSchema),
  /** A test run's pinned results by node id (what those nodes completed with, their handlers not run). */
  pins: z.record(z.string(), z.unknown()).optional(),
  /** Child instances by node (`subworkflow` and `map` nodes that started any). */
  children: z.array(ChildGroupSchema).optional(),
});
/** See {@link InstanceDetailSchema}. */
export type InstanceDetail = z.output<typeof InstanceDetailSchema>;

/** An instance's state after an action: enough to refresh a row and chain `expectedVersion`. */
export const InstanceStateSchema = z.object({ id: z.number(), status: z.string(), version: z.number() });
/** See {@link InstanceStateSchema}. */
export type InstanceState = z.output<typeof InstanceStateSchema>;

/** One history event of an instance (`at` in epoch ms). */
export const HistoryEventSchema = z.object({
  id: z.number(),
  nodeId: z.string().nullable(),
  type: z.string(),
  at: z.number(),
  attempt: z.number().nullable(),
  actor: z.string().nullable(),
  data: z.unknown().optional(),
});
/** See {@link HistoryEventSchema}. */
export type HistoryEvent = z.output<typeof HistoryEventSchema>;

/**
 * One entry of the change feed: a committed history event, with the instance and workflow it
 * belongs to. `cursor` is the event's history id: entries come in strictly increasing cursor
 * order, and reading again after a cursor yields exactly the entries committed after it (epoch ms
 * in `at`). `instanceId`, `workflow` and `workflowVersion` are null for an event of no instance.
 */
export const ChangeEntrySchema = z.object({
  cursor: z.number(),
  instanceId: z.number().nullable(),
  workflow: z.string().nullable(),
  workflowVersion: z.number().nullable(),
  nodeId: z.string().nullable(),
  type: z.string(),
  at: z.number(),
  attempt: z.number().nullable(),
  actor: z.string().nullable(),
  data: z.unknown().optional(),
});
/** See {@link ChangeEntrySchema}. */
export type ChangeEntry = z.output<typeof ChangeEntrySchema>;

/**
 * A named consumer of the change feed: `cursor` is the history id it has acknowledged reading
 * through (0: nothing yet); `createdAt` / `updatedAt` in epoch ms.
 */
export const ChangeConsumerSchema = z.object({
  name: z.string(),
  cursor: z.number(),
  createdAt: z.number(),
  updatedAt: z.number(),
});
/** See {@link ChangeConsumerSchema}. */
export type ChangeConsumer = z.output<typeof ChangeConsumerSchema>;

/** Dashboard numbers: counts by status, queue depth, durations, failures, dead letters. */
export const MetricsSchema = z.object({
  /** Instance count per status (statuses with no instance are absent). */
  counts: z.record(z.string(), z.number()),
  /** `{ pending, running, timers, pending_instances, running_instances }`. */
  queue: z.record(z.string(), z.number()),
  /** Per workflow: `{ workflow, completed, avg_ms, p50_ms, p99_ms, max_ms }`. */
  durations: z.array(z.record(z.string(), z.unknown())),
  /** Per workflow: `{ workflow, total, failed, suspended, cancelled, failure_rate }`. */
  failures: z.array(z.record(z.string(), z.unknown())),
  /**
   * The latest dead letters, newest first: `{ id, instance_id, workflow, node_id, kind, attempts,
   * error_json, created_at }`.
   */
  deadLetters: z.array(z.record(z.string(), z.unknown())),
  /** The live instance that has waited longest (WAITING or SUSPENDED, started first), or null. */
  oldestWaiting: InstanceListItemSchema.nullable().optional(),
  /** The database itself (see StorageHealthSchema). */
  storage: z.lazy(() => StorageHealthSchema).optional(),
});

/**
 * How the database itself is doing: the write-ahead log's size and its bound, bytes. A WAL past
 * its bound means a reader holds old frames (a long read transaction, often in another process)
 * and checkpoints cannot reset it until it lets go.
 */
export const StorageHealthSchema = z.object({
  wal: z.object({ bytes: z.number(), limitBytes: z.number() }).optional(),
  /** WAL checkpoints this process ran off the loop's thread that copied frames: how many, their ms in all, the last one's ms. */
  checkpoints: z.object({ count: z.number(), totalMs: z.number(), lastMs: z.number() }).optional(),
});
/** See {@link StorageHealthSchema}. */
export type StorageHealthInfo = z.output<typeof StorageHealthSchema>;
/** See {@link MetricsSchema}. */
export type Metrics = z.output<typeof MetricsSchema>;

/**
 * The instance filter of the monitor: what `instance:list` takes (besides paging) and what
 * `instance:bulk` acts on. Times are epoch ms, inclusive.
 */
export const InstanceFilterSchema = z.strictObject({
  status: z.array(z.enum(INSTANCE_STATUS_VALUES)).max(LIMITS.statuses).optional(),
  workflow: name.optional(),
  version: version.optional(),
  createdFrom: epochMs.optional(),
  createdTo: epochMs.optional(),
  /** Matches the id, the business key, the error or the suspension text. */
  text: storableText(0, LIMITS.text).optional(),
  /** Only instances waiting for this. */
  waitingFor: z.enum(WAITING_FOR_VALUES).optional(),
  /** Only instances whose current nodes include this node id. */
  node: nodeId.optional(),
  /** Only the child instances of this instance (its `subworkflow` and `map` nodes'). */
  parentId: rowId.optional(),
  /** Only instances with exactly this business key. */
  businessKey: storableText(1, LIMITS.text).optional(),
  /** Only paused instances (true), or only those not paused (false). */
  paused: z.boolean().optional(),
  /** Only test runs (true), or only real ones (false); not given: real ones, unless `parentId` (or `ids`) is given. */
  test: z.boolean().optional(),
});
/** An instance filter as a caller sends it. */
export type InstanceFilterInput = z.input<typeof InstanceFilterSchema>;

/** What `instance:bulk` did (or, with `dryRun`, would do). */
export const BulkResultSchema = z.object({
  action: z.enum(['cancel', 'retry', 'pause', 'unpause']),
  dryRun: z.boolean(),
  /** Instances matching the filter that the action applies to (live ones for cancel, FAILED for retry). */
  matched: z.number(),
  /** The highest instance id counted: pass it back with the real run to touch this set only. */
  upToId: z.number(),
  /** The first (at most 100) matching ids, oldest first. */
  sample: z.array(z.number()),
  /** Instances changed (0 in a dry run). */
  affected: z.number(),
  /** Instances that had changed meanwhile and were left alone. */
  skipped: z.number(),
  /** Why each skipped instance was left alone (at most 100 listed). */
  errors: z.array(z.object({ id: z.number(), code: z.string(), message: z.string() })),
});
/** See {@link BulkResultSchema}. */
export type BulkResult = z.output<typeof BulkResultSchema>;

/** Days ended instances are kept, per end status (null: for ever). */
export const RetentionPolicySchema = z.object({
  completedDays: z.number().nullable(),
  failedDays: z.number().nullable(),
  cancelledDays: z.number().nullable(),
});

/** `database:info`: see the channel. Sizes in bytes. */
export const DatabaseInfoSchema = z.object({
  backend: z.enum(['sqlite', 'postgres']),
  /** The file (absolute), or the server's URL without its password. */
  location: z.string(),
  /** The SQLite file (absent on PostgreSQL): its size and its WAL's, pages, free pages, auto_vacuum mode. */
  file: z
    .object({
      bytes: z.number(),
      walBytes: z.number(),
      pageSize: z.number(),
      pageCount: z.number(),
      freePages: z.number(),
      autoVacuum: z.enum(['none', 'full', 'incremental']),
    })
    .optional(),
  health: StorageHealthSchema,
  /** Live instances by time since created, ended ones by time since they ended: under a day, a week, 30 days, older. */
  ages: z.array(z.object({ age: z.enum(['day', 'week', 'month', 'older']), live: z.number(), ended: z.number() })),
  retention: z.object({
    /** Whether this host's worker applies retention at all. */
    enabled: z.boolean(),
    defaults: RetentionPolicySchema,
    /** Workflows with a policy of their own (in force: over the defaults). */
    workflows: z.array(z.object({ name: z.string(), policy: RetentionPolicySchema })),
  }),
  consumers: z.object({ count: z.number(), lowestCursor: z.number().nullable() }),
});
/** See {@link DatabaseInfoSchema}. */
export type DatabaseInfoView = z.output<typeof DatabaseInfoSchema>;

/** `database:check`: what `runnel check --json` prints. */
export const CheckReportSchema = z.object({
  file: z.string(),
  ok: z.boolean(),
  violations: z.array(
    z.object({
      kind: z.string(),
      message: z.string(),
      instanceId: z.number().optional(),
      nodeId: z.string().optional(),
      scheduleId: z.number().optional(),
      historyId: z.number().optional(),
    }),
  ),
  counts: z.object({ instances: z.number(), live: z.number(), suspended: z.number(), schedule: z.number(), history: z.number(), walBytes: z.number(), walLimitBytes: z.number() }),
  damageMarker: z.string().nullable(),
  elapsedMs: z.number(),
});

/** `database:backup`: the source and the copy (absolute paths), the copy's size, and the time it took. */
export const BackupResultSchema = z.object({ source: z.string(), dest: z.string(), bytes: z.number(), elapsedMs: z.number() });

/** `database:vacuum`: pages given back, and the database's size before and after (pages × page size). */
export const FreePagesSchema = z.object({ pagesFreed: z.number(), bytesBefore: z.number(), bytesAfter: z.number(), elapsedMs: z.number() });

/** A histogram in brief: observations, mean, and the bucket bounds (ms) holding P50 and P99; null when none was observed. */
const HistogramSummarySchema = z.object({ count: z.number(), meanMs: z.number().nullable(), p50Ms: z.number().nullable(), p99Ms: z.number().nullable() });

/** `metrics:runtime`: this host's counters and histograms since it started (what `GET /metrics` serves, in brief). */
export const RuntimeMetricsSchema = z.object({
  turns: HistogramSummarySchema,
  commits: HistogramSummarySchema,
  claimed: z.number(),
  started: z.array(z.object({ workflow: z.string(), count: z.number() })),
  attempts: z.array(z.object({ type: z.string(), outcome: z.string(), count: z.number() })),
  failures: z.array(z.object({ type: z.string(), code: z.string(), count: z.number() })),
  nodeDuration: z.array(HistogramSummarySchema.extend({ type: z.string() })),
  dueToCommitted: z.array(HistogramSummarySchema.extend({ type: z.string() })),
});
/** See {@link RuntimeMetricsSchema}. */
export type RuntimeMetricsView = z.output<typeof RuntimeMetricsSchema>;
/**
 * A live schedule of a workflow (its latest version's `schedules`, engine/runtime/schedules.ts):
 * the definition's `cron`, `timezone`, `overlap` and `catchUp`, whether it is paused, its next due
 * time (null: none to come; while paused, the one it would have) and the next five from now (none
 * while paused), the due time it last started an instance for and that instance. Times epoch ms.
 */
export const ScheduleInfoSchema = z.object({
  workflow: z.string(),
  id: z.string(),
  cron: z.string(),
  timezone: z.string().nullable(),
  overlap: z.enum(['skip', 'allow', 'cancel-previous']),
  catchUp: z.enum(['none', 'latest', 'all']),
  paused: z.boolean(),
  nextDueAt: z.number().nullable(),
  upcoming: z.array(z.number()),
  lastDueAt: z.number().nullable(),
  lastInstanceId: z.number().nullable(),
});
/** See {@link ScheduleInfoSchema}. */
export type ScheduleInfo = z.output<typeof ScheduleInfoSchema>;
