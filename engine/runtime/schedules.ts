/**
 * Schedules (issue 13): cron starts of a workflow's latest version, stored in `workflow_schedule`
 * and fired by whichever worker gets there first, once per due time across processes.
 *
 * - A deploy that makes a new version replaces the live set ({@link replaceSchedules}): ids that
 *   survive keep their paused flag (and their next due time while expression and zone are the
 *   same); removed ids go.
 * - A worker fires a due time in ONE transaction (the transitions: ./state-machine/schedules.ts):
 *   it claims the row with a conditional UPDATE on
 *   the next due time it read (another worker that read the same time changes nothing and starts
 *   nothing), creates the instance(s) and records them. An instance's business key is
 *   `schedule:<id>:<due time ISO>`, its creator (history `actor`) `schedule:<id>`.
 * - While idle the worker reads one thing, the earliest unpaused due time (one index seek), at
 *   most every {@link SCHEDULE_REFRESH_MS} and sleeps toward it: 1,000 schedules cost what one does.
 * - `overlap` and `catchUp`: see engine/dsl/schema.ts ScheduleSchema. Skipped due times are
 *   recorded as `schedule.skipped` history events (no instance; data: workflow, schedule,
 *   reason `overlap` | `catch-up` | `refused`, the due times).
 */
import { EngineError } from '../errors';
import { WorkflowSchema, type ScheduleCatchUp, type ScheduleOverlap, type Workflow } from '../dsl/schema';
import { parseCron } from '../dsl/schedules';
import { checkVariables } from '../dsl/input-schema';
import type { StorageBackend, WorkflowScheduleRow, WriteQueries } from '../store/port';
import type { Clock } from './clock';
import type { CompiledWorkflow } from './compiled';
import type { EventHub } from './events';
import { slotFor } from './concurrency-key';
import { fireSchedule, triggerNow, type ScheduleStart } from './state-machine/schedules';
import { makeTx, type Abort } from './state-machine/tx';

export { planDue, scheduleBusinessKey, type DuePlan } from './state-machine/schedules';

/** Longest a worker goes without looking for the earliest due time, ms (how soon it sees a schedule another process deployed). */
export const SCHEDULE_REFRESH_MS = 1000;

/** How long a due schedule this process cannot start (a node type it lacks) is left to others, ms. */
const UNRUNNABLE_RETRY_MS = 30_000;

/** Due schedules fired per transaction batch. */
const FIRE_BATCH = 50;

/**
 * Makes the live schedules those of `wf` (its new latest version), inside the deploy's
 * transaction: new ids start at their next due time after `now` (paused when the definition says
 * so); surviving ids keep their paused flag, and their next due time when `cron` and `timezone`
 * did not change; ids no longer in the definition are removed.
 */
export function replaceSchedules(q: WriteQueries, wf: Workflow, now: number): void {
  const existing = new Map(q.workflowSchedules.forWorkflow(wf.name).map((r) => [r.scheduleId, r]));
  for (const s of wf.schedules ?? []) {
    const old = existing.get(s.id);
    existing.delete(s.id);
    const timezone = s.timezone ?? null;
    const same = old !== undefined && old.cron === s.cron && old.timezone === timezone;
    const paused = old === undefined ? s.paused === true : old.paused;
    const nextDueAt = same ? old.nextDueAt : parseCron(s.cron, s.timezone).nextAfter(now);
    q.workflowSchedules.upsert({ workflow: wf.name, scheduleId: s.id, cron: s.cron, timezone, paused, nextDueAt, now });
  }
  for (const id of existing.keys()) q.workflowSchedules.remove(wf.name, id);
}

/** What firing needs of the engine. */
export interface ScheduleDeps {
  storage: StorageBackend;
  clock: Clock;
  events: EventHub;
  /** A workflow version, compiled; inside a transaction through its queries `q`. */
  workflow(id: number, q?: WriteQueries): CompiledWorkflow;
  loadWorkflow(id: number): Promise<CompiledWorkflow>;
  /** Aborts running handlers a committed transaction cancelled (overlap `cancel-previous`). */
  applyAborts(aborts: readonly Abort[]): void;
}

