/**
 * The one typed API contract between the UI and the engine (DESIGN.md section 5).
 *
 * Both hosts bind it: Electron's main process over IPC and the browser host over HTTP + SSE.
 * Handlers know nothing of their transport; the renderer imports this module (types and zod
 * schemas only), so it must never import Node modules or engine runtime code — only zod,
 * engine/vocabulary.ts, type-only imports from engine/dsl/schema, and its own parts
 * (schemas.ts, fields.ts), which the same lint fence covers.
 *
 * Exports (stable names; add, never rename):
 * - `contract`                 channel → `{ input, output }` zod schemas (`as const`)
 * - `Channel`, `channels`, `isChannel(name)`
 * - `Input<C>`                 what a caller sends (z.input of the input schema)
 * - `HandlerInput<C>`          what a handler receives (z.output of the input schema: defaults applied)
 * - `Output<C>`                what a handler returns and a caller gets back
 * - `Handlers`                 `{ [C in Channel]: (input: HandlerInput<C>) => Promise<Output<C>> }`
 * - `Result<T>`, `ApiError`, `ApiErrorSchema`, `ok(value)`, `err(code, message, details?)`
 * - `ApiErrorCodes`, `ApiErrorCode`
 * - `events` (event type → zod schema), `EventType`, `ContractEvent`, `ContractEventOf<T>`,
 *   `ContractEventSchema`, `EventBatch`, `EventBatchSchema`, `EVENT_TYPES`
 * - `Invoke`                   the caller-side signature every client (IPC or HTTP) implements
 * - `LIMITS`                   size limits the schemas enforce (defined in fields.ts, with the
 *                              field building blocks the channel inputs share)
 * - entity schemas and types (defined in schemas.ts, re-exported whole):
 *   `ProblemSchema`/`Problem`, `WorkflowSummarySchema`/`WorkflowSummary`,
 *   `InstanceSummarySchema`/`InstanceSummary`, `InstanceDetailSchema`/`InstanceDetail`,
 *   `NodeStateSchema`/`NodeState`, `HistoryEventSchema`/`HistoryEvent`, `ChangeEntrySchema`/`ChangeEntry`,
 *   `ChangeConsumerSchema`/`ChangeConsumer`, `NodeTypeSchema`/`NodeTypeInfo`,
 *   `MetricsSchema`/`Metrics`, `InstanceStateSchema`/`InstanceState`,
 *   `InstanceListItemSchema`/`InstanceListItem`, `ApprovalItemSchema`/`ApprovalItem`,
 *   `SeriesPointSchema`/`SeriesPoint`, `InstanceFilterSchema`/`InstanceFilterInput`, `BulkResultSchema`/`BulkResult`,
 *   `WAITING_FOR_VALUES`/`WaitingForValue`,
 *   `INSTANCE_STATUS_VALUES`/`InstanceStatusValue`, `NODE_STATUS_VALUES`/`NodeStatusValue`
 *
 * Hosts: engine/api/handlers.ts (`createHandlers`, `dispatch`), engine/api/event-batcher.ts,
 * server/index.ts (HTTP protocol documented there), electron/.
 */
import { z } from 'zod';
import { ErrorCodes, HostErrorCodes, PRIORITY_RANGE } from '../vocabulary';
import {
  actor,
  businessKey,
  definitionExport,
  definitionIn,
  definitionOut,
  epochMs,
  jsonObject,
  jsonValue,
  label,
  LIMITS,
  name,
  nodeId,
  nothing,
  rowId,
  version,
} from './fields';
import {
  ApprovalItemSchema,
  BackupResultSchema,
  BulkResultSchema,
  CheckReportSchema,
  DatabaseInfoSchema,
  FreePagesSchema,
  RuntimeMetricsSchema,
  ChangeConsumerSchema,
  ChangeEntrySchema,
  HistoryEventSchema,
  InstanceDetailSchema,
  InstanceFilterSchema,
  InstanceListItemSchema,
  InstanceStateSchema,
  MetricsSchema,
  NodeTypeSchema,
  ProblemSchema,
  ScheduleInfoSchema,
  SeriesPointSchema,
  StorageHealthSchema,
  WorkflowSummarySchema,
} from './schemas';

/** A history entry of an instance: its id, or an ISO 8601 time (the last entry at or before it). */
const historyPoint = z.union([rowId, z.string().max(64)]);

