/**
 * The engine: one database file, its node registry, the state machine and the worker loop, and
 * the operations people and hosts call (deploy, start, approve, resume, cancel, retry) plus the
 * read side (lists, details, history, metrics).
 *
 * Everything that changes the file goes through `RunnelDb.write` (one serialized path per
 * process); operations that need expressions evaluate them first, then commit with a version
 * check, so a stale or repeated action is refused (DESIGN.md section 4).
 */
import os from 'node:os';
import { randomUUID } from 'node:crypto';
import { EngineError, serializeError } from '../errors';
import { openDatabase, type OpenOptions, type RunnelDb } from '../db/open-database';
import { createRuntimeRepository, HANDLED_FAILURE, type RuntimeRepository } from '../db/repositories/runtime-repository';
import { TERMINAL_STATUSES } from '../vocabulary';
import { createWorkflowRepository, type WorkflowRepository, type WorkflowRow } from '../db/repositories/workflow-repository';
import { startCheckpointer, type Checkpointer } from '../db/checkpointer';
import { createInstanceRepository, describeStuck, type InstanceFilter, type InstanceListRow, type InstanceRepository } from '../db/repositories/instance-repository';
import type { Workflow } from '../dsl/schema';
import { WorkflowSchema } from '../dsl/schema';
import { assertValidWorkflow } from '../dsl/validate';
import { checkVariables } from '../dsl/input-schema';
import { definitionHash, exportWorkflow } from '../dsl/export';
import { applyOutput } from '../dsl/expressions';
import { createDefaultRegistry, type NodeRegistry } from '../nodes/registry';
import { compileWorkflow, type CompiledWorkflow } from './compiled';
import { systemClock, type Clock } from './clock';
import { EventHub, type EngineListener } from './events';
import { Faults } from './faults';
import { StateMachine, type Suspension } from './state-machine';
import { decideEdges, jsonBytes, readSteps, Worker, type WorkerOptions } from './worker';

/** Options of {@link Engine.open}. */
export interface EngineOptions extends OpenOptions, Partial<WorkerOptions> {
  /** Node types; default: the built-ins. */
  registry?: NodeRegistry;
  /** Time source; default the wall clock. Tests pass a ManualClock or OffsetClock. */
  clock?: Clock;
  /** Armed fault points (tests only); default from `RUNNEL_FAULTS`. */
  faults?: Faults;
}

/** Result of {@link Engine.deploy}. */
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

/** Options of {@link Engine.start}. */
export interface StartOptions {
  /** Default: the latest version. */
  version?: number;
  /** Initial global variables, checked against the workflow's `inputSchema`. */
  variables?: Record<string, unknown>;
  businessKey?: string;
  actor?: string;
}

/** A resume action on a SUSPENDED instance (DESIGN.md section 4). */
export interface ResumeOptions {
  action: 'retry' | 'skip' | 'fail';
  /** For `skip`: the failed step's result (default null). */
  result?: unknown;
  /** Edited global variables: they replace the globals; the diff is recorded. */
  variables?: Record<string, unknown>;
  /** Refuse unless the instance's version still equals this. */
  expectedVersion?: number;
  actor?: string;
}

/** An approval decision. */
export interface ApproveOptions {
  approved: boolean;
  data?: unknown;
  comment?: string;
  actor?: string;
}

/** A variables diff: what a manual action changed. */
export interface VariablesDiff {
  added: Record<string, unknown>;
  removed: string[];
  changed: Record<string, { from: unknown; to: unknown }>;
}

