/**
 * Retention: which ended instances go, and the batches that delete them (the worker's periodic
 * pass, `runnel prune`, `Engine.prune`). The deletes themselves are one state-machine function
 * (./state-machine/retention.ts); this module turns policies into its rules and drives batches,
 * each its own short write transaction, yielding to the event loop between them.
 *
 * A workflow's policy is its latest version's `retention` (engine/dsl/schema.ts RetentionSchema),
 * each field it leaves out taken from the engine's default ({@link DEFAULT_RETENTION}, or
 * EngineOptions.retention).
 */
import { EngineError } from '../errors';
import type { StorageBackend, WriteQueries } from '../store/port';
import type { PurgeCounts } from '../store/queries';
import { MAX_RETENTION_DAYS, RetentionSchema } from '../dsl/schema';
import { addPurge, noPurge, pruneBatch, startCursors, type EndedStatus, type PruneRule, type RuleCursor } from './state-machine/retention';

/** One day, ms. */
export const DAY_MS = 86_400_000;

/** Days ended instances are kept, per end status; null keeps them for ever. */
export interface RetentionPolicy {
  completedDays: number | null;
  failedDays: number | null;
  cancelledDays: number | null;
}

/** The engine's default policy: COMPLETED and CANCELLED instances 30 days after they ended; FAILED ones for ever (a person may still look into them). */
export const DEFAULT_RETENTION: RetentionPolicy = { completedDays: 30, failedDays: null, cancelledDays: 30 };

/** Root instances per retention transaction, by default (their child instances come along). */
export const DEFAULT_RETENTION_BATCH = 500;

const FIELDS: readonly [keyof RetentionPolicy, EndedStatus][] = [
  ['completedDays', 'COMPLETED'],
  ['failedDays', 'FAILED'],
  ['cancelledDays', 'CANCELLED'],
];

/**
 * Checks one policy field given by a caller (EngineOptions, a CLI flag): a finite number of days
 * from 0 to 36,500, or null.
 *
 * @throws EngineError INVALID_INPUT naming `field`.
 */
export function checkRetentionDays(value: unknown, field: string): number | null {
  if (value === null) return null;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > MAX_RETENTION_DAYS) {
    throw new EngineError('INVALID_INPUT', `${field} must be a number of days from 0 to ${MAX_RETENTION_DAYS} (or null: kept for ever), got ${String(value)}`, {
      details: { field },
    });
  }
  return value;
}

/**
 * `base` with the fields `over` gives, each checked ({@link checkRetentionDays}).
 *
 * @throws EngineError INVALID_INPUT naming the field (`<label>.completedDays`, …).
 */
export function mergeRetention(base: RetentionPolicy, over: Partial<RetentionPolicy> | undefined, label = 'retention'): RetentionPolicy {
  const out = { ...base };
  if (over === undefined) return out;
  for (const [field] of FIELDS) if (over[field] !== undefined) out[field] = checkRetentionDays(over[field], `${label}.${field}`);
  return out;
}

/** A stored definition's retention over `defaults` (a definition that does not parse keeps the defaults). */
export function policyOf(dslJson: string, defaults: RetentionPolicy): RetentionPolicy {
  let raw: unknown;
  try {
    raw = (JSON.parse(dslJson) as { retention?: unknown }).retention;
  } catch {
    return defaults;
  }
  const parsed = RetentionSchema.safeParse(raw);
  if (raw === undefined || !parsed.success) return defaults;
  return { ...defaults, ...Object.fromEntries(Object.entries(parsed.data).filter(([, v]) => v !== undefined)) };
}

/**
 * The prune rules of the policies at `now`: per workflow (its latest version's policy over
 * `defaults`) and end status with a number of days, instances that ended more than that ago.
 */
export function policyRules(definitions: readonly { name: string; dslJson: string }[], defaults: RetentionPolicy, now: number): PruneRule[] {
  const rules: PruneRule[] = [];
  for (const d of definitions) {
    const policy = policyOf(d.dslJson, defaults);
    for (const [field, status] of FIELDS) {
      const days = policy[field];
      if (days !== null) rules.push({ status, workflow: d.name, endedBefore: now - Math.round(days * DAY_MS) });
    }
  }
  return rules;
}

/** What to prune: by the policies (the default), or everything ended before a time. */
export interface PruneOptions {
  /** Every ended instance (COMPLETED, FAILED, CANCELLED) that ended more than this long ago, ms, whatever the policies say. */
  olderThanMs?: number;
  /** Only instances of this workflow. */
  workflow?: string;
  /** Count what would be deleted, delete nothing. */
  dryRun?: boolean;
  /** Keep trees owning history with an id above this (the lowest cursor of the change-feed consumers), counted as held back. */
  keepHistoryAfter?: number;
  /** Root instances per transaction (default {@link DEFAULT_RETENTION_BATCH}). */
  batchSize?: number;
  /** After each batch: the totals so far. */
  onBatch?: (report: PruneReport) => void;
}

/** What a prune deleted (dry: would delete). */
export interface PruneReport {
  /** Rows per table. */
  deleted: PurgeCounts;
  /** Instances per status, child instances included. */
  byStatus: Record<EndedStatus, number>;
  /** Root instances kept although selected (a live instance in the tree, another transaction on it, or history not yet read). */
  heldBack: number;
  /** Of those, kept for history a change-feed consumer has not read. */
  heldForHistory: number;
  /** Transactions run. */
  batches: number;
  dryRun: boolean;
}