/** A change feed cursor: a history id, 0 before the first entry. */
const cursor = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

export { LIMITS } from './fields';
export * from './schemas';

// ---------------------------------------------------------------- errors and results

/**
 * Stable error codes of API results. UIs and tests match on these, never on messages: the
 * engine's {@link ErrorCodes} plus the host codes ({@link HostErrorCodes}), both from
 * engine/vocabulary.ts.
 */
export const ApiErrorCodes = { ...ErrorCodes, ...HostErrorCodes } as const;

/** One of {@link ApiErrorCodes}. */
export type ApiErrorCode = (typeof ApiErrorCodes)[keyof typeof ApiErrorCodes];

/**
 * An error as data: what every failed call returns, whatever the transport.
 *
 * `code` is one of {@link ApiErrorCodes} (typed as string so an older client still reads a newer
 * host's codes); `details` is structured data for UIs (validation problems, zod issues).
 */
export const ApiErrorSchema = z.object({
  code: z.string(),
  message: z.string(),
  details: z.unknown().optional(),
});
/** See {@link ApiErrorSchema}. */
export type ApiError = z.output<typeof ApiErrorSchema>;

/** A call's outcome: the value, or an {@link ApiError}. Never thrown across a boundary. */
export type Result<T> = { ok: true; value: T } | { ok: false; error: ApiError };

/** A successful {@link Result}. */
export function ok<T>(value: T): Result<T> {
  return { ok: true, value };
}

/** A failed {@link Result} (`details` left out when undefined, so it survives JSON unchanged). */
export function err(code: ApiErrorCode, message: string, details?: unknown): { ok: false; error: ApiError } {
  return { ok: false, error: details === undefined ? { code, message } : { code, message, details } };
}

// ---------------------------------------------------------------- the contract

/**
 * Every channel: `domain:verb` → `{ input, output }` zod schemas.
 *
 * Input objects are strict: an unknown key (a typo) is refused naming it. Channels without
 * arguments take `{}` (or nothing).
 */
