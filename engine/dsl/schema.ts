/**
 * The workflow DSL, format 1 (DESIGN.md section 3), as zod schemas.
 *
 * This module is shared with the renderer: it imports nothing from Node.
 * Objects are strict (an unknown key such as `retyr` is an error naming the key), except `ui`,
 * which belongs to the designer and is kept as given.
 */
import { z } from 'zod';
import { CONTROL_CHARACTERS, PRIORITY_RANGE } from '../vocabulary';

// ZWJ and VS16 are alternatives outside the class (same language): inside it, eslint's
// no-misleading-character-class reads them as joining their neighbours.
/** Ids of nodes and edges: Unicode letters, digits, emoji, `_`, `-`, `.`; 1–128 chars, no spaces. */
export const ID_PATTERN = /^(?:[\p{L}\p{N}\p{Extended_Pictographic}\p{M}_.-]|\u200d|\ufe0f){1,128}$/u;

/** A node or edge id. */
export const IdSchema = z
  .string()
  .regex(ID_PATTERN, 'must be 1–128 letters, digits, emoji, "_", "-" or "." (no spaces)');


/**
 * A human name (a workflow's, a node's): 1 to `max` characters, no control characters (a NUL or a
 * newline in a name breaks every list, file name and log line that shows it).
 */
export const nameText = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .refine((v) => !CONTROL_CHARACTERS.test(v), 'must not contain control characters (NUL, newline, tab, line separator, right-to-left override, …)');

/**
 * A retry policy, after Temporal's RetryPolicy.
 *
 * `maxAttempts` counts every attempt, the first included (1 = no retry). The delay before attempt
 * n+1 is min(initialIntervalMs × backoffCoefficient^(n−1), maxIntervalMs); `jitter` (0–1) only
 * shortens it by up to that fraction. `backoffCoefficient` is any finite number ≥ 1, as Temporal
 * allows (no upper bound: {@link backoffDelayMs} cannot overflow, and `maxIntervalMs` caps it).
 */
export const RetryPolicySchema = z.strictObject({
  maxAttempts: z.number().int().min(1).max(1000).optional(),
  initialIntervalMs: z.number().int().min(0).max(86_400_000).optional(),
  backoffCoefficient: z.number().min(1).optional(),
  maxIntervalMs: z.number().int().min(0).max(2_592_000_000).optional(),
  jitter: z.number().min(0).max(1).optional(),
});
export type RetryPolicy = z.infer<typeof RetryPolicySchema>;

/** A retry policy with every field filled in. */
export interface ResolvedRetryPolicy {
  maxAttempts: number;
  initialIntervalMs: number;
  backoffCoefficient: number;
  maxIntervalMs: number;
  jitter: number;
}

/** What happens when a node's retries run out and no error edge is taken. */
export const OnFailureSchema = z.enum(['fail', 'suspend']);
export type OnFailure = z.infer<typeof OnFailureSchema>;

/** The undo action of a node: run in reverse completion order when the instance fails. */
export const CompensationSchema = z.strictObject({
  type: z.string().min(1),
  name: nameText(200).optional(),
  config: z.record(z.string(), z.unknown()).optional(),
  input: z.string().optional(),
  retry: RetryPolicySchema.optional(),
  timeoutMs: z.number().int().min(1).max(86_400_000).optional(),
});
export type Compensation = z.infer<typeof CompensationSchema>;

/**
 * One node of the DAG.
 *
 * - `input`: a JSONata expression whose value the node receives (default: a shallow copy of all
 *   globals);
 * - `output`: a variable name that receives the result, or a JSONata expression (seeing the
 *   globals as `$`, the result as `$result`) whose object is merged into the globals;
 * - `join`: `any` (default; runs when all incoming edges are resolved and at least one was taken)
 *   or `all` (every incoming edge must be taken, else the node is SKIPPED).
 */
export const NodeSchema = z.strictObject({
  id: IdSchema,
  type: z.string().min(1),
  name: nameText(200).optional(),
  description: z.string().optional(),
  config: z.record(z.string(), z.unknown()).optional(),
  input: z.string().optional(),
  output: z.string().optional(),
  retry: RetryPolicySchema.optional(),
  timeoutMs: z.number().int().min(1).max(2_592_000_000).optional(),
  join: z.enum(['any', 'all']).optional(),
  onFailure: OnFailureSchema.optional(),
  compensate: CompensationSchema.optional(),
});
export type WorkflowNode = z.infer<typeof NodeSchema>;

