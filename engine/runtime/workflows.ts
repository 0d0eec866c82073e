/**
 * Workflow management: save a definition as a new version (or update the latest's designer data),
 * read, list, export, rename and delete workflows.
 */
import { EngineError } from '../errors';
import type { Workflow } from '../dsl/schema';
import { nameText, WorkflowSchema } from '../dsl/schema';
import { assertValidWorkflow, formatProblems, validateWorkflow, workflowNameSpacing, type Problem, type ValidationResult } from '../dsl/validate';
import { checkWorkflowCalls, workflowCalls, type CallLookup, type WorkflowCall } from '../dsl/validate-calls';
import { describeValueProblem, findValueProblem } from '../dsl/value-limits';
import { checkVariables } from '../dsl/input-schema';
import { definitionHash, exportWorkflow } from '../dsl/export';
import type { WorkflowSummary } from '../api/contract';
import type { WorkflowVersionRow } from '../store/port';
import type { RuntimeContext } from './context';
import { replaceSchedules } from './schedules';

/** Result of {@link deployWorkflow}. */
export interface DeployResult {
  workflowId: number;
  name: string;
  version: number;
  /** False when the definition equals the latest version's (no new version was made). */
  created: boolean;
  /**
   * True when no version was made but the save's designer data (`ui`, e.g. moved nodes) differed
   * and replaced the latest version's in place.
   */
  uiUpdated?: true;
}

/** A saved workflow version with its definition parsed. */
export interface SavedWorkflow {
  id: number;
  name: string;
  version: number;
  createdAt: number;
  definition: Workflow;
}

/**
 * Validates and saves a workflow definition. A new version is made only when the definition
 * (everything but `ui`) differs from the latest version's; designer positions alone replace the
 * latest version's `ui` in place.
 *
 * @throws EngineError INVALID_WORKFLOW with every problem in `details`.
 */
export async function deployWorkflow(ctx: RuntimeContext, raw: unknown): Promise<DeployResult> {
  const wf = assertValidWorkflow(raw, ctx.registry.catalog());
  refuseProblems(scheduleVarsProblems(wf));
  const hash = definitionHash(wf);
  const now = ctx.clock.now();
  const calls = ctx.checkWorkflowCalls && workflowCalls(wf).length > 0;
  const result = await ctx.storage.write((wq) => {
    const { workflows } = wq;
    if (calls) {
      const lookup: CallLookup = (name, version) => {
        const row = version === undefined ? workflows.latest(name) : workflows.versions(name).find((v) => v.version === version);
        return row === undefined ? undefined : workflowCalls(JSON.parse(row.dslJson));
      };
      refuseProblems(checkWorkflowCalls(wf.name, wf, lookup));
    }
    const latest = workflows.latest(wf.name);
    if (latest && latest.definitionHash === hash) {
      // A save without `ui` keeps what is stored.
      let uiUpdated = false;
      if (wf.ui !== undefined) {
        const dsl = JSON.stringify(exportWorkflow(wf));
        if (dsl !== latest.dslJson) {
          workflows.updateDsl(latest.id, dsl);
          uiUpdated = true;
        }
      }
      const result: DeployResult = { workflowId: latest.id, name: wf.name, version: latest.version, created: false };
      if (uiUpdated) result.uiUpdated = true;
      return result;
    }
    // After the deleted versions of the name, if any (their finished instances still use them).
    const version = workflows.maxVersion(wf.name) + 1;
    const incoming = new Map<string, number>();
    for (const e of wf.edges) incoming.set(e.to, (incoming.get(e.to) ?? 0) + 1);
    const id = workflows.insert({
      name: wf.name,
      version,
      dslJson: JSON.stringify(exportWorkflow(wf)),
      hash,
      now,
      nodes: wf.nodes.map((n) => ({
        nodeId: n.id,
        type: n.type,
        name: n.name ?? null,
        retryJson: JSON.stringify(n.retry ?? {}),
        timeoutMs: n.timeoutMs ?? null,
        scopeJson: JSON.stringify({ input: n.input ?? null, output: n.output ?? null }),
        onFailure: n.onFailure ?? wf.onFailure ?? 'fail',
        incoming: incoming.get(n.id) ?? 0,
      })),
    });
    // The latest version's schedules are the live ones.
    replaceSchedules(wq, wf, now);
    return { workflowId: id, name: wf.name, version, created: true };
  });
  if (result.created) ctx.schedulesChanged();
  return result;
}