export const contract = {
  /** Every workflow with its latest version and instance counts, by name. */
  'workflow:list': { input: nothing, output: z.array(WorkflowSummarySchema) },
  /** A saved definition; the latest version unless `version` is given. NOT_FOUND otherwise. */
  'workflow:get': {
    input: z.strictObject({ name, version: version.optional() }),
    output: z.object({
      id: z.number(),
      name: z.string(),
      version: z.number(),
      createdAt: z.number(),
      definition: definitionOut,
    }),
  },
  /** A workflow's versions, newest first (NOT_FOUND when it has none). */
  'workflow:versions': {
    input: z.strictObject({ name }),
    output: z.array(z.object({ id: z.number(), version: z.number(), createdAt: z.number() })),
  },
  /**
   * Validates and saves a definition; a new version only when it changed (`created` false
   * otherwise; designer positions alone are no change, but they replace the latest version's,
   * with `uiUpdated: true`). INVALID_WORKFLOW with every problem in `details` when invalid.
   */
  'workflow:save': {
    input: z.strictObject({ definition: definitionIn }),
    output: z.object({
      workflowId: z.number(),
      name: z.string(),
      version: z.number(),
      created: z.boolean(),
      uiUpdated: z.literal(true).optional(),
    }),
  },
  /** Validates a definition without saving it: every problem, each naming its node or edge. */
  'workflow:validate': {
    input: z.strictObject({ definition: definitionIn }),
    output: z.object({ ok: z.boolean(), problems: z.array(ProblemSchema) }),
  },
  /** A version's definition as a file: DSL format 1, `ui` included, as JSON (default) or YAML. */
  'workflow:export': {
    input: z.strictObject({
      name,
      version: version.optional(),
      format: z.enum(['json', 'yaml']).default('json'),
    }),
    output: z.object({
      name: z.string(),
      version: z.number(),
      /** A suggested file name, e.g. `purchase-approval.workflow.json`. */
      fileName: z.string(),
      text: z.string(),
      definition: definitionExport,
    }),
  },
  /**
   * Reads a workflow file's text (JSON or YAML, by `fileName` or content) and validates it; saves
   * nothing. A syntax error is INVALID_WORKFLOW with `{ fileName, format, line, column }` details;
   * a readable file comes back with its problems (empty when it can be saved as is).
   */
  'workflow:import': {
    input: z.strictObject({
      text: z.string().max(LIMITS.definitionBytes),
      fileName: z.string().min(1).max(LIMITS.fileName).optional(),
    }),
    output: z.object({ definition: z.unknown(), ok: z.boolean(), problems: z.array(ProblemSchema) }),
  },
  /**
   * Renames a workflow: every version moves to `newName` (its instances follow, by version id).
   * NOT_FOUND; CONFLICT when `newName` is taken (by a workflow, or by a deleted one whose finished
   * instances still name it).
   */
  'workflow:rename': {
    input: z.strictObject({ name, newName: name }),
    output: z.object({ name: z.string(), versions: z.number() }),
  },
  /**
   * Deletes a workflow: it leaves the list and can no longer be started or read by name. Refused
   * (INVALID_STATE, naming the count) while any of its instances is live. Versions that finished
   * instances ran stay in the file, hidden, so their history still reads. NOT_FOUND otherwise.
   */
  'workflow:delete': {
    input: z.strictObject({ name }),
    output: z.object({ name: z.string(), versions: z.number() }),
  },
  /** The palette: every node type with its config JSON Schema, in registration order. */
  'node:types': { input: nothing, output: z.array(NodeTypeSchema) },
  /**
   * Starts an instance (the latest version unless `version` is given). NOT_FOUND, or
   * INVALID_VARIABLES naming the failing fields of the workflow's `inputSchema`.
   */
  'instance:start': {
    input: z.strictObject({
      workflow: name,
      version: version.optional(),
      variables: jsonObject(LIMITS.valueBytes).optional(),
      businessKey: businessKey.optional(),
      /** Higher first when workers claim work; default: the workflow's `priority`, else 0. */
      priority: z.number().int().min(PRIORITY_RANGE.min).max(PRIORITY_RANGE.max).optional(),
      /** A test run: runs for real, left out of the metrics and of the default instance list (`test: true` lists them). */
      test: z.boolean().optional(),
      /**
       * A test run's pinned results by node id (needs `test: true`; every id a node of the
       * version): a pinned node completes with its result and its handler does not run.
       */
      pins: jsonObject(LIMITS.valueBytes).optional(),
      actor,
    }),
    output: InstanceStateSchema,
  },
  /**
   * Instances matching the filter, newest first, keyset-paged: pass `nextBeforeId` back as
   * `beforeId` for the next page (null at the end). `counts` (unless `withCounts: false`) gives
   * per-status counts of instances matching every filter but `status` and paging, for chips.
   */
  'instance:list': {
    input: InstanceFilterSchema.extend({
      /** Only these instances (a live view refreshing its rows); at most one page. */
      ids: z.array(rowId).max(LIMITS.pageSize).optional(),
      beforeId: rowId.optional(),
      /** Rows newer than this id, oldest first (what arrived since a page was loaded). */
      afterId: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
      limit: z.number().int().min(1).max(LIMITS.pageSize).default(50),
      withCounts: z.boolean().default(true),
    }).default({ limit: 50, withCounts: true }),
    output: z.object({
      items: z.array(InstanceListItemSchema),
      nextBeforeId: z.number().nullable(),
      counts: z.record(z.string(), z.number()).optional(),
    }),
  },
  /** An instance with its variables and node states. NOT_FOUND otherwise. */
  'instance:get': { input: z.strictObject({ id: rowId }), output: InstanceDetailSchema },
  /**
   * Time travel: the instance as it was right after history entry `at` (a history id of this
   * instance, or an ISO 8601 time: the last entry at or before it), in the `instance:get` shape
   * (see engine/runtime/time-travel.ts for what is rebuilt), with the entry and its place
   * (`position` of `entries`). NOT_FOUND (instance); INVALID_INPUT naming `at` when it is
   * malformed or names no entry of this instance (`details.range`: its first and last entry).
   */
  'instance:stateAt': {
    input: z.strictObject({ id: rowId, at: historyPoint }),
    output: z.object({ at: HistoryEventSchema, position: z.number(), entries: z.number(), instance: InstanceDetailSchema }),
  },
  /**
   * "Start a copy from here" (fork): a new instance of the same workflow version from the state
   * right after history entry `at` (as `instance:stateAt` names it): its variables then; nodes
   * done then keep their results and do not run; the others run. Its history starts with
   * `instance.created` carrying `forkedFrom: { id, at }` (`at` the entry's id); the source's
   * history gets `instance.forked`. Errors as `instance:stateAt`.
   */
  'instance:fork': {
    input: z.strictObject({ id: rowId, at: historyPoint, actor }),
    output: InstanceStateSchema,
  },
  /** An instance's history, oldest first, after `afterId` (paging), at most `limit`. */
  'instance:history': {
    input: z.strictObject({
      id: rowId,
      afterId: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).default(0),
      limit: z.number().int().min(1).max(10_000).default(1000),
    }),
    output: z.object({ events: z.array(HistoryEventSchema), nextAfterId: z.number().nullable() }),
  },
  /**
   * Resumes a SUSPENDED instance: retry the failed step, skip it with `result`, or fail the
   * instance; `variables` replaces the globals first. INVALID_STATE, CONFLICT (`expectedVersion`).
   */
  'instance:resume': {
    input: z.strictObject({
      id: rowId,
      action: z.enum(['retry', 'skip', 'fail']),
      result: jsonValue(LIMITS.valueBytes).optional(),
      variables: jsonObject(LIMITS.valueBytes).optional(),
      expectedVersion: z.number().int().min(0).optional(),
      actor,
    }),
    output: InstanceStateSchema,
  },
  /** Retries a FAILED instance from its failed nodes. INVALID_STATE otherwise. */
  'instance:retry': {
    input: z.strictObject({ id: rowId, expectedVersion: z.number().int().min(0).optional(), actor }),
    output: InstanceStateSchema,
  },
  /** Cancels a live instance; `compensate` runs compensations first. INVALID_STATE when ended. */
  'instance:cancel': {
    input: z.strictObject({
      id: rowId,
      compensate: z.boolean().default(false),
      expectedVersion: z.number().int().min(0).optional(),
      actor,
    }),
    output: InstanceStateSchema,
  },
  /** Decides a WAITING approval node. INVALID_STATE when no approval waits there. */
  'instance:approve': {
    input: z.strictObject({
      id: rowId,
      nodeId,
      approved: z.boolean(),
      data: jsonValue(LIMITS.valueBytes).optional(),
      comment: z.string().max(LIMITS.text).optional(),
      actor,
    }),
    output: InstanceStateSchema,
  },
  /**
   * Sends an event to a live instance (by id, or by its business key when exactly one live
   * instance has it): recorded in its history, and taken by the `event` node waiting for that name
   * (and key), or kept until one reaches it. `consumedBy` is that node, or null (kept).
   * NOT_FOUND (no such id, no instance with the business key); INVALID_STATE for an ended
   * instance (by business key: only ended instances have it); INVALID_INPUT when the business key
   * names several live instances, or the data is above the size limit.
   */
  'instance:signal': {
    input: z
      .strictObject({
        id: rowId.optional(),
        businessKey: businessKey.optional(),
        event: label(1, 200),
        key: label(0, 1000).optional(),
        data: jsonValue(LIMITS.valueBytes).optional(),
        actor,
      })
      .refine((v) => (v.id === undefined) !== (v.businessKey === undefined), { message: 'give either id or businessKey', path: ['id'] }),
    output: z.object({ eventId: z.number(), consumedBy: z.string().nullable(), instance: InstanceStateSchema }),
  },
  /**
   * Pauses a live instance: it starts no node until unpaused; running handlers finish and are
   * recorded; timers, retries, wait timeouts and its deadline keep the time they had left.
   * NOT_FOUND; INVALID_STATE when it has ended or is paused already.
   */
  'instance:pause': { input: z.strictObject({ id: rowId, actor }), output: InstanceStateSchema },
  /** Unpauses an instance. NOT_FOUND; INVALID_STATE when it is not paused. */
  'instance:unpause': { input: z.strictObject({ id: rowId, actor }), output: InstanceStateSchema },
  /**
   * Deletes one ended instance with everything it owns (node states, schedule rows, dead letters,
   * history, events) and the child instances its nodes started; answers the rows deleted per
   * table. NOT_FOUND; INVALID_STATE when it is live, a child instance of it is live, or it is a
   * child instance itself (those go with their parent).
   */
  'instance:delete': {
    input: z.strictObject({ id: rowId }),
    output: z.object({
      id: z.number(),
      deleted: z.object({
        instances: z.number(),
        nodeStates: z.number(),
        schedule: z.number(),
        deadLetters: z.number(),
        history: z.number(),
        events: z.number(),
        children: z.number(),
      }),
    }),
  },
  /**
   * Deletes every ended test run (`instance:start` with `test: true`) with everything it owns and
   * its child instances. `runs`: test runs deleted; `live`: left because they (or a child) still
   * run; `kept`: left for history a change-feed consumer has not read.
   */
  'instance:deleteTestRuns': {
    input: nothing,
    output: z.object({
      runs: z.number(),
      live: z.number(),
      kept: z.number(),
      deleted: z.object({
        instances: z.number(),
        nodeStates: z.number(),
        schedule: z.number(),
        deadLetters: z.number(),
        history: z.number(),
        events: z.number(),
        children: z.number(),
      }),
    }),
  },
  /** Dashboard numbers. */
  'metrics:get': { input: nothing, output: MetricsSchema },
  /** How the database itself is doing (cheap: the status bar polls it): the WAL's size and bound. */
  'storage:health': { input: nothing, output: StorageHealthSchema },
  /**
   * This host's own counters and histograms since it started — loop turns and commits, attempts
   * by node type and outcome, failures by error code, attempt duration and due→committed latency
   * by node type — the numbers `GET /metrics` serves, in brief, for the Dashboard.
   */
  'metrics:runtime': { input: nothing, output: RuntimeMetricsSchema },
  /**
   * The Approvals inbox: approval nodes WAITING for a person, the longest-waiting first, with
   * their prompt, assignee, form and since when; `total` counts them all.
   */
  'instance:approvals': {
    input: z
      .strictObject({
        workflow: name.optional(),
        limit: z.number().int().min(1).max(LIMITS.pageSize).default(100),
      })
      .default({ limit: 100 }),
    output: z.object({ items: z.array(ApprovalItemSchema), total: z.number() }),
  },
  /**
   * Cancels (with or without compensation) or retries every instance matching `filter` that the
   * action applies to (live instances for cancel, FAILED ones for retry). `dryRun` (the default)
   * only counts them: show the count, then send the same call with `dryRun: false` and the
   * preview's `upToId`, so instances started since are not touched. Each action is recorded in
   * the instance's history with `actor`, as a single action would be. More than `LIMITS.bulk`
   * matches are refused (INVALID_INPUT): narrow the filter.
   */
  'instance:bulk': {
    input: z.strictObject({
      action: z.enum(['cancel', 'retry', 'pause', 'unpause']),
      filter: InstanceFilterSchema.default({}),
      dryRun: z.boolean().default(true),
      upToId: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
      compensate: z.boolean().default(false),
      actor,
    }),
    output: BulkResultSchema,
  },
  /**
   * Throughput and latency over time for the dashboard's charts: per bucket (default one minute)
   * of [from, to) (default the last hour), instances started, completed, failed and cancelled, and
   * the P50/P99 duration of those completed, from the instances' timestamps. At most
   * `LIMITS.seriesBuckets` buckets (INVALID_INPUT otherwise).
   */
  'metrics:series': {
    input: z
      .strictObject({
        from: epochMs.optional(),
        to: epochMs.optional(),
        bucketMs: z.number().int().min(1000).max(86_400_000).default(60_000),
        workflow: name.optional(),
      })
      .default({ bucketMs: 60_000 }),
    output: z.object({
      from: z.number(),
      to: z.number(),
      bucketMs: z.number(),
      points: z.array(SeriesPointSchema),
    }),
  },
  /**
   * The change feed: committed history events of every instance with a cursor above `after`
   * (default: consumer `consumer`'s cursor, else 0), oldest first, at most `limit`; only those of
   * workflow `workflow` when given. Resume with the answer's `cursor`: entries come in strictly
   * increasing cursor order and a later read after it skips nothing that commits later. Reading
   * does not acknowledge (`changes:ack`). See engine/runtime/change-feed.ts for the delivery rule.
   */
  'changes:read': {
    input: z
      .strictObject({
        after: cursor.optional(),
        limit: z.number().int().min(1).max(10_000).default(1000),
        workflow: name.optional(),
        consumer: name.optional(),
      })
      .default({ limit: 1000 }),
    output: z.object({
      entries: z.array(ChangeEntrySchema),
      /** Where the next read resumes (its `after`). */
      cursor: z.number(),
      /** The feed's safe head: every entry at or below it has committed. */
      head: z.number(),
    }),
  },
  /**
   * Acknowledges that consumer `consumer` has read the feed through `cursor`, registering it when
   * new: retention keeps every entry above the lowest registered cursor. Monotonic: a cursor below
   * the stored one leaves it as it is. INVALID_INPUT when `cursor` is past the feed's last entry.
   */
  'changes:ack': {
    input: z.strictObject({ consumer: name, cursor }),
    output: ChangeConsumerSchema,
  },
  /** The registered consumers of the change feed by name, and the feed's safe head (how far behind each is). */
  'changes:consumers': {
    input: nothing,
    output: z.object({ consumers: z.array(ChangeConsumerSchema), head: z.number() }),
  },
  /** Unregisters consumer `consumer` (retention stops keeping entries for it). NOT_FOUND when none has that name. */
  'changes:forget': {
    input: z.strictObject({ consumer: name }),
    output: z.object({ consumer: z.string() }),
  },
  /**
   * The database as the Database view shows it: backend and location, the SQLite file's sizes
   * and pages, the WAL and its checkpoints, instances by age, the retention policy in force, and
   * the change-feed consumers retention waits for.
   */
  'database:info': { input: nothing, output: DatabaseInfoSchema },
  /**
   * `runnel check` on the host's file: SQLite's integrity check and the engine's invariants; the
   * violations are data (`ok: false`), not an error. SQLite only (INVALID_INPUT on PostgreSQL).
   */
  'database:check': { input: nothing, output: CheckReportSchema },
  /**
   * A consistent copy of the host's SQLite file at `dest`, a path on the host's machine (relative
   * to the host's working directory), while the worker runs; `operation.progress` events report the
   * bytes written. An existing `dest` is refused unless `force`. SQLite only.
   */
  'database:backup': {
    input: z.strictObject({ dest: z.string().trim().min(1, 'dest: give the path of the copy').max(4096), force: z.boolean().default(false) }),
    output: BackupResultSchema,
  },
  /**
   * Gives the SQLite file's free pages back to the file system while the worker runs, a thousand
   * pages per transaction, with `operation.progress` events. INVALID_STATE for a file without
   * auto_vacuum=INCREMENTAL (its message says how to convert it: `runnel vacuum` with the file closed).
   */
  'database:vacuum': { input: nothing, output: FreePagesSchema },
  /** The live schedules (of workflow `workflow` only, when given) with their next due times. NOT_FOUND for an unknown workflow. */
  'schedule:list': {
    input: z.strictObject({ workflow: name.optional() }).default({}),
    output: z.array(ScheduleInfoSchema),
  },
  /**
   * Pauses schedule `id` of `workflow`: it starts nothing until resumed (idempotent; kept across
   * deploys that keep the id). NOT_FOUND naming the workflow or the schedule (`details.workflow`, `details.schedule`).
   */
  'schedule:pause': { input: z.strictObject({ workflow: name, id: nodeId, actor }), output: ScheduleInfoSchema },
  /** Resumes a schedule from its next due time after now (times passed while paused are not caught up). NOT_FOUND as `schedule:pause`. */
  'schedule:resume': { input: z.strictObject({ workflow: name, id: nodeId, actor }), output: ScheduleInfoSchema },
  /**
   * Starts schedule `id`'s instance now (paused or not; its next due time stays), business key
   * `schedule:<id>:<now ISO>`, under its overlap rule: `skip` refuses with INVALID_STATE while the
   * instance it started last is live (`details.liveInstanceId`), `cancel-previous` cancels that
   * one, `allow` starts beside it. NOT_FOUND as `schedule:pause`; INVALID_VARIABLES when its
   * `vars` fail the workflow's inputSchema.
   */
  'schedule:trigger': { input: z.strictObject({ workflow: name, id: nodeId, actor }), output: z.object({ instance: InstanceStateSchema }) },
} as const;