/** The diff between two variable documents (top-level keys; values compared as JSON). */
export function diffVariables(before: Record<string, unknown>, after: Record<string, unknown>): VariablesDiff {
  const diff: VariablesDiff = { added: {}, removed: [], changed: {} };
  for (const [k, v] of Object.entries(after)) {
    if (!(k in before)) diff.added[k] = v;
    else if (JSON.stringify(before[k]) !== JSON.stringify(v)) diff.changed[k] = { from: before[k], to: v };
  }
  for (const k of Object.keys(before)) if (!(k in after)) diff.removed.push(k);
  return diff;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A list row as the API shows it: the summary plus the "why is it stuck" columns. */
function listItem(r: InstanceListRow) {
  return {
    id: r.id,
    workflow: r.workflow,
    workflowVersion: r.workflow_version,
    status: r.status,
    businessKey: r.business_key,
    createdAt: r.created_at,
    startedAt: r.started_at,
    endedAt: r.ended_at,
    version: r.version,
    error: r.error_json === null ? undefined : (JSON.parse(r.error_json) as unknown),
    suspension: r.suspension_json === null ? undefined : (JSON.parse(r.suspension_json) as unknown),
    ...describeStuck(r),
  };
}

/** The engine over one database file. */
export class Engine {
  readonly db: RunnelDb;
  readonly registry: NodeRegistry;
  readonly clock: Clock;
  readonly owner: string;
  private readonly repo: RuntimeRepository;
  private readonly workflows: WorkflowRepository;
  private readonly instances: InstanceRepository;
  private readonly sm: StateMachine;
  private readonly hub = new EventHub();
  private readonly compiled = new Map<number, CompiledWorkflow>();
  private readonly worker: Worker;
  private readonly opts: WorkerOptions;

  /** The WAL checkpointer thread while the worker loop runs (see startWorker). */
  private checkpointer: Checkpointer | undefined;
  private readonly walAutocheckpoint: number;
  private readonly nativeBinding: string | undefined;

  private constructor(db: RunnelDb, options: EngineOptions) {
    this.db = db;
    this.walAutocheckpoint = Math.max(0, Math.floor(options.walAutocheckpoint ?? 1000));
    this.nativeBinding = options.nativeBinding;
    this.registry = options.registry ?? createDefaultRegistry();
    this.clock = options.clock ?? systemClock;
    this.owner = options.owner ?? `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    this.repo = createRuntimeRepository(db.raw);
    this.workflows = createWorkflowRepository(db.raw);
    this.instances = createInstanceRepository(db.raw);
    this.sm = new StateMachine(this.repo, (id) => this.workflowById(id));
    this.opts = {
      owner: this.owner,
      concurrency: options.concurrency ?? 32,
      leaseMs: options.leaseMs ?? 30_000,
      pollIntervalMs: options.pollIntervalMs ?? 50,
      maxResultBytes: options.maxResultBytes ?? 1024 * 1024,
    };
    this.worker = new Worker(
      {
        db,
        repo: this.repo,
        sm: this.sm,
        clock: this.clock,
        events: this.hub,
        // Fault points are for tests: the environment arms them only with RUNNEL_ENABLE_FAULTS=1 too.
        faults: options.faults ?? Faults.fromEnv(process.env.RUNNEL_ENABLE_FAULTS === '1' ? process.env.RUNNEL_FAULTS : undefined),
        workflowById: (id) => this.workflowById(id),
      },
      this.opts,
    );
  }

  /**
   * Opens (creating and migrating if needed) the database `file` and builds an engine on it.
   *
   * @throws EngineError DATABASE_CORRUPT, DATABASE_NEWER, NOT_FOUND (see openDatabase).
   */
  static open(file: string, options: EngineOptions = {}): Engine {
    return new Engine(openDatabase(file, options), options);
  }

  /** Listens to engine events (after commit). Returns the remover. */
  on(listener: EngineListener): () => void {
    return this.hub.on(listener);
  }

  private externalWatch: { timer: ReturnType<typeof setInterval>; stop: () => void } | undefined;

  /**
   * Watches the file for commits made by OTHER connections (another process's `deploy` or
   * `demo`, another engine on the same file) and emits `{ type: 'store.changed' }` after one,
   * at most once per `intervalMs`. Cheap: one `PRAGMA data_version` per interval, which SQLite
   * changes only when another connection committed (https://sqlite.org/pragma.html#pragma_data_version);
   * this engine's own writes never trigger it. Idempotent; stopped by the returned function or
   * by {@link close}.
   */
  watchExternalChanges(intervalMs = 500): () => void {
    if (this.externalWatch) return this.externalWatch.stop;
    const read = (): number => this.db.raw.pragma('data_version', { simple: true }) as number;
    let last = read();
    const timer = setInterval(() => {
      let now: number;
      try {
        now = read();
      } catch {
        return; // busy or closing: try again next tick
      }
      if (now === last) return;
      last = now;
      this.hub.emit([{ type: 'store.changed' }]);
    }, Math.max(10, intervalMs));
    timer.unref?.();
    const stop = (): void => {
      if (this.externalWatch?.timer !== timer) return;
      clearInterval(timer);
      this.externalWatch = undefined;
    };
    this.externalWatch = { timer, stop };
    return stop;
  }

  /** The compiled workflow version `id` (cached: versions never change). */
  workflowById(id: number): CompiledWorkflow {
    let wf = this.compiled.get(id);
    if (wf) return wf;
    const row = this.workflows.byId(id);
    if (!row) throw new EngineError('NOT_FOUND', `workflow id ${id} does not exist`);
    wf = compileWorkflow(row.id, row.version, WorkflowSchema.parse(JSON.parse(row.dsl_json)), (t) => this.registry.get(t));
    this.compiled.set(id, wf);
    return wf;
  }

  // ---------------------------------------------------------------- workflows

  /**
   * Validates and saves a workflow definition. A new version is made only when the definition
   * (everything but `ui`) differs from the latest version's.
   *
   * @throws EngineError INVALID_WORKFLOW with every problem in `details`.
   */
  async deploy(raw: unknown): Promise<DeployResult> {
    const wf = assertValidWorkflow(raw, this.registry.catalog());
    const hash = definitionHash(wf);
    const now = this.clock.now();
    return this.db.write(() => {
      const latest = this.workflows.latest(wf.name);
      if (latest && latest.definition_hash === hash) {
        // Designer positions alone make no version, but they are kept: the latest version's
        // stored definition takes the new `ui` (a save without one keeps what is stored).
        let uiUpdated = false;
        if (wf.ui !== undefined) {
          const dsl = JSON.stringify(exportWorkflow(wf));
          if (dsl !== latest.dsl_json) {
            this.workflows.updateDsl(latest.id, dsl);
            uiUpdated = true;
          }
        }
        const result: DeployResult = { workflowId: latest.id, name: wf.name, version: latest.version, created: false };
        if (uiUpdated) result.uiUpdated = true;
        return result;
      }
      // After the deleted versions of the name, if any (their finished instances still use them).
      const version = this.workflows.maxVersion(wf.name) + 1;
      const incoming = new Map<string, number>();
      for (const e of wf.edges) incoming.set(e.to, (incoming.get(e.to) ?? 0) + 1);
      const id = this.workflows.insert(
        wf.name,
        version,
        JSON.stringify(exportWorkflow(wf)),
        hash,
        now,
        wf.nodes.map((n) => ({
          nodeId: n.id,
          type: n.type,
          name: n.name ?? null,
          retryJson: JSON.stringify(n.retry ?? {}),
          timeoutMs: n.timeoutMs ?? null,
          scopeJson: JSON.stringify({ input: n.input ?? null, output: n.output ?? null }),
          onFailure: n.onFailure ?? wf.onFailure ?? 'fail',
          incoming: incoming.get(n.id) ?? 0,
        })),
      );
      return { workflowId: id, name: wf.name, version, created: true };
    });
  }

  /** A workflow version's row: the latest when `version` is omitted. @throws EngineError NOT_FOUND */
  workflowRow(name: string, version?: number): WorkflowRow {
    const row = version === undefined ? this.workflows.latest(name) : this.workflows.byVersion(name, version);
    if (!row) {
      throw new EngineError('NOT_FOUND', version === undefined ? `workflow "${name}" does not exist` : `workflow "${name}" has no version ${version}`);
    }
    return row;
  }

  /** The definition of a workflow version, as saved (lossless DSL JSON). */
  getWorkflow(name: string, version?: number): { id: number; name: string; version: number; createdAt: number; definition: Workflow } {
    const row = this.workflowRow(name, version);
    return { id: row.id, name: row.name, version: row.version, createdAt: row.created_at, definition: WorkflowSchema.parse(JSON.parse(row.dsl_json)) };
  }

  /** Every workflow with its latest version and instance counts. */
  listWorkflows() {
    return this.workflows.summaries();
  }

  /** Versions of a workflow, newest first. */
  listVersions(name: string) {
    return this.workflows.versions(name).map((r) => ({ id: r.id, version: r.version, createdAt: r.created_at }));
  }

  /** The export of a workflow version (DSL format 1 JSON, `ui` included). */
  exportWorkflow(name: string, version?: number) {
    return exportWorkflow(this.getWorkflow(name, version).definition);
  }

  /**
   * Renames workflow `name` to `newName`: every version moves, its stored definition's `name`
   * and hash rewritten, so the instances (which point at versions) follow. Makes no version.
   *
   * @throws EngineError NOT_FOUND; CONFLICT when `newName` is in use (by a workflow, or by a
   *   deleted one whose finished instances still name it); INVALID_INPUT for a blank name.
   */
  async renameWorkflow(name: string, newName: string): Promise<{ name: string; versions: number }> {
    if (newName.trim() === '' || newName.length > 200) throw new EngineError('INVALID_INPUT', 'a workflow name is 1–200 characters, not only spaces');
    return this.db.write(() => {
      const rows = this.workflows.versions(name);
      if (rows.length === 0) throw new EngineError('NOT_FOUND', `workflow "${name}" does not exist`);
      if (newName === name) return { name, versions: rows.length };
      if (this.workflows.nameUsed(newName)) {
        const why = this.workflows.latest(newName) ? '' : ' (a deleted workflow whose finished instances still use the name)';
        throw new EngineError('CONFLICT', `a workflow named "${newName}" already exists${why}`);
      }
      for (const row of rows) {
        const def = WorkflowSchema.parse({ ...(JSON.parse(row.dsl_json) as Record<string, unknown>), name: newName });
        this.workflows.renameVersion(row.id, newName, JSON.stringify(exportWorkflow(def)), definitionHash(def));
        this.compiled.delete(row.id);
      }
      return { name: newName, versions: rows.length };
    });
  }

  /**
   * Deletes workflow `name`: it leaves the list and can no longer be read or started by name.
   * Versions stay in the file, marked deleted, for their finished instances' history (which is
   * append-only); the name is free for a new workflow.
   *
   * @throws EngineError NOT_FOUND; INVALID_STATE while any instance of it is live (the count is
   *   named and in `details.liveInstances`).
   */
  async deleteWorkflow(name: string): Promise<{ name: string; versions: number }> {
    const now = this.clock.now();
    return this.db.write(() => {
      if (this.workflows.versions(name).length === 0) throw new EngineError('NOT_FOUND', `workflow "${name}" does not exist`);
      const live = this.workflows.liveInstances(name);
      if (live > 0) {
        throw new EngineError('INVALID_STATE', `workflow "${name}" has ${live} live instance${live === 1 ? '' : 's'}: cancel ${live === 1 ? 'it' : 'them'} or let ${live === 1 ? 'it' : 'them'} finish first`, {
          details: { liveInstances: live },
        });
      }
      return { name, versions: this.workflows.markDeleted(name, now) };
    });
  }

  // ---------------------------------------------------------------- instances

  /**
   * Starts an instance of a workflow (the latest version unless `version` is given).
   *
   * @throws EngineError NOT_FOUND (workflow/version), INVALID_VARIABLES (not an object, failing
   * `inputSchema` — the failing fields are named — or above the size limit), INVALID_WORKFLOW
   * (an `inputSchema` that does not compile: see checkVariables).
   */
  async start(name: string, options: StartOptions = {}): Promise<number> {
    const row = this.workflowRow(name, options.version);
    const wf = this.workflowById(row.id);
    const variables = options.variables ?? {};
    checkVariables(wf.def, variables);
    const json = JSON.stringify(variables);
    if (Buffer.byteLength(json) > this.opts.maxResultBytes) {
      throw new EngineError('INVALID_VARIABLES', `variables are ${Buffer.byteLength(json)} bytes, above the limit of ${this.opts.maxResultBytes}`);
    }
    return this.createInstances((now) => this.sm.createInstance(wf, json, now, options.businessKey ?? null, options.actor));
  }

  /**
   * Starts many instances in one transaction (bulk launches and benchmarks).
   *
   * @throws as {@link start}; nothing is written when one fails.
   */
  async startMany(name: string, variablesList: Record<string, unknown>[], options: Omit<StartOptions, 'variables'> = {}): Promise<number[]> {
    const row = this.workflowRow(name, options.version);
    const wf = this.workflowById(row.id);
    for (const v of variablesList) checkVariables(wf.def, v);
    return this.createInstances((now) => variablesList.map((v) => this.sm.createInstance(wf, JSON.stringify(v), now, options.businessKey ?? null, options.actor)));
  }

  /**
   * Runs `create` (which creates instances at `now`, epoch ms read inside the transaction, after
   * any wait for the write lock) in a write transaction with eager dispatch offered, then runs
   * the entry nodes it started (or frees their slots when the transaction failed).
   */
  private async createInstances<T>(create: (now: number) => T): Promise<T> {
    let dispatched: { launch: () => void; abandon: () => void } | undefined;
    let result: T;
    try {
      result = await this.commit(() => {
        const now = this.clock.now();
        const d = this.worker.withEager(() => create(now));
        dispatched = d;
        return d.result;
      });
    } catch (err) {
      dispatched?.abandon();
      throw err;
    }
    dispatched?.launch();
    this.worker.wake();
    return result;
  }

  /** Runs `fn` in a write transaction and emits the events it produced after commit. */
  private async commit<T>(fn: () => T): Promise<T> {
    let events: typeof this.sm.events = [];
    const out = await this.db.write(() => {
      this.sm.events = [];
      try {
        return fn();
      } finally {
        events = this.sm.events;
        this.sm.events = [];
      }
    });
    this.hub.emit(events);
    return out;
  }

  private liveInstance(id: number, expectedVersion?: number) {
    const inst = this.repo.instance.get(id);
    if (!inst) throw new EngineError('NOT_FOUND', `instance ${id} does not exist`);
    if (expectedVersion !== undefined && inst.version !== expectedVersion) {
      throw new EngineError('CONFLICT', `instance ${id} changed (version ${inst.version}, expected ${expectedVersion}); reload and try again`);
    }
    return inst;
  }

  /**
   * Records a person's decision on a WAITING approval node; the decision becomes its result
   * (`{ approved, data, comment, actor, decidedAt }`) and the instance goes on.
   *
   * @throws EngineError NOT_FOUND, INVALID_STATE (no approval waits there), CONFLICT (decided meanwhile).
   */
  async approve(instanceId: number, nodeId: string, decision: ApproveOptions): Promise<void> {
    const inst = this.liveInstance(instanceId);
    const state = this.repo.nodeState.get(instanceId, nodeId);
    const wait = state?.wait_json ? (JSON.parse(state.wait_json) as { kind?: string }) : undefined;
    if (!state || state.status !== 'WAITING' || wait?.kind !== 'approval' || TERMINAL_STATUSES.has(inst.status)) {
      throw new EngineError('INVALID_STATE', `instance ${instanceId} has no approval waiting at node "${nodeId}"`);
    }
    const wf = this.workflowById(inst.workflow_id);
    const node = wf.nodes.get(nodeId);
    if (!node) throw new EngineError('NOT_FOUND', `node "${nodeId}" is not in workflow ${wf.name}`);
    const now = this.clock.now();
    const result: Record<string, unknown> = { approved: decision.approved, decidedAt: now };
    if (decision.data !== undefined) result.data = decision.data;
    if (decision.comment !== undefined) result.comment = decision.comment;
    if (decision.actor !== undefined) result.actor = decision.actor;
    const variables = JSON.parse(inst.variables_json) as Record<string, unknown>;
    const steps = this.stepsOf(instanceId);
    const patch = await applyOutput(node.def.output, result, { variables, steps });
    this.checkGivenResult(nodeId, result, { ...variables, ...patch });
    const decisions = await decideEdges(node.outgoing, { variables: { ...variables, ...patch }, steps: { ...steps, [nodeId]: result } });
    await this.commit(() => {
      const cur = this.repo.nodeState.get(instanceId, nodeId);
      if (!cur || cur.version !== state.version) throw new EngineError('CONFLICT', `approval at "${nodeId}" of instance ${instanceId} was already decided`);
      const live = this.repo.instance.get(instanceId);
      if (!live || TERMINAL_STATUSES.has(live.status)) throw new EngineError('INVALID_STATE', `instance ${instanceId} is ${live?.status ?? 'gone'}`);
      this.repo.deleteNodeSchedule.run(instanceId, nodeId);
      this.sm.history(instanceId, nodeId, 'approval.decided', now, { approved: decision.approved, data: decision.data, comment: decision.comment }, cur.attempt, decision.actor);
      this.sm.completeNode(live, wf, nodeId, result, patch, decisions, now, cur.attempt, cur.started_at);
    });
    this.worker.wake();
  }

  /**
   * Refuses a result a person gives (an approval decision, a skip's result) above the size limit,
   * or one that would take the globals above it (DESIGN.md "Rules pinned"); nothing is written.
   *
   * @throws EngineError RESULT_TOO_LARGE (user-fixable, not retryable).
   */
  private checkGivenResult(nodeId: string, result: unknown, variables: Record<string, unknown>): void {
    const limit = this.opts.maxResultBytes;
    const size = jsonBytes(result);
    const vsize = size > limit ? 0 : jsonBytes(variables);
    if (size > limit || vsize > limit) {
      const what = size > limit ? `the given result is ${size} bytes` : `the variables would be ${vsize} bytes`;
      throw new EngineError('RESULT_TOO_LARGE', `node "${nodeId}": ${what}, above the limit of ${limit} bytes`, { kind: 'user', retryable: false });
    }
  }

  private stepsOf(instanceId: number): Record<string, unknown> {
    return readSteps(this.repo, instanceId);
  }


  /**
   * Resumes a SUSPENDED instance (DESIGN.md section 4): optionally replaces its globals, then
   * retries the failed step, skips it with `result`, or fails the instance. For a failed
   * compensation, retry re-runs it, skip continues the chain and fail stops it as FAILED.
   * The action, its actor and the variables diff land in history in the same transaction.
   *
   * @throws EngineError NOT_FOUND, INVALID_STATE (not SUSPENDED), CONFLICT (version check),
   * INVALID_VARIABLES.
   */
  async resume(instanceId: number, options: ResumeOptions): Promise<void> {
    const inst = this.liveInstance(instanceId, options.expectedVersion);
    if (inst.status !== 'SUSPENDED' || !inst.suspension_json) {
      throw new EngineError('INVALID_STATE', `instance ${instanceId} is ${inst.status}, not SUSPENDED`);
    }
    const suspension = JSON.parse(inst.suspension_json) as Suspension;
    const before = JSON.parse(inst.variables_json) as Record<string, unknown>;
    if (options.variables !== undefined && !isPlainObject(options.variables)) throw new EngineError('INVALID_VARIABLES', 'variables must be a JSON object');
    const after = options.variables ?? before;
    if (jsonBytes(after) > this.opts.maxResultBytes) throw new EngineError('INVALID_VARIABLES', `variables are above the limit of ${this.opts.maxResultBytes} bytes`);
    const diff = diffVariables(before, after);
    const wf = this.workflowById(inst.workflow_id);
    const node = wf.nodes.get(suspension.nodeId);
    if (!node) throw new EngineError('NOT_FOUND', `node "${suspension.nodeId}" is not in workflow ${wf.name}`);
    const now = this.clock.now();
    let skip: { output: unknown; patch: Record<string, unknown>; decisions: Awaited<ReturnType<typeof decideEdges>> } | undefined;
    if (options.action === 'skip' && suspension.kind === 'incident') {
      const output = options.result === undefined ? null : options.result;
      const steps = this.stepsOf(instanceId);
      const patch = await applyOutput(node.def.output, output, { variables: after, steps });
      this.checkGivenResult(node.id, output, { ...after, ...patch });
      const decisions = await decideEdges(node.outgoing, { variables: { ...after, ...patch }, steps: { ...steps, [node.id]: output } });
      skip = { output, patch, decisions };
    }
    await this.commit(() => {
      const cur = this.repo.instance.get(instanceId);
      if (!cur || cur.version !== inst.version) throw new EngineError('CONFLICT', `instance ${instanceId} changed meanwhile; reload and try again`);
      if (options.variables !== undefined) this.repo.setVariables.run(JSON.stringify(after), now, instanceId);
      this.sm.history(instanceId, suspension.nodeId, 'instance.resumed', now, { action: options.action, reason: suspension.kind, diff, ...(options.result === undefined ? {} : { result: options.result }) }, undefined, options.actor ?? 'unknown');
      if (suspension.kind === 'incident') {
        if (options.action === 'fail') {
          this.sm.failInstance(instanceId, suspension.error, 'FAILED', now, options.actor);
          return;
        }
        this.repo.clearSuspension.run('RUNNING', now, instanceId);
        // Another branch's incident still open keeps the instance SUSPENDED, now showing that one.
        const stillSuspended = this.sm.suspendOnNextIncident(instanceId, node.id, now);
        const live = this.repo.instance.get(instanceId);
        if (!live) return;
        if (options.action === 'retry') {
          const st = this.repo.nodeState.get(instanceId, node.id);
          this.repo.readyNode.run((st?.attempt ?? 0) + node.retry.maxAttempts, instanceId, node.id);
          this.repo.insertSchedule.run(instanceId, node.id, 'run', now, 0, now);
          this.sm.events.push({ type: 'node.changed', instanceId, nodeId: node.id, status: 'READY' });
          this.sm.settle(instanceId, now);
        } else if (skip) {
          this.sm.history(instanceId, node.id, 'node.skipped_by_hand', now, { result: skip.output }, undefined, options.actor);
          this.sm.completeNode(live, wf, node.id, skip.output, skip.patch, skip.decisions, now, 0, null);
        }
        if (!stillSuspended) this.sm.events.push({ type: 'instance.changed', instanceId, status: 'RUNNING' });
        return;
      }
      // A failed compensation.
      if (options.action === 'fail') {
        // The chain stops: the node whose compensation failed is left as its peers not yet
        // compensated are, COMPLETED (its effect stands), not COMPENSATING as if still under way.
        this.repo.resetFailedCompensations.run(instanceId);
        this.sm.events.push({ type: 'node.changed', instanceId, nodeId: node.id, status: 'COMPLETED' });
        this.repo.endInstance.run('FAILED', null, now, now, instanceId);
        this.repo.deleteInstanceSchedule.run(instanceId);
        this.sm.history(instanceId, null, 'instance.failed', now, { reason: 'compensation stopped by hand' }, undefined, options.actor);
        this.sm.events.push({ type: 'instance.finished', instanceId, status: 'FAILED' });
        return;
      }
      this.repo.clearSuspension.run('COMPENSATING', now, instanceId);
      this.sm.events.push({ type: 'instance.changed', instanceId, status: 'COMPENSATING' });
      if (options.action === 'retry') {
        this.repo.insertSchedule.run(instanceId, node.id, 'compensate', now, 0, now);
      } else {
        this.sm.history(instanceId, node.id, 'compensation.skipped', now, undefined, undefined, options.actor);
        this.repo.setNodeStatus.run('COMPENSATED', instanceId, node.id);
        this.sm.continueCompensation(instanceId, now);
      }
    });
    this.worker.wake();
  }

  /**
   * Cancels a live instance; `compensate` runs compensations first (DESIGN.md "Rules pinned").
   *
   * @throws EngineError NOT_FOUND, INVALID_STATE (already ended, or already COMPENSATING), CONFLICT (version check).
   */
  async cancel(instanceId: number, options: { compensate?: boolean; actor?: string; expectedVersion?: number } = {}): Promise<void> {
    const now = this.clock.now();
    await this.commit(() => {
      const inst = this.liveInstance(instanceId, options.expectedVersion);
      if (TERMINAL_STATUSES.has(inst.status)) throw new EngineError('INVALID_STATE', `instance ${instanceId} already ended ${inst.status}`);
      // Cancelling again would drop the pending compensation step and end the chain half done.
      if (inst.status === 'COMPENSATING') throw new EngineError('INVALID_STATE', `instance ${instanceId} is already COMPENSATING; its compensations must finish first`);
      this.sm.cancelInstance(instanceId, options.compensate === true, now, options.actor);
    });
    this.worker.abortInstance(instanceId, new EngineError('CANCELLED', `instance ${instanceId} was cancelled`));
    this.worker.wake();
  }

  /**
   * Retries a FAILED instance from its failed node(s) — those whose failure failed the instance,
   * not those an error edge handled: they get a fresh attempt budget, nodes that were cancelled by
   * the failure become pending again, and the instance runs.
   *
   * @throws EngineError NOT_FOUND, INVALID_STATE (not FAILED, or no failed node to retry).
   */
  async retry(instanceId: number, options: { actor?: string; expectedVersion?: number } = {}): Promise<void> {
    const now = this.clock.now();
    await this.commit(() => {
      const inst = this.liveInstance(instanceId, options.expectedVersion);
      if (inst.status !== 'FAILED') throw new EngineError('INVALID_STATE', `instance ${instanceId} is ${inst.status}, not FAILED`);
      const wf = this.workflowById(inst.workflow_id);
      const nodes = this.instances.nodes(instanceId);
      // Failures an error edge handled took their error path: only the ones that failed the
      // instance are run again.
      const failed = nodes.filter((n) => n.status === 'FAILED' && n.wait_json !== HANDLED_FAILURE);
      if (failed.length === 0) throw new EngineError('INVALID_STATE', `instance ${instanceId} has no failed node to retry`);
      this.db.raw.prepare(`UPDATE instance SET status = 'RUNNING', ended_at = NULL, error_json = NULL, end_status = NULL, updated_at = ?, version = version + 1 WHERE id = ?`).run(now, instanceId);
      for (const n of failed) {
        const node = wf.nodes.get(n.node_id);
        this.repo.readyNode.run(n.attempt + (node?.retry.maxAttempts ?? 1), instanceId, n.node_id);
        this.repo.insertSchedule.run(instanceId, n.node_id, 'run', now, 0, now);
      }
      for (const n of nodes.filter((x) => x.status === 'CANCELLED')) {
        const st = this.repo.nodeState.get(instanceId, n.node_id);
        if (!st) continue;
        if (st.pending_in > 0 || wf.nodes.get(n.node_id)?.incoming.length) {
          if (st.pending_in > 0) this.repo.setNodeStatus.run('PENDING', instanceId, n.node_id);
          else {
            this.repo.setNodeStatus.run('READY', instanceId, n.node_id);
            this.repo.insertSchedule.run(instanceId, n.node_id, 'run', now, 0, now);
          }
        } else {
          this.repo.setNodeStatus.run('READY', instanceId, n.node_id);
          this.repo.insertSchedule.run(instanceId, n.node_id, 'run', now, 0, now);
        }
      }
      this.sm.history(instanceId, null, 'instance.retried', now, { nodes: failed.map((n) => n.node_id) }, undefined, options.actor);
      this.sm.events.push({ type: 'instance.changed', instanceId, status: 'RUNNING' });
    });
    this.worker.wake();
  }

  // ---------------------------------------------------------------- reads

  /**
   * An instance with its node states, parsed.
   *
   * @throws EngineError NOT_FOUND
   */
  getInstance(id: number) {
    const row = this.instances.get(id);
    if (!row) throw new EngineError('NOT_FOUND', `instance ${id} does not exist`);
    const parse = (s: string | null): unknown => (s === null ? undefined : JSON.parse(s));
    return {
      id: row.id,
      workflow: row.workflow,
      workflowVersion: row.workflow_version,
      workflowId: row.workflow_id,
      status: row.status,
      version: row.version,
      businessKey: row.business_key,
      variables: JSON.parse(row.variables_json) as Record<string, unknown>,
      input: JSON.parse(row.input_json) as Record<string, unknown>,
      error: parse(row.error_json),
      suspension: parse(row.suspension_json) as Suspension | undefined,
      createdAt: row.created_at,
      startedAt: row.started_at,
      endedAt: row.ended_at,
      updatedAt: row.updated_at,
      deadlineAt: row.deadline_at,
      nodes: this.instances.nodes(id).map((n) => ({
        id: n.node_id,
        status: n.status,
        attempt: n.attempt,
        maxAttempts: n.attempt_limit,
        output: parse(n.output_json),
        error: parse(n.error_json),
        // A failure an error edge handled waits for nothing (the marker is for retry only).
        wait: n.wait_json === HANDLED_FAILURE ? undefined : parse(n.wait_json),
        completedSeq: n.completed_seq,
        startedAt: n.started_at,
        endedAt: n.ended_at,
        nextRunAt: n.next_run_at,
      })),
    };
  }

  /**
   * Instances matching `filter`, newest first (keyset-paged by id), each with the "why is it
   * stuck" columns (current nodes, attempt n of m, next retry, waiting for, since, reason).
   */
  listInstances(filter: InstanceFilter = {}) {
    return this.instances.list(filter).map(listItem);
  }

  /** Approvals waiting for a person, the longest-waiting first (the Approvals inbox), and how many in all. */
  listApprovals(options: { workflow?: string; limit?: number } = {}) {
    const { rows, total } = this.instances.approvals(options);
    const items = rows.map((r) => {
      const wait = (r.wait_json === null ? {} : JSON.parse(r.wait_json)) as { prompt?: string; timeoutAt?: number };
      const config = this.workflowById(r.workflow_id).nodes.get(r.node_id)?.def.config ?? {};
      return {
        instanceId: r.instance_id,
        workflow: r.workflow,
        workflowVersion: r.workflow_version,
        businessKey: r.business_key,
        instanceVersion: r.instance_version,
        nodeId: r.node_id,
        nodeName: r.node_name,
        prompt: wait.prompt ?? null,
        assignee: typeof config.assignee === 'string' ? config.assignee : null,
        form: typeof config.form === 'object' && config.form !== null ? (config.form as Record<string, unknown>) : null,
        since: r.started_at,
        timeoutAt: wait.timeoutAt ?? null,
        attempt: r.attempt,
      };
    });
    return { items, total };
  }

  /** The live instance waiting longest (WAITING or SUSPENDED, started first), as a list item; null when none waits. */
  oldestWaiting() {
    const row = this.instances.oldestWaiting();
    return row === undefined ? null : listItem(row);
  }

  /**
   * Throughput and latency over time: per bucket of `bucketMs` in [from, to), instances started,
   * completed, failed and cancelled, and the P50/P99 duration (ms) of those completed. Every
   * bucket is present (zeros where nothing happened); `t` is the bucket's start, epoch ms.
   */
  metricsSeries(from: number, to: number, bucketMs: number, workflow?: string) {
    const rows = new Map(this.instances.series(from, to, bucketMs, workflow).map((r) => [r.bucket, r]));
    const points = [];
    for (let b = 0; from + b * bucketMs < to; b++) {
      const r = rows.get(b);
      points.push({
        t: from + b * bucketMs,
        started: r?.started ?? 0,
        completed: r?.completed ?? 0,
        failed: r?.failed ?? 0,
        cancelled: r?.cancelled ?? 0,
        p50Ms: r?.p50_ms ?? null,
        p99Ms: r?.p99_ms ?? null,
      });
    }
    return points;
  }

  /**
   * Ids of the instances a bulk action would touch: those matching `filter` whose status the
   * action applies to (`eligible`), up to `limit`, oldest first; `total` counts them all and
   * `upToId` is the highest instance id when counted (pass it back so the action touches that set
   * and not instances started after the preview).
   */
  matchInstances(filter: InstanceFilter, eligible: readonly string[], limit: number): { ids: number[]; total: number; upToId: number } {
    const upToId = filter.upToId ?? this.instances.maxId();
    const { ids, total } = this.instances.matchIds({ ...filter, upToId }, eligible, limit);
    return { ids, total, upToId };
  }

  /** History events of an instance, oldest first. */
  history(id: number, afterId = 0, limit = 10_000) {
    return this.instances.history(id, afterId, limit).map((h) => ({
      id: h.id,
      nodeId: h.node_id,
      type: h.type,
      at: h.at,
      attempt: h.attempt,
      actor: h.actor,
      data: h.data_json === null ? undefined : (JSON.parse(h.data_json) as unknown),
    }));
  }

  /** Counts by status, queue depth, durations (avg/P50/P99 per workflow), failures, dead letters. */
  metrics() {
    const counts: Record<string, number> = {};
    for (const c of this.instances.counts()) counts[c.status] = c.count;
    return {
      counts,
      queue: this.instances.queue(),
      durations: this.instances.durations(),
      failures: this.instances.failures(),
      deadLetters: this.instances.deadLettersWithWorkflow(),
    };
  }

  /**
   * Whether an instance has ended or can go on only by a person: SUSPENDED, or WAITING with every
   * open node an approval.
   */
  isSettled(id: number): boolean {
    const inst = this.repo.instance.get(id);
    if (!inst) return true;
    if (TERMINAL_STATUSES.has(inst.status) || inst.status === 'SUSPENDED') return true;
    if (inst.status !== 'WAITING') return false;
    const open = this.instances.nodes(id).filter((n) => ['PENDING', 'READY', 'RUNNING', 'WAITING', 'RETRYING'].includes(n.status));
    const waiting = open.filter((n) => n.status === 'WAITING');
    return waiting.length > 0 && waiting.every((n) => n.wait_json?.includes('"approval"')) && open.every((n) => n.status === 'WAITING' || n.status === 'PENDING');
  }

  // ---------------------------------------------------------------- worker

  /**
   * Starts the worker loop in the background, and WAL checkpoints on their own thread
   * (engine/db/checkpointer.ts) unless automatic checkpoints were turned off (walAutocheckpoint 0).
   */
  startWorker(): void {
    this.assertWritable();
    this.worker.start();
    if (this.checkpointer === undefined && this.walAutocheckpoint > 0 && this.db.file !== ':memory:') {
      this.checkpointer = startCheckpointer(this.db.file, this.nativeBinding === undefined ? {} : { nativeBinding: this.nativeBinding });
    }
  }

  /** Stops the checkpointer thread (the connection's automatic checkpoint stayed on throughout). */
  private async stopCheckpointer(): Promise<void> {
    const c = this.checkpointer;
    if (!c) return;
    this.checkpointer = undefined;
    await c.stop();
  }

  /** Work needs a writable file: a read-only engine serves reads only. @throws EngineError DATABASE_READONLY */
  private assertWritable(): void {
    if (this.db.readonly) {
      throw new EngineError('DATABASE_READONLY', `database ${this.db.file} is open read-only; it cannot be worked`, { retryable: false });
    }
  }

  /** Stops the worker gracefully (see Worker.stop). */
  async stopWorker(graceMs?: number): Promise<void> {
    await this.worker.stop(graceMs);
    await this.stopCheckpointer();
  }

  /** One worker turn (tests drive the loop by hand with a ManualClock). */
  tick(): Promise<number> {
    return this.worker.tick();
  }

  /**
   * Runs the worker until `done()` is true, checking after every turn.
   *
   * @throws EngineError TIMEOUT after `timeoutMs` (default: none).
   */
  async runUntil(done: () => boolean, timeoutMs?: number): Promise<void> {
    const started = Date.now();
    this.assertWritable();
    this.worker.start();
    try {
      while (!done()) {
        if (timeoutMs !== undefined && Date.now() - started > timeoutMs) {
          throw new EngineError('TIMEOUT', `work did not finish within ${timeoutMs} ms`);
        }
        await new Promise((r) => setTimeout(r, 5));
      }
    } finally {
      await this.worker.stop();
    }
  }

  /** Whether no schedule row is due now or later for work (approval timeouts and deadlines only once due) and nothing runs or waits to be launched here. */
  isIdle(): boolean {
    if (this.worker.inflightCount > 0 || this.worker.hasPendingOutcomes) return false;
    // Work of workflows this process cannot run (a node type only another process registers)
    // is not ours to wait for.
    // An approval timeout or a deadline is not work until it is due; once due it is.
    const versions = this.db.raw
      .prepare(
        `SELECT DISTINCT i.workflow_id AS id FROM schedule s JOIN instance i ON i.id = s.instance_id
          WHERE s.kind IN ('run', 'timer', 'compensate') OR s.next_run_at <= ?`,
      )
      .all(this.clock.now()) as { id: number }[];
    return versions.every(({ id }) => !this.canRun(id));
  }

  /** Whether this process has every node type workflow version `id` uses. */
  private canRun(id: number): boolean {
    try {
      this.workflowById(id);
      return true;
    } catch {
      return false;
    }
  }

  private closing: Promise<void> | undefined;

  /** Stops the worker and closes the file (after a passive checkpoint). Safe to call twice. */
  close(): Promise<void> {
    this.closing ??= this.doClose();
    return this.closing;
  }

  private async doClose(): Promise<void> {
    this.externalWatch?.stop();
    // A read-only engine never worked: nothing to commit or release (and no write would succeed).
    if (!this.db.readonly) await this.worker.stop();
    await this.stopCheckpointer();
    try {
      this.db.checkpoint('PASSIVE');
    } catch (err) {
      console.error('runnel: checkpoint at close failed', serializeError(err).message);
    }
    this.db.close();
  }
}