/** Reads what a due schedule's transaction needs (outside it: the workflow load and the key expression are async). */
async function prepare(deps: ScheduleDeps, row: WorkflowScheduleRow): Promise<ScheduleStart | undefined> {
  const version = await deps.storage.read.workflowVersion(row.workflow);
  if (!version) return undefined;
  const wf = await deps.loadWorkflow(version.id);
  const def = wf.def.schedules?.find((s) => s.id === row.scheduleId);
  if (!def) return undefined;
  const variables = def.vars ?? {};
  try {
    checkVariables(wf.def, variables);
    return { row, wf, def, variablesJson: JSON.stringify(variables), slot: await slotFor(wf, variables) };
  } catch (err) {
    return { row, wf, def, variablesJson: '{}', slot: undefined, refused: err instanceof Error ? err.message : String(err) };
  }
}

/**
 * Fires schedule `p` in one transaction, if its due time is still the one read (else another
 * worker fired it, or a deploy or a pause changed it: nothing happens). Returns the instances started.
 */
async function fireOne(deps: ScheduleDeps, p: ScheduleStart): Promise<number[]> {
  const cron = parseCron(p.row.cron, p.row.timezone ?? undefined);
  const { result, tx } = await deps.storage.write((q) => {
    const tx = makeTx(q, deps.clock.now(), (id) => deps.workflow(id, q));
    return { result: fireSchedule(tx, q, p, cron), tx };
  });
  deps.events.emit(tx.events);
  deps.applyAborts(tx.aborts);
  return result;
}

/**
 * The worker's part: looks for due schedules at most every {@link SCHEDULE_REFRESH_MS} while none
 * is due (one index seek of the earliest due time), fires those due, and says how long the loop
 * may sleep before it should look again.
 */
export class ScheduleFirer {
  /** Engine-clock time of the next look, epoch ms (0: at the next turn). */
  private checkAt = 0;
  private failure: string | undefined;
  /** Due schedules this process does not fire until the time given (by `workflow` U+001F `id`). */
  private readonly setAside = new Map<string, number>();

  constructor(private readonly deps: ScheduleDeps) {}

  /** Looks again at the next turn (this process deployed, paused or resumed a schedule). */
  invalidate(): void {
    this.checkAt = 0;
  }

  /** Ms until the next look (0: now), for the loop's sleep. */
  dueInMs(now: number): number {
    return Math.max(0, this.checkAt - now);
  }