/**
 * One edge. `on: "error"` is taken when `from` fails after its retries (its `when`, if any, sees
 * the error as `$error`); a normal edge is taken when `from` completes and `when` (JSONata) is
 * true. `id` defaults to `from->to` (`from-!>to` for error edges).
 */
export const EdgeSchema = z.strictObject({
  id: IdSchema.optional(),
  from: z.string().min(1),
  to: z.string().min(1),
  when: z.string().optional(),
  on: z.enum(['success', 'error']).optional(),
  label: z.string().optional(),
});
export type WorkflowEdge = z.infer<typeof EdgeSchema>;

/** Designer data: node positions and anything else the designer keeps. Kept as given. */
export const UiSchema = z.looseObject({
  positions: z.record(z.string(), z.object({ x: z.number(), y: z.number() })).optional(),
});

/**
 * Flow control on a workflow: at most `limit` instances of it in progress at once (admitted and
 * not ended: RUNNING, WAITING, SUSPENDED and COMPENSATING all hold a slot), across every version
 * and every process sharing the database; per value of `key` when given (a JSONata expression
 * over the start variables yielding a string, number or boolean). The rest wait PENDING in
 * start order. The latest version's setting applies to instances started from then on.
 */
export const ConcurrencySchema = z.strictObject({
  limit: z.number().int().min(1).max(100_000),
  key: z.string().min(1).optional(),
});
export type Concurrency = z.infer<typeof ConcurrencySchema>;

/** A priority ({@link PRIORITY_RANGE}). */
export const PrioritySchema = z.number().int().min(PRIORITY_RANGE.min).max(PRIORITY_RANGE.max);

/** Longest retention a policy may give, days (100 years). */
export const MAX_RETENTION_DAYS = 36_500;

/** Days an ended instance is kept: a finite number from 0 to {@link MAX_RETENTION_DAYS} (fractions allowed), or null for ever. */
const RetentionDaysSchema = z.number().min(0).max(MAX_RETENTION_DAYS).nullable();

/**
 * How long ended instances of a workflow are kept before the worker deletes them with everything
 * they own (node states, schedule rows, dead letters, history, child instances), days after they
 * ended, per end status. `null` keeps them for ever; a field left out takes the engine's default
 * (EngineOptions.retention: 30 days for COMPLETED and CANCELLED, for ever for FAILED). The latest
 * version's setting applies to every instance of the workflow, older versions' included.
 */
export const RetentionSchema = z.strictObject({
  completedDays: RetentionDaysSchema.optional(),
  failedDays: RetentionDaysSchema.optional(),
  cancelledDays: RetentionDaysSchema.optional(),
});
export type Retention = z.infer<typeof RetentionSchema>;

/**
 * What a due time does while the instance this schedule started last is still live: `skip` (the
 * default: nothing starts, the skip is recorded), `allow` (another starts beside it) or
 * `cancel-previous` (the live one is cancelled, then the new one starts).
 */
export const ScheduleOverlapSchema = z.enum(['skip', 'allow', 'cancel-previous']);
export type ScheduleOverlap = z.infer<typeof ScheduleOverlapSchema>;

/**
 * Which missed due times (passed more than MISSED_AFTER_MS = 60 s ago, engine/dsl/schedules.ts: no
 * worker ran) start once a worker runs again: `none` (the default: none, the schedule goes on from
 * the next time to come), `latest` (the most recent only, unless a due time is on time anyway) or
 * `all` (each, oldest first, at most MAX_CATCH_UP = 100 due times: the latest 100; older ones are
 * skipped and recorded). Due times passed less than 60 s ago always start.
 */
export const ScheduleCatchUpSchema = z.enum(['none', 'latest', 'all']);
export type ScheduleCatchUp = z.infer<typeof ScheduleCatchUpSchema>;

/**
 * One schedule of a workflow: its latest version starts an instance at each due time of `cron`
 * (5 fields, minute first, or 6 with seconds first) read in `timezone` (IANA, default UTC), with
 * `vars` as the start variables. `overlap` (default `skip`) and `catchUp` (default `none`) are
 * explained on {@link ScheduleOverlapSchema} and {@link ScheduleCatchUpSchema}; `paused` is where
 * the schedule starts when first deployed (pause and resume by hand change it later).
 */
export const ScheduleSchema = z.strictObject({
  id: IdSchema,
  cron: z.string().min(1),
  timezone: z.string().min(1).optional(),
  vars: z.record(z.string(), z.unknown()).optional(),
  overlap: ScheduleOverlapSchema.optional(),
  catchUp: ScheduleCatchUpSchema.optional(),
  paused: z.boolean().optional(),
});
export type Schedule = z.infer<typeof ScheduleSchema>;