/**
 * A schedule's `vars` that its workflow's `inputSchema` refuses, as problems naming the schedule
 * (`schedules[0].vars: …`): each due time would start nothing. Checked on save (Ajv compiles the
 * schema, which the renderer's live validation cannot do under its CSP).
 */
function scheduleVarsProblems(wf: Workflow): Problem[] {
  if (wf.inputSchema === undefined) return [];
  const problems: Problem[] = [];
  (wf.schedules ?? []).forEach((s, i) => {
    try {
      checkVariables(wf, s.vars ?? {});
    } catch (err) {
      if (!(err instanceof EngineError) || err.code !== 'INVALID_VARIABLES') return;
      problems.push({ code: 'INVALID_FIELD', message: `schedules[${i}].vars: ${err.message} (schedule "${s.id}")`, path: ['schedules', i, 'vars'] });
    }
  });
  return problems;
}

/** @throws EngineError INVALID_WORKFLOW listing `problems`, when there are any. */
function refuseProblems(problems: Problem[]): void {
  if (problems.length === 0) return;
  const n = problems.length;
  throw new EngineError('INVALID_WORKFLOW', `workflow is invalid (${n} problem${n === 1 ? '' : 's'}):\n${formatProblems(problems)}`, { details: problems });
}

/**
 * Validates a raw definition as a save would, without saving: the DSL checks of
 * engine/dsl/validate.ts, then the workflows its `subworkflow` and `map` nodes call, against what
 * is deployed (read here, the calls' calls too). Never throws for a bad definition.
 */
export async function validateDefinition(ctx: RuntimeContext, raw: unknown): Promise<ValidationResult> {
  const r = validateWorkflow(raw, ctx.registry.catalog());
  const own = ctx.checkWorkflowCalls ? workflowCalls(raw) : [];
  if (own.length === 0) return r;
  const name = typeof (raw as { name?: unknown }).name === 'string' ? (raw as { name: string }).name : '';
  // Every version the calls reach, read before the check (which is synchronous).
  const known = new Map<string, WorkflowCall[] | undefined>();
  const keyOf = (w: string, v?: number) => `${v ?? ''}@${w}`;
  const queue: WorkflowCall[] = [...own];
  while (queue.length > 0) {
    const c = queue.shift() as WorkflowCall;
    const key = keyOf(c.workflow, c.version);
    if (known.has(key) || c.workflow === name) continue;
    const row = await ctx.storage.read.workflowVersion(c.workflow, c.version);
    const next = row === undefined ? undefined : workflowCalls(JSON.parse(row.dslJson));
    known.set(key, next);
    if (next) queue.push(...next);
  }
  const problems = checkWorkflowCalls(name, raw, (w, v) => known.get(keyOf(w, v)));
  if (problems.length === 0) return r;
  const all = [...r.problems, ...problems];
  return r.workflow === undefined ? { ok: false, problems: all } : { ok: false, problems: all, workflow: r.workflow };
}

/** A live workflow version's row: the latest when `version` is omitted. @throws EngineError NOT_FOUND */
export async function workflowRow(ctx: RuntimeContext, name: string, version?: number): Promise<WorkflowVersionRow> {
  const row = await ctx.storage.read.workflowVersion(name, version);
  if (!row) {
    throw new EngineError('NOT_FOUND', version === undefined ? `workflow "${name}" does not exist` : `workflow "${name}" has no version ${version}`);
  }
  return row;
}

/** A live workflow version as saved (lossless DSL JSON): the latest when `version` is omitted. @throws EngineError NOT_FOUND */
export async function getWorkflow(ctx: RuntimeContext, name: string, version?: number): Promise<SavedWorkflow> {
  const row = await workflowRow(ctx, name, version);
  const raw = JSON.parse(row.dslJson) as unknown;
  // A version saved before the nesting limit may pass it: say so, rather than overflow an export.
  const nesting = findValueProblem(raw);
  if (nesting) throw new EngineError('INVALID_WORKFLOW', `workflow "${name}" v${row.version} as stored: ${describeValueProblem('its definition', nesting)}`);
  return { id: row.id, name: row.name, version: row.version, createdAt: row.createdAt, definition: WorkflowSchema.parse(raw) };
}