  /** One look: fires what is due; returns the instances started. Never throws (a failure is logged once per code and tried again a refresh later). */
  async turn(): Promise<number> {
    const now = this.deps.clock.now();
    // A clock set back leaves checkAt far ahead: never more than one refresh away.
    if (now < this.checkAt && this.checkAt - now <= SCHEDULE_REFRESH_MS) return 0;
    try {
      const next = await this.deps.storage.read.nextScheduleDue();
      if (next === null || next > now) {
        this.checkAt = Math.min(next ?? Number.MAX_SAFE_INTEGER, now + SCHEDULE_REFRESH_MS);
        return 0;
      }
      let started = 0;
      let waiting = false;
      for (const row of await this.deps.storage.read.dueSchedules(now, FIRE_BATCH)) {
        const key = `${row.workflow}\u001f${row.scheduleId}`;
        if ((this.setAside.get(key) ?? 0) > now) {
          waiting = true;
          continue;
        }
        let p: ScheduleStart | undefined;
        try {
          p = await prepare(this.deps, row);
        } catch (err) {
          // This process cannot run the workflow (a node type it lacks): a worker that can fires it.
          if (!this.setAside.has(key)) console.error(`runnel worker: schedule "${row.scheduleId}" of workflow "${row.workflow}" cannot start here (${err instanceof Error ? err.message : String(err)}); left to a worker that can, looked at again every ${UNRUNNABLE_RETRY_MS / 1000} s`);
          this.setAside.set(key, now + UNRUNNABLE_RETRY_MS);
          waiting = true;
          continue;
        }
        if (p === undefined) {
          // Read between a deploy's commit and its schedules' (or a stale version): next refresh.
          this.setAside.set(key, now + SCHEDULE_REFRESH_MS);
          waiting = true;
          continue;
        }
        this.setAside.delete(key);
        started += (await fireOne(this.deps, p)).length;
      }
      this.failure = undefined;
      // Rows set aside stay due: looking again at once would read them every turn.
      this.checkAt = waiting ? now + SCHEDULE_REFRESH_MS : 0;
      return started;
    } catch (err) {
      const code = err instanceof EngineError ? err.code : err instanceof Error ? err.name : 'ERROR';
      if (code !== this.failure) {
        this.failure = code;
        console.error(`runnel worker: firing schedules failed: ${code}: ${err instanceof Error ? err.message : String(err)} (tried again in ${SCHEDULE_REFRESH_MS / 1000} s)`);
      }
      this.checkAt = now + SCHEDULE_REFRESH_MS;
      return 0;
    }
  }
}

/** One live schedule as `schedule:list` answers it. Times are epoch ms. */
export interface ScheduleInfo {
  workflow: string;
  id: string;
  cron: string;
  timezone: string | null;
  overlap: ScheduleOverlap;
  catchUp: ScheduleCatchUp;
  paused: boolean;
  /** The next due time (null: none to come); while paused, the one it would have had. */
  nextDueAt: number | null;
  /** The next five due times from now (none while paused). */
  upcoming: number[];
  lastDueAt: number | null;
  lastInstanceId: number | null;
}

/** What the schedule management functions need of the engine. */
export interface ScheduleAdmin extends ScheduleDeps {
  /** Tells this process's worker to look at the schedules at its next turn. */
  changed(): void;
}

/**
 * The live schedules (of `workflow` only, when given), by workflow then id, each with its next
 * five due times.
 *
 * @throws EngineError NOT_FOUND when `workflow` is given and does not exist.
 */
export async function listSchedules(deps: ScheduleDeps, workflow?: string): Promise<ScheduleInfo[]> {
  if (workflow !== undefined && !(await deps.storage.read.workflowVersion(workflow))) throw unknownWorkflow(workflow);
  const rows = await deps.storage.read.workflowSchedules(workflow);
  const defs = new Map<string, Workflow | undefined>();
  const now = deps.clock.now();
  const out: ScheduleInfo[] = [];
  for (const r of rows) {
    if (!defs.has(r.workflow)) {
      const v = await deps.storage.read.workflowVersion(r.workflow);
      // Parsed, not compiled: a list needs no node type registered here.
      defs.set(r.workflow, v === undefined ? undefined : WorkflowSchema.parse(JSON.parse(v.dslJson)));
    }
    const def = defs.get(r.workflow)?.schedules?.find((s) => s.id === r.scheduleId);
    out.push({
      workflow: r.workflow,
      id: r.scheduleId,
      cron: r.cron,
      timezone: r.timezone,
      overlap: def?.overlap ?? 'skip',
      catchUp: def?.catchUp ?? 'none',
      paused: r.paused,
      nextDueAt: r.nextDueAt,
      upcoming: r.paused ? [] : parseCron(r.cron, r.timezone ?? undefined).next(5, Math.max(now, (r.nextDueAt ?? now) - 1)),
      lastDueAt: r.lastDueAt,
      lastInstanceId: r.lastInstanceId,
    });
  }
  return out;
}

function unknownWorkflow(workflow: string): EngineError {
  return new EngineError('NOT_FOUND', `workflow "${workflow}" does not exist`, { details: { workflow } });
}