/** A whole workflow definition, format 1. */
export const WorkflowSchema = z.strictObject({
  format: z.literal(1).optional(),
  name: nameText(200),
  description: z.string().optional(),
  deadlineMs: z.number().int().min(1).max(31_536_000_000).optional(),
  inputSchema: z.record(z.string(), z.unknown()).optional(),
  concurrency: ConcurrencySchema.optional(),
  /** The priority of its instances unless a start gives one. */
  priority: PrioritySchema.optional(),
  retention: RetentionSchema.optional(),
  /** Cron starts (engine/dsl/schedules.ts); ids unique within the workflow. */
  schedules: z.array(ScheduleSchema).max(1000).optional(),
  onFailure: OnFailureSchema.optional(),
  retry: RetryPolicySchema.optional(),
  nodes: z.array(NodeSchema),
  edges: z.array(EdgeSchema).default([]),
  ui: UiSchema.optional(),
});
/** A workflow as written (edges may be absent). */
export type WorkflowInput = z.input<typeof WorkflowSchema>;
/** A parsed workflow. */
export type Workflow = z.output<typeof WorkflowSchema>;

/** The id an edge is named by in problems and in the runtime. */
export function edgeId(edge: WorkflowEdge): string {
  return edge.id ?? `${edge.from}${edge.on === 'error' ? '-!>' : '->'}${edge.to}`;
}

/**
 * The engine's default retry policy, used where neither node nor workflow gives one.
 *
 * Like Temporal's defaults (1 s initial, coefficient 2) but bounded: 3 attempts, 60 s at most
 * between them, so a worker killed mid-attempt is recovered (the lost attempt counts) without
 * retrying forever.
 */
export const DEFAULT_RETRY: ResolvedRetryPolicy = {
  maxAttempts: 3,
  initialIntervalMs: 1000,
  backoffCoefficient: 2,
  maxIntervalMs: 60_000,
  jitter: 0,
};

/** Fills a retry policy from node, then workflow, then `fallback`. */
export function resolveRetry(
  node: RetryPolicy | undefined,
  workflow: RetryPolicy | undefined,
  fallback: ResolvedRetryPolicy = DEFAULT_RETRY,
): ResolvedRetryPolicy {
  return {
    maxAttempts: node?.maxAttempts ?? workflow?.maxAttempts ?? fallback.maxAttempts,
    initialIntervalMs: node?.initialIntervalMs ?? workflow?.initialIntervalMs ?? fallback.initialIntervalMs,
    backoffCoefficient:
      node?.backoffCoefficient ?? workflow?.backoffCoefficient ?? fallback.backoffCoefficient,
    maxIntervalMs: node?.maxIntervalMs ?? workflow?.maxIntervalMs ?? fallback.maxIntervalMs,
    jitter: node?.jitter ?? workflow?.jitter ?? fallback.jitter,
  };
}

/** How far above log(cap) a delay's log may be and still be computed directly (a 1e-9 ratio). */
const LOG_MARGIN = 1e-9;

/**
 * Delay before attempt `attempt + 1`, after attempt `attempt` (1-based) failed, in ms.
 *
 * min(initialIntervalMs × backoffCoefficient^(attempt−1), maxIntervalMs) (DESIGN.md "Rules
 * pinned", Temporal's formula), rounded to whole ms; `random` (0–1) applies jitter, which only
 * shortens the delay. Finite for any attempt and any coefficient ≥ 1 (1e308 included): the
 * power is compared with the cap in log space first, and only computed when it is below the cap
 * (so it cannot overflow, and below the cap it is exactly what `**` gives). An attempt that is
 * not a number ≥ 1 counts as 1.
 */
export function backoffDelayMs(policy: ResolvedRetryPolicy, attempt: number, random = Math.random): number {
  const n = attempt >= 1 ? Math.floor(attempt) : 1;
  const cap = policy.maxIntervalMs;
  const first = policy.initialIntervalMs;
  let delay: number;
  if (first === 0 || cap === 0) delay = 0;
  else if (policy.backoffCoefficient === 1) delay = Math.min(first, cap);
  else {
    const log = Math.log(first) + (n - 1) * Math.log(policy.backoffCoefficient);
    // The margin absorbs log's rounding: at or below it the power is at most a hair over the cap.
    delay = log > Math.log(cap) + LOG_MARGIN ? cap : Math.min(cap, Math.round(first * policy.backoffCoefficient ** (n - 1)));
  }
  if (policy.jitter > 0) delay = Math.round(delay * (1 - policy.jitter * random()));
  return Math.max(0, delay);
}