/**
 * The history id above which a prune keeps trees: the lowest of `given` and every registered
 * change-feed consumer's cursor (read in the batch's own transaction, so a consumer registered
 * or acknowledging meanwhile is seen by the next batch), or undefined when neither says.
 */
export function keepAfter(q: WriteQueries, given: number | undefined): number | undefined {
  const consumer = q.consumers.lowestConsumerCursor();
  if (consumer === undefined) return given;
  return given === undefined ? consumer : Math.min(given, consumer);
}

/**
 * Runs a prune to its end in batches of short write transactions, each followed by a yield to
 * the event loop (and, on SQLite, an incremental vacuum inside the batch's transaction).
 *
 * @throws EngineError INVALID_INPUT (a negative or non-finite `olderThanMs`, a `batchSize` below 1);
 *   NOT_FOUND (`workflow` names no deployed workflow);
 *   the storage's errors (DATABASE_BUSY, DATABASE_READONLY, …) — batches committed before stay deleted.
 */
export async function runPrune(
  storage: StorageBackend,
  o: PruneOptions & { now: () => number; defaults: RetentionPolicy },
): Promise<PruneReport> {
  if (o.olderThanMs !== undefined && (!Number.isFinite(o.olderThanMs) || o.olderThanMs < 0)) {
    throw new EngineError('INVALID_INPUT', `olderThan must be a duration of 0 or more, got ${o.olderThanMs} ms`, { details: { field: 'olderThan' } });
  }
  const batchSize = o.batchSize ?? DEFAULT_RETENTION_BATCH;
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new EngineError('INVALID_INPUT', `batchSize must be a whole number of 1 or more, got ${batchSize}`, { details: { field: 'batchSize' } });
  if (o.workflow !== undefined && (await storage.read.workflowVersion(o.workflow)) === undefined) {
    throw new EngineError('NOT_FOUND', `workflow "${o.workflow}" does not exist`, { details: { field: 'workflow' } });
  }
  const start = o.now();
  const rules: PruneRule[] =
    o.olderThanMs !== undefined
      ? (['COMPLETED', 'FAILED', 'CANCELLED'] as const).map((status) => ({ status, endedBefore: start - (o.olderThanMs as number), ...(o.workflow === undefined ? {} : { workflow: o.workflow }) }))
      : policyRules(await storage.write((q) => q.retention.workflowDefinitions()), o.defaults, start).filter((r) => o.workflow === undefined || r.workflow === o.workflow);
  const report: PruneReport = { deleted: noPurge(), byStatus: { COMPLETED: 0, FAILED: 0, CANCELLED: 0 }, heldBack: 0, heldForHistory: 0, batches: 0, dryRun: o.dryRun === true };
  let cursors = startCursors(rules);
  for (;;) {
    const r = await storage.write((q) => {
      const keep = keepAfter(q, o.keepHistoryAfter);
      const res = pruneBatch(q, {
        rules,
        cursors,
        limit: batchSize,
        ...(keep === undefined ? {} : { keepHistoryAfter: keep }),
        dryRun: o.dryRun === true,
      });
      if (!o.dryRun && res.deleted.instances > 0) q.retention.reclaim();
      return res;
    });
    cursors = r.cursors;
    report.batches++;
    addPurge(report.deleted, r.deleted);
    for (const s of Object.keys(r.byStatus) as EndedStatus[]) report.byStatus[s] += r.byStatus[s];
    report.heldBack += r.heldBack;
    report.heldForHistory += r.heldForHistory;
    o.onBatch?.(report);
    if (r.done) return report;
    // Between batches the write lock is free: the worker's turns and other processes' run.
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/**
 * The worker's retention: a pass over the policies, one batch per {@link RetentionPass.step}
 * (the worker's loop runs its turns between steps), started again from the lowest ids by the
 * next pass.
 */
export class RetentionPass {
  private rules: PruneRule[] | undefined;
  private cursors: RuleCursor[] = [];

  constructor(
    private readonly storage: StorageBackend,
    private readonly o: { defaults: RetentionPolicy; now: () => number; batchSize: number; keepHistoryAfter?: () => number | undefined },
  ) {}

  /**
   * Runs one batch (the pass's first reads the policies). Resolves whether the pass has more to
   * look at, and what the batch deleted.
   */
  async step(): Promise<{ more: boolean; deleted: PurgeCounts }> {
    if (this.rules === undefined) {
      const defs = await this.storage.write((q) => q.retention.workflowDefinitions());
      this.rules = policyRules(defs, this.o.defaults, this.o.now());
      this.cursors = startCursors(this.rules);
    }
    const rules = this.rules;
    const cursors = this.cursors;
    const r = await this.storage.write((q) => {
      const keep = keepAfter(q, this.o.keepHistoryAfter?.());
      const res = pruneBatch(q, { rules, cursors, limit: this.o.batchSize, ...(keep === undefined ? {} : { keepHistoryAfter: keep }) });
      if (res.deleted.instances > 0) q.retention.reclaim();
      return res;
    });
    this.cursors = r.cursors;
    if (r.done) this.rules = undefined;
    return { more: !r.done, deleted: r.deleted };
  }
}