/** A channel name, `domain:verb`. */
export type Channel = keyof typeof contract;

/** Every channel, in contract order. */
export const channels = Object.keys(contract) as Channel[];

const channelSet: ReadonlySet<string> = new Set(channels);

/** Whether `name` is a channel of the contract (own keys only: `toString` is not one). */
export function isChannel(name: unknown): name is Channel {
  return typeof name === 'string' && channelSet.has(name);
}

/** What a caller sends on channel `C` (optional fields may be left out). */
export type Input<C extends Channel> = z.input<(typeof contract)[C]['input']>;
/** What a handler of `C` receives: the input after parsing, defaults applied. */
export type HandlerInput<C extends Channel> = z.output<(typeof contract)[C]['input']>;
/** What a handler of `C` returns and a caller receives. */
export type Output<C extends Channel> = z.output<(typeof contract)[C]['output']>;

/** One handler per channel: a channel without a handler does not compile. */
export type Handlers = { [C in Channel]: (input: HandlerInput<C>) => Promise<Output<C>> };

/**
 * The caller-side call every client implements (Electron preload, HTTP client): never throws,
 * failures come back as data.
 */
export type Invoke = <C extends Channel>(
  channel: C,
  ...input: undefined extends Input<C> ? [input?: Input<C>] : [input: Input<C>]
) => Promise<Result<Output<C>>>;

