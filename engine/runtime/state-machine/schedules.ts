/**
 * Schedule transitions (issue 13; engine/runtime/schedules.ts reads and drives them): fire a due
 * time — claim the schedule's row, apply catch-up and overlap, create the instances — and start
 * one by hand, each inside the caller's one write transaction.
 */
import { EngineError } from '../../errors';
import { isTerminal } from '../../vocabulary';
import type { Schedule, ScheduleCatchUp, ScheduleOverlap } from '../../dsl/schema';
import { MAX_CATCH_UP, MISSED_AFTER_MS, type CronSchedule } from '../../dsl/schedules';
import type { WorkflowScheduleRow, WriteQueries } from '../../store/port';
import type { CompiledWorkflow } from '../compiled';
import { cancelInstance, createInstance } from './instance';
import type { Tx } from './tx';

/** How many due times a `schedule.skipped` event lists (the count says how many in all). */
const LISTED_SKIPS = 20;

/** What one claim of a due schedule fires, skips, and where it goes next. */
export interface DuePlan {
  /** Due times to start, oldest first. */
  fire: number[];
  /** Missed due times skipped (newest first, at most 101 read); `more`: older ones were not even counted. */
  skipped: number[];
  more: boolean;
  /** The next due time after `now`, or null. */
  next: number | null;
}

/**
 * The due times a schedule whose next due time is `nextDueAt` fires at `now` (>= nextDueAt). Due
 * times passed at most {@link MISSED_AFTER_MS} ago are on time and fire whatever `catchUp` says
 * (a worker a few seconds late starts them as usual); older ones were missed: `none` skips them,
 * `latest` fires the most recent one when no time is on time, `all` fires each of them, up to
 * {@link MAX_CATCH_UP} due times in all (the latest ones).
 */
export function planDue(cron: CronSchedule, catchUp: ScheduleCatchUp, nextDueAt: number, now: number): DuePlan {
  const passed = cron.latest(MAX_CATCH_UP + 1, now).filter((t) => t >= nextDueAt);
  // The stored next due time is one of the expression's; should stepping back miss it, it still fires.
  if (passed.length === 0) passed.push(nextDueAt);
  const next = cron.nextAfter(now);
  const onTime = passed.filter((t) => now - t <= MISSED_AFTER_MS);
  let fire: number[];
  if (catchUp === 'all') fire = passed.slice(0, MAX_CATCH_UP);
  else if (catchUp === 'latest' && onTime.length === 0) fire = [passed[0] as number];
  else fire = onTime.slice(0, MAX_CATCH_UP);
  const fired = new Set(fire);
  const skipped = passed.filter((t) => !fired.has(t));
  return { fire: fire.reverse(), skipped, more: passed.length > MAX_CATCH_UP, next };
}

/** The business key of the instance a schedule starts for a due time. */
export function scheduleBusinessKey(scheduleId: string, dueAt: number): string {
  return `schedule:${scheduleId}:${new Date(dueAt).toISOString()}`;
}

/** A schedule about to start, read before its transaction, with what the transaction needs computed (the variables, the concurrency slot). */
export interface ScheduleStart {
  row: WorkflowScheduleRow;
  wf: CompiledWorkflow;
  def: Schedule;
  variablesJson: string;
  slot: string | undefined;
  /** Why its instances cannot start (variables refused by the workflow): the due times are skipped with it. */
  refused?: string;
}

/**
 * Starts one instance for schedule `p` at due time `dueAt` in `tx`, as `overlap` says given its
 * last instance; returns the new id, or undefined when it was skipped (recorded).
 */
function startFor(tx: Tx, q: WriteQueries, p: ScheduleStart, dueAt: number, overlap: ScheduleOverlap, actor: string, lastInstanceId: number | null): number | undefined {
  const { row, wf } = p;
  if (lastInstanceId !== null && overlap !== 'allow') {
    const last = q.instances.head(lastInstanceId);
    if (last !== undefined && !isTerminal(last.status)) {
      if (overlap === 'skip' || last.status === 'COMPENSATING') {
        recordSkip(tx, row, 'overlap', [dueAt], false, { liveInstanceId: lastInstanceId });
        return undefined;
      }
      cancelInstance(tx, lastInstanceId, false, actor);
    }
  }
  const id = createInstance(tx, wf, p.variablesJson, scheduleBusinessKey(row.scheduleId, dueAt), { actor, slot: p.slot, priority: wf.def.priority });
  q.workflowSchedules.fired({ workflow: row.workflow, scheduleId: row.scheduleId, dueAt, instanceId: id, now: tx.now });
  return id;
}