/** The row of schedule `id` of `workflow` in a write transaction. @throws EngineError NOT_FOUND naming the workflow or the schedule. */
function scheduleRow(q: WriteQueries, workflow: string, id: string): WorkflowScheduleRow {
  const row = q.workflowSchedules.get(workflow, id);
  if (row) return row;
  if (!q.workflows.latest(workflow)) throw unknownWorkflow(workflow);
  const ids = q.workflowSchedules.forWorkflow(workflow).map((r) => `"${r.scheduleId}"`);
  throw new EngineError('NOT_FOUND', `workflow "${workflow}" has no schedule "${id}" (${ids.length === 0 ? 'it has no schedules' : `its schedules: ${ids.join(', ')}`})`, {
    details: { workflow, schedule: id },
  });
}

/**
 * Pauses (`paused` true) or resumes a schedule. A paused schedule starts nothing; resuming goes on
 * from the next due time after now (times passed while paused are not caught up, as Temporal's
 * paused schedules). Idempotent. The flag survives deploys of new versions that keep the id.
 *
 * @throws EngineError NOT_FOUND (workflow or schedule).
 */
export async function setSchedulePaused(deps: ScheduleAdmin, workflow: string, id: string, paused: boolean, actor?: string): Promise<ScheduleInfo> {
  await deps.storage.write((q) => {
    const row = scheduleRow(q, workflow, id);
    if (row.paused === paused) return;
    const now = deps.clock.now();
    const nextDueAt = paused ? row.nextDueAt : parseCron(row.cron, row.timezone ?? undefined).nextAfter(now);
    q.workflowSchedules.setPaused({ workflow, scheduleId: id, paused, nextDueAt, now });
    q.history.append({ instanceId: null, nodeId: null, type: paused ? 'schedule.paused' : 'schedule.resumed', at: now, actor, data: { workflow, schedule: id } });
  });
  deps.changed();
  const info = (await listSchedules(deps, workflow)).find((s) => s.id === id);
  if (!info) throw new EngineError('NOT_FOUND', `workflow "${workflow}" has no schedule "${id}"`, { details: { workflow, schedule: id } });
  return info;
}

/**
 * Starts schedule `id` of `workflow` now (paused or not), with its variables, business key
 * `schedule:<id>:<now ISO>`; its next due time does not move. The overlap rule applies as at a
 * due time: `skip` refuses while the instance it started last is live, `cancel-previous` cancels
 * that one first, `allow` starts beside it. Returns the new instance's id.
 *
 * @throws EngineError NOT_FOUND (workflow or schedule); INVALID_STATE (overlap `skip` and its last
 *   instance is live: `details.liveInstanceId`); INVALID_VARIABLES (its `vars` fail the workflow's inputSchema).
 */
export async function triggerSchedule(deps: ScheduleAdmin, workflow: string, id: string, actor?: string): Promise<number> {
  const version = await deps.storage.read.workflowVersion(workflow);
  if (!version) throw unknownWorkflow(workflow);
  const wf = await deps.loadWorkflow(version.id);
  const def = wf.def.schedules?.find((s) => s.id === id);
  const variables = def?.vars ?? {};
  if (def) checkVariables(wf.def, variables);
  const slot = def ? await slotFor(wf, variables) : undefined;
  const { result, tx } = await deps.storage.write((q) => {
    const row = scheduleRow(q, workflow, id);
    if (!def || q.workflows.latest(workflow)?.id !== wf.id) throw new EngineError('CONFLICT', `workflow "${workflow}" was deployed meanwhile: trigger again`);
    const tx = makeTx(q, deps.clock.now(), (wid) => deps.workflow(wid, q));
    const started = triggerNow(tx, q, { row, wf, def, variablesJson: JSON.stringify(variables), slot }, actor ?? `schedule:${id}`);
    return { result: started, tx };
  });
  deps.events.emit(tx.events);
  deps.applyAborts(tx.aborts);
  deps.changed();
  return result;
}