// ---------------------------------------------------------------- events

/**
 * `test: true` on every event about a test run (`instance:start` with `test: true`, or a child
 * instance of one); absent for any other instance. Lets a window leave test runs out of what it
 * counts without asking for the instance.
 */
const testRunMark = z.literal(true).optional();

/** Event schemas by type: what hosts push to windows (after the change committed). */
export const events = {
  /** A new instance. */
  'instance.created': z.object({
    type: z.literal('instance.created'),
    instanceId: z.number(),
    workflow: z.string(),
    version: z.number(),
    test: testRunMark,
  }),
  /** An instance's status changed (the latest status within a batch). */
  'instance.changed': z.object({
    type: z.literal('instance.changed'),
    instanceId: z.number(),
    status: z.string(),
    test: testRunMark,
  }),
  /** An instance ended: COMPLETED, FAILED or CANCELLED. Never dropped by batching. */
  'instance.finished': z.object({
    type: z.literal('instance.finished'),
    instanceId: z.number(),
    status: z.string(),
    test: testRunMark,
  }),
  /** A node's status changed (the latest status within a batch). */
  'node.changed': z.object({
    type: z.literal('node.changed'),
    instanceId: z.number(),
    nodeId: z.string(),
    status: z.string(),
    attempt: z.number().optional(),
    test: testRunMark,
  }),
  /** An approval node waits for a person. Never dropped by batching. */
  'approval.requested': z.object({
    type: z.literal('approval.requested'),
    instanceId: z.number(),
    nodeId: z.string(),
    prompt: z.string().optional(),
    test: testRunMark,
  }),
  /**
   * Another process changed the database file (a CLI `deploy`, another engine): what changed is
   * unknown, so a window reloads what it shows (throttled). At most one per batch.
   */
  'store.changed': z.object({
    type: z.literal('store.changed'),
  }),
  /**
   * A file operation this host runs (`database:backup`, `database:vacuum`) is `done` of about
   * `total` units along (bytes written, or free pages given back). The latest per operation within a batch.
   */
  'operation.progress': z.object({
    type: z.literal('operation.progress'),
    operation: z.enum(['backup', 'vacuum']),
    done: z.number(),
    total: z.number(),
    unit: z.enum(['bytes', 'pages']),
  }),
} as const;

/** An event type. */
export type EventType = keyof typeof events;

/** Every event type, in contract order. */
export const EVENT_TYPES = Object.keys(events) as EventType[];

/** The event of type `T`. */
export type ContractEventOf<T extends EventType> = z.output<(typeof events)[T]>;

/** Any contract event. */
export type ContractEvent = { [T in EventType]: ContractEventOf<T> }[EventType];

/** Any contract event, as a zod schema (clients may check what a host pushes). */
export const ContractEventSchema = z.discriminatedUnion('type', [
  events['instance.created'],
  events['instance.changed'],
  events['instance.finished'],
  events['node.changed'],
  events['approval.requested'],
  events['store.changed'],
  events['operation.progress'],
]);

/**
 * A batch of coalesced events, pushed at most every ~100 ms.
 *
 * `seq` increases by one per batch from one host; `events` are in the order they first happened
 * within the batch, `instance.changed` / `node.changed` keeping only the latest status per
 * instance / node; `coalesced` counts events merged away.
 */
export const EventBatchSchema = z.object({
  seq: z.number(),
  events: z.array(ContractEventSchema),
  coalesced: z.number(),
});
/** See {@link EventBatchSchema}. */
export type EventBatch = z.output<typeof EventBatchSchema>;