/** Records skipped due times as a `schedule.skipped` history event (no instance). */
function recordSkip(tx: Tx, row: WorkflowScheduleRow, reason: 'overlap' | 'catch-up' | 'refused', dueTimes: number[], more: boolean, extra: Record<string, unknown> = {}): void {
  if (dueTimes.length === 0) return;
  tx.q.history.append({
    instanceId: null,
    nodeId: null,
    type: 'schedule.skipped',
    at: tx.now,
    actor: `schedule:${row.scheduleId}`,
    data: {
      workflow: row.workflow,
      schedule: row.scheduleId,
      reason,
      count: dueTimes.length,
      ...(more ? { more: true } : {}),
      dueAt: dueTimes.slice(0, LISTED_SKIPS).map((t) => new Date(t).toISOString()),
      ...extra,
    },
  });
}

/**
 * Fires schedule `p` (read due at `p.row.nextDueAt`, its expression `cron`): claims the row while
 * its next due time is still the one read (else another worker fired it, or a deploy or a pause
 * changed it, and nothing happens), records the due times catch-up skips, and starts an instance
 * per due time left, each under the overlap rule. Returns the instances started.
 */
export function fireSchedule(tx: Tx, q: WriteQueries, p: ScheduleStart, cron: CronSchedule): number[] {
  const { row, wf, def } = p;
  const expected = row.nextDueAt as number;
  const started: number[] = [];
  // A version deployed since the read: its schedules are the live ones, fired from them next turn.
  if (q.workflows.latest(row.workflow)?.id !== wf.id) return started;
  const plan = planDue(cron, def.catchUp ?? 'none', expected, Math.max(tx.now, expected));
  if (!q.workflowSchedules.claim({ workflow: row.workflow, scheduleId: row.scheduleId, expectedNextDueAt: expected, nextDueAt: plan.next, now: tx.now })) return started;
  recordSkip(tx, row, 'catch-up', plan.skipped, plan.more);
  if (plan.more) console.error(`runnel worker: schedule "${row.scheduleId}" of workflow "${row.workflow}" missed more than ${MAX_CATCH_UP} due times; catchUp "all" starts the latest ${MAX_CATCH_UP} only (the rest are skipped and recorded)`);
  if (p.refused !== undefined) {
    recordSkip(tx, row, 'refused', plan.fire, false, { error: p.refused });
    return started;
  }
  let last = q.workflowSchedules.get(row.workflow, row.scheduleId)?.lastInstanceId ?? null;
  for (const dueAt of plan.fire) {
    const id = startFor(tx, q, p, dueAt, def.overlap ?? 'skip', `schedule:${row.scheduleId}`, last);
    if (id !== undefined) {
      started.push(id);
      last = id;
    }
  }
  return started;
}

/**
 * Starts schedule `p` now by hand (`actor`), under its overlap rule; its next due time stays.
 * Returns the new instance's id.
 *
 * @throws EngineError INVALID_STATE when overlap `skip` finds its last instance live, or that
 *   instance is COMPENSATING (it cannot be cancelled): `details.liveInstanceId`.
 */
export function triggerNow(tx: Tx, q: WriteQueries, p: ScheduleStart, actor: string): number {
  const { row, def } = p;
  const overlap = def.overlap ?? 'skip';
  const last = row.lastInstanceId === null ? undefined : q.instances.head(row.lastInstanceId);
  if (overlap === 'skip' && last !== undefined && !isTerminal(last.status)) {
    throw new EngineError('INVALID_STATE', `schedule "${row.scheduleId}" of workflow "${row.workflow}" has a live instance (${last.id}, ${last.status}) and its overlap is "skip": nothing started`, {
      details: { workflow: row.workflow, schedule: row.scheduleId, liveInstanceId: last.id },
    });
  }
  const started = startFor(tx, q, p, tx.now, overlap, actor, row.lastInstanceId);
  if (started === undefined) {
    throw new EngineError('INVALID_STATE', `schedule "${row.scheduleId}" of workflow "${row.workflow}": its last instance (${row.lastInstanceId ?? '?'}) is COMPENSATING and cannot be cancelled: nothing started`, {
      details: { workflow: row.workflow, schedule: row.scheduleId, liveInstanceId: row.lastInstanceId },
    });
  }
  return started;
}