/** Every live workflow with its latest version and instance counts. */
export function listWorkflows(ctx: RuntimeContext): Promise<WorkflowSummary[]> {
  return ctx.storage.read.workflowSummaries();
}

/** Live versions of a workflow, newest first (empty when there is no such workflow). */
export async function listVersions(ctx: RuntimeContext, name: string): Promise<{ id: number; version: number; createdAt: number }[]> {
  return (await ctx.storage.read.workflowVersions(name)).map((r) => ({ id: r.id, version: r.version, createdAt: r.createdAt }));
}

/**
 * Renames workflow `name` to `newName`: every version moves, its stored definition's `name` and
 * hash rewritten, so the instances (which point at versions) follow. Makes no version.
 *
 * @throws EngineError NOT_FOUND; CONFLICT when `newName` is in use (by a workflow, or by a deleted
 *   one whose finished instances still name it); INVALID_INPUT for a blank name.
 */
export async function renameWorkflow(ctx: RuntimeContext, name: string, newName: string): Promise<{ name: string; versions: number }> {
  const checked = nameText(200).safeParse(newName);
  const spacing = workflowNameSpacing(newName);
  if (spacing !== undefined || !checked.success) {
    throw new EngineError('INVALID_INPUT', `newName: a workflow name is 1–200 characters, not blank, without spaces at its ends${spacing === undefined ? '' : `; it ${spacing}`}${checked.success ? '' : `, and ${checked.error.issues[0]?.message ?? 'is invalid'}`}`);
  }
  return ctx.storage.write(({ workflows, workflowSchedules }) => {
    const rows = workflows.versions(name);
    if (rows.length === 0) throw new EngineError('NOT_FOUND', `workflow "${name}" does not exist`);
    if (newName === name) return { name, versions: rows.length };
    if (workflows.nameUsed(newName)) {
      const why = workflows.latest(newName) ? '' : ' (a deleted workflow whose finished instances still use the name)';
      throw new EngineError('CONFLICT', `a workflow named "${newName}" already exists${why}`);
    }
    for (const row of rows) {
      const def = WorkflowSchema.parse({ ...(JSON.parse(row.dslJson) as Record<string, unknown>), name: newName });
      workflows.renameVersion({ id: row.id, name: newName, dslJson: JSON.stringify(exportWorkflow(def)), hash: definitionHash(def) });
      ctx.compiled.delete(row.id);
    }
    workflowSchedules.renameWorkflow(name, newName);
    // Under its new name it may close a cycle of calls (workflows that call the new name now
    // call it): refused as a save would be, the rename undone with the transaction.
    const latest = workflows.latest(newName);
    if (ctx.checkWorkflowCalls && latest) {
      const lookup: CallLookup = (n, v) => {
        const row = v === undefined ? workflows.latest(n) : workflows.versions(n).find((x) => x.version === v);
        return row === undefined ? undefined : workflowCalls(JSON.parse(row.dslJson));
      };
      const cycles = checkWorkflowCalls(newName, JSON.parse(latest.dslJson), lookup).filter((p) => p.code === 'WORKFLOW_CYCLE');
      refuseProblems(cycles);
    }
    return { name: newName, versions: rows.length };
  });
}

/**
 * Deletes workflow `name`: it leaves the list and can no longer be read or started by name.
 * Versions stay, marked deleted, for their finished instances' history (which is append-only);
 * the name is free for a new workflow.
 *
 * @throws EngineError NOT_FOUND; INVALID_STATE while any instance of it is live (the count is
 *   named and in `details.liveInstances`).
 */
export async function deleteWorkflow(ctx: RuntimeContext, name: string): Promise<{ name: string; versions: number }> {
  const now = ctx.clock.now();
  return ctx.storage.write(({ workflows, workflowSchedules }) => {
    if (workflows.versions(name).length === 0) throw new EngineError('NOT_FOUND', `workflow "${name}" does not exist`);
    const live = workflows.liveInstances(name);
    if (live > 0) {
      const them = live === 1 ? 'it' : 'them';
      throw new EngineError('INVALID_STATE', `workflow "${name}" has ${live} live instance${live === 1 ? '' : 's'}: cancel ${them} or let ${them} finish first`, {
        details: { liveInstances: live },
      });
    }
    // Its schedules go with it (a new workflow of the name brings its own).
    workflowSchedules.removeWorkflow(name);
    return { name, versions: workflows.markDeleted(name, now) };
  });
}
