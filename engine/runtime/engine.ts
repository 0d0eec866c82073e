/**
 * The engine: a storage backend, its node registry, the worker loop, and the operations people
 * and hosts call — wired together here, implemented by responsibility: workflow management
 * (workflows.ts), instance starts (below), the actions people take (manual-actions.ts), the reads
 * (the backend's read model), the worker (worker.ts) and, under all of them, the one state
 * machine (state-machine/) every change of an instance goes through.
 */
import os from 'node:os';
import { randomUUID } from 'node:crypto';
import { EngineError } from '../errors';
import { isTerminal, unstorableText } from '../vocabulary';
import type { RunnelDb } from '../db/open-database';
import { openSqliteStorage, type SqliteStorage, type SqliteStorageOptions } from '../db/sqlite-storage';
import { isPostgresUrl, redactUrl } from '../db/postgres/errors';
import { openPostgresStorage, type PostgresStorageOptions } from '../db/postgres/storage';
import type { InstanceFilter, InstanceView, StorageBackend } from '../store/port';
import type { WorkflowInput } from '../dsl/schema';
import { checkVariables } from '../dsl/input-schema';
import { exportWorkflow } from '../dsl/export';
import { createDefaultRegistry, type NodeRegistry } from '../nodes/registry';
import type { CompiledWorkflow } from './compiled';
import { systemClock, type Clock } from './clock';
import { EventHub, type EngineListener } from './events';
import { Faults } from './faults';
import { loadWorkflow, transact, workflowIn, type RuntimeContext } from './context';
import * as workflows from './workflows';
import * as actions from './manual-actions';
import * as schedules from './schedules';
import { createInstance } from './state-machine/instance';
import { slotFor } from './concurrency-key';
import { startInstances } from './state-machine/turn';
import { loadState, planFork, stateAt, type HistoryPoint, type InstanceAt } from './time-travel';
import { forkInstance } from './state-machine/fork';
import type { Tx } from './state-machine/tx';
import { Worker, type WorkerOptions } from './worker';
import { DEFAULT_RETENTION, DEFAULT_RETENTION_BATCH, keepAfter, mergeRetention, RetentionPass, runPrune, type PruneOptions, type PruneReport, type RetentionPolicy } from './retention';
import { deleteInstance } from './state-machine/retention';
import * as database from './database';
import type { BackupResult } from '../db/backup';
import type { CheckReport } from '../db/check';
import type { PurgeCounts } from '../store/queries';
import { addPurge, noPurge } from './state-machine/retention';

export type { DeployResult, SavedWorkflow } from './workflows';
export type { ScheduleInfo } from './schedules';
export type { ApproveOptions, ResumeOptions } from './manual-actions';
export { diffVariables, type VariablesDiff } from './state-machine/manual';
export type { Suspension } from '../store/queries';

/** Options of {@link Engine.open}. */
export interface EngineOptions extends SqliteStorageOptions, Omit<PostgresStorageOptions, keyof SqliteStorageOptions>, Partial<WorkerOptions> {
  /** Node types; default: the built-ins. */
  registry?: NodeRegistry;
  /** Time source; default the wall clock. Tests pass a ManualClock or OffsetClock. */
  clock?: Clock;
  /** Armed fault points (tests only); default from `RUNNEL_FAULTS`. */
  faults?: Faults;
  /**
   * Whether a save checks the workflows its `subworkflow` and `map` nodes call against the
   * deployed ones (default true). The CLI's rehearsal on a scratch database turns it off: the
   * workflows called are in the real database, checked by the real save.
   */
  checkWorkflowCalls?: boolean;
  /**
   * The default retention policy (days ended instances are kept, per end status; null: for ever),
   * over {@link DEFAULT_RETENTION}; a workflow's own `retention` wins field by field. `false`:
   * this engine's worker deletes nothing (`prune` by hand still uses the defaults).
   *
   * @throws EngineError INVALID_INPUT (at construction) naming a field that is not 0–36,500 days or null.
   */
  retention?: Partial<RetentionPolicy> | false;
  /** How often the worker starts a retention pass, ms of wall time (default 60 000). */
  retentionIntervalMs?: number;
  /** Root instances per retention transaction (default 500). */
  retentionBatchSize?: number;
}

/** Options of {@link Engine.start}. */
export interface StartOptions {
  /** Default: the latest version. */
  version?: number;
  /** Initial global variables, checked against the workflow's `inputSchema`. */
  variables?: Record<string, unknown>;
  businessKey?: string;
  actor?: string;
  /** Higher first when workers claim work (an integer, PRIORITY_RANGE in engine/vocabulary.ts); default: the workflow's `priority`, else 0. */
  priority?: number;
  /** A test run: it runs for real, but the metrics and the default instance list leave it out; its child instances are test runs too. */
  test?: boolean;
  /**
   * A test run's pinned results by node id (needs `test`): a pinned node completes with its
   * result instead of running its handler (an http or custom node calls nothing; an approval or
   * a delay does not wait), and its compensation does nothing.
   */
  pins?: Record<string, unknown>;
}

/**
 * Checks a start's `test` and `pins` against the workflow version.
 *
 * @throws EngineError INVALID_INPUT naming the field: `pins` without `test: true`, or
 *   `pins.<id>` for an id that is no node of the version.
 */
function checkPins(wf: CompiledWorkflow, options: StartOptions): void {
  if (options.pins === undefined) return;
  if (options.test !== true) {
    throw new EngineError('INVALID_INPUT', 'pins: pinned results are for test runs only (start it with test: true)', { details: { field: 'pins' } });
  }
  for (const nodeId of Object.keys(options.pins)) {
    if (!wf.nodes.has(nodeId)) {
      const known = [...wf.nodes.keys()].map((id) => JSON.stringify(id)).join(', ');
      throw new EngineError('INVALID_INPUT', `pins.${nodeId}: workflow ${wf.name} v${wf.version} has no node "${nodeId}" (its nodes: ${known})`, {
        details: { field: `pins.${nodeId}`, nodeId },
      });
    }
  }
}

/** An engine over one storage backend. */
export class Engine {
  readonly storage: StorageBackend;
  readonly registry: NodeRegistry;
  readonly clock: Clock;
  readonly owner: string;
  private readonly hub = new EventHub();
  private readonly worker: Worker;
  private readonly opts: WorkerOptions;
  private readonly ctx: RuntimeContext;
  /** The default retention policy (EngineOptions.retention over {@link DEFAULT_RETENTION}). */
  readonly retention: RetentionPolicy;
  /** Whether this engine's worker applies retention (false with `retention: false`). */
  readonly retentionEnabled: boolean;

  constructor(storage: StorageBackend, options: Omit<EngineOptions, keyof SqliteStorageOptions | keyof PostgresStorageOptions> = {}) {
    this.storage = storage;
    this.registry = options.registry ?? createDefaultRegistry();
    this.clock = options.clock ?? systemClock;
    this.owner = options.owner ?? `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    const leaseMs = options.leaseMs ?? 30_000;
    this.opts = {
      owner: this.owner,
      concurrency: options.concurrency ?? 32,
      leaseMs,
      pollIntervalMs: options.pollIntervalMs ?? 50,
      maxResultBytes: options.maxResultBytes ?? 1024 * 1024,
      stallMs: options.stallMs ?? Math.max(leaseMs * 10, 60_000),
    };
    const compiled = new Map<number, CompiledWorkflow>();
    this.retention = mergeRetention(DEFAULT_RETENTION, options.retention === false ? undefined : options.retention);
    this.retentionEnabled = options.retention !== false;
    const retentionBatch = options.retentionBatchSize ?? DEFAULT_RETENTION_BATCH;
    const retentionPass =
      options.retention === false
        ? undefined
        : new RetentionPass(storage, { defaults: this.retention, now: () => this.clock.now(), batchSize: retentionBatch });
    this.worker = new Worker(
      {
        storage,
        clock: this.clock,
        events: this.hub,
        // Fault points are for tests: the environment arms them only with RUNNEL_ENABLE_FAULTS=1 too.
        faults: options.faults ?? Faults.fromEnv(process.env.RUNNEL_ENABLE_FAULTS === '1' ? process.env.RUNNEL_FAULTS : undefined),
        workflow: (id, q) => workflowIn(this.ctx, id, q),
        loadWorkflow: (id) => loadWorkflow(this.ctx, id),
        ...(retentionPass ? { retention: { pass: retentionPass, intervalMs: Math.max(10, options.retentionIntervalMs ?? 60_000) } } : {}),
      },
      this.opts,
    );
    this.ctx = {
      storage,
      clock: this.clock,
      registry: this.registry,
      hub: this.hub,
      worker: this.worker,
      opts: this.opts,
      compiled,
      checkWorkflowCalls: options.checkWorkflowCalls !== false,
      schedulesChanged: () => this.worker.schedulesChanged(),
    };
  }

  /**
   * Opens the database at `location` and builds an engine on it: a `postgres://` or
   * `postgresql://` URL is a PostgreSQL database (engine/db/postgres/storage.ts: connected,
   * migrated), anything else a SQLite file (created and migrated if needed; {@link SqliteEngine.open}).
   *
   * @throws EngineError DATABASE_CORRUPT, DATABASE_NEWER, DATABASE_READONLY, NOT_FOUND (a missing
   *   file, or a database the server does not have), DATABASE_UNAVAILABLE (the server refused or
   *   cannot be reached; the password is never in the message).
   */
  static open(location: string, options: EngineOptions = {}): Engine {
    if (isPostgresUrl(location)) return new Engine(openPostgresStorage(location, options), options);
    return SqliteEngine.open(location, options);
  }

  /** Listens to engine events (after commit). Returns the remover. */
  on(listener: EngineListener): () => void {
    return this.hub.on(listener);
  }

  private stopWatching: (() => void) | undefined;

  /**
   * Watches the database for commits made by OTHER connections (another process's `deploy` or
   * `demo`, another engine on the same file) and emits `{ type: 'store.changed' }` after one, at
   * most once per `intervalMs`; this engine's own writes never trigger it. Idempotent; stopped by
   * the returned function or by {@link close}.
   */
  watchExternalChanges(intervalMs = 500): () => void {
    if (this.stopWatching) return this.stopWatching;
    const stop = this.storage.watchChanges(() => this.hub.emit([{ type: 'store.changed' }]), intervalMs);
    const once = (): void => {
      if (this.stopWatching !== once) return;
      stop();
      this.stopWatching = undefined;
    };
    this.stopWatching = once;
    return once;
  }

  /** The compiled workflow version `id` (cached: versions never change). @throws EngineError NOT_FOUND, INVALID_WORKFLOW */
  workflowById(id: number): Promise<CompiledWorkflow> {
    return loadWorkflow(this.ctx, id);
  }

  // ---------------------------------------------------------------- workflows

  /** Validates and saves a workflow definition (see workflows.ts deployWorkflow). @throws EngineError INVALID_WORKFLOW */
  deploy(raw: unknown): Promise<workflows.DeployResult> {
    return workflows.deployWorkflow(this.ctx, raw);
  }

  /** A live workflow version's row: the latest when `version` is omitted. @throws EngineError NOT_FOUND */
  workflowRow(name: string, version?: number) {
    return workflows.workflowRow(this.ctx, name, version);
  }

  /** The definition of a workflow version, as saved (lossless DSL JSON). @throws EngineError NOT_FOUND */
  getWorkflow(name: string, version?: number): Promise<workflows.SavedWorkflow> {
    return workflows.getWorkflow(this.ctx, name, version);
  }

  /** Every workflow with its latest version and instance counts. */
  listWorkflows() {
    return workflows.listWorkflows(this.ctx);
  }

  /** Versions of a workflow, newest first. */
  listVersions(name: string) {
    return workflows.listVersions(this.ctx, name);
  }

  /** The export of a workflow version (DSL format 1 JSON, `ui` included). @throws EngineError NOT_FOUND */
  async exportWorkflow(name: string, version?: number): Promise<WorkflowInput> {
    return exportWorkflow((await this.getWorkflow(name, version)).definition);
  }

  /** Validates a definition as a save would, the workflows it calls included, without saving (see workflows.ts). */
  validate(raw: unknown) {
    return workflows.validateDefinition(this.ctx, raw);
  }

  /** Renames a workflow, every version with it (see workflows.ts). @throws EngineError NOT_FOUND, CONFLICT, INVALID_INPUT */
  renameWorkflow(name: string, newName: string) {
    return workflows.renameWorkflow(this.ctx, name, newName);
  }

  /** Deletes a workflow with no live instance (see workflows.ts). @throws EngineError NOT_FOUND, INVALID_STATE */
  deleteWorkflow(name: string) {
    return workflows.deleteWorkflow(this.ctx, name);
  }

  // ---------------------------------------------------------------- schedules

  private scheduleAdmin(): schedules.ScheduleAdmin {
    return {
      storage: this.storage,
      clock: this.clock,
      events: this.hub,
      workflow: (id, q) => workflowIn(this.ctx, id, q),
      loadWorkflow: (id) => loadWorkflow(this.ctx, id),
      applyAborts: (aborts) => this.worker.applyAborts(aborts),
      changed: () => this.worker.schedulesChanged(),
    };
  }

  /** The live schedules (of one workflow when given), with their next due times (see schedules.ts). @throws EngineError NOT_FOUND */
  listSchedules(workflow?: string): Promise<schedules.ScheduleInfo[]> {
    return schedules.listSchedules(this.scheduleAdmin(), workflow);
  }

  /** Pauses a schedule (see schedules.ts setSchedulePaused). @throws EngineError NOT_FOUND */
  pauseSchedule(workflow: string, id: string, options: { actor?: string } = {}): Promise<schedules.ScheduleInfo> {
    return schedules.setSchedulePaused(this.scheduleAdmin(), workflow, id, true, options.actor);
  }

  /** Resumes a paused schedule from its next due time after now. @throws EngineError NOT_FOUND */
  resumeSchedule(workflow: string, id: string, options: { actor?: string } = {}): Promise<schedules.ScheduleInfo> {
    return schedules.setSchedulePaused(this.scheduleAdmin(), workflow, id, false, options.actor);
  }

  /** Starts a schedule's instance now, its overlap rule applied (see schedules.ts triggerSchedule). @throws EngineError NOT_FOUND, INVALID_STATE, INVALID_VARIABLES */
  triggerSchedule(workflow: string, id: string, options: { actor?: string } = {}): Promise<number> {
    return schedules.triggerSchedule(this.scheduleAdmin(), workflow, id, options.actor);
  }

  // ---------------------------------------------------------------- instances

  /**
   * Starts an instance of a workflow (the latest version unless `version` is given).
   *
   * @throws EngineError NOT_FOUND (workflow/version), INVALID_VARIABLES (not an object, failing
   * `inputSchema` — the failing fields are named — or above the size limit), INVALID_WORKFLOW
   * (an `inputSchema` that does not compile: see checkVariables), INVALID_INPUT (an empty
   * `businessKey`: no signal could name it).
   */
  async start(name: string, options: StartOptions = {}): Promise<number> {
    checkBusinessKey(options.businessKey);
    const wf = await this.workflowById((await this.workflowRow(name, options.version)).id);
    const variables = options.variables ?? {};
    checkVariables(wf.def, variables);
    checkPins(wf, options);
    const json = JSON.stringify(variables);
    if (Buffer.byteLength(json) > this.opts.maxResultBytes) {
      throw new EngineError('INVALID_VARIABLES', `variables are ${Buffer.byteLength(json)} bytes, above the limit of ${this.opts.maxResultBytes}`);
    }
    const slot = await slotFor(wf, variables);
    const [id] = await this.createInstances((tx) => [
      createInstance(tx, wf, json, options.businessKey ?? null, {
        actor: options.actor,
        slot,
        priority: options.priority ?? wf.def.priority,
        ...(options.test === true ? { test: true, pins: options.pins } : {}),
      }),
    ]);
    return id as number;
  }

  /**
   * Starts many instances in one transaction (bulk launches and benchmarks).
   *
   * @throws as {@link start}; nothing is written when one fails.
   */
  async startMany(name: string, variablesList: Record<string, unknown>[], options: Omit<StartOptions, 'variables'> = {}): Promise<number[]> {
    checkBusinessKey(options.businessKey);
    const wf = await this.workflowById((await this.workflowRow(name, options.version)).id);
    for (const v of variablesList) checkVariables(wf.def, v);
    const slots: (string | undefined)[] = [];
    for (const v of variablesList) slots.push(await slotFor(wf, v));
    return this.createInstances((tx) =>
      variablesList.map((v, i) => createInstance(tx, wf, JSON.stringify(v), options.businessKey ?? null, { actor: options.actor, slot: slots[i], priority: options.priority ?? wf.def.priority }),
      ),
    );
  }

  /**
   * Creates instances in one write transaction with eager dispatch offered (their entry nodes
   * start at once, leased to this process's worker, while it has free slots), then launches what
   * was dispatched, or frees its slots when the transaction failed.
   */
  private async createInstances(create: (tx: Tx) => number[]): Promise<number[]> {
    let offer: ReturnType<Worker['offerDispatch']> | undefined;
    try {
      const { ids, claimed } = await transact(this.ctx, (tx) => startInstances(tx, create), (now) => {
        // The transaction may run more than once (a backend's retry): an earlier run's slots go back.
        offer?.abandon();
        offer = this.worker.offerDispatch(now);
        return offer.dispatch;
      });
      offer?.launch(claimed);
      this.worker.wake();
      return ids;
    } catch (err) {
      offer?.abandon();
      throw err;
    }
  }

  /** Records a person's decision on a WAITING approval (see manual-actions.ts). */
  approve(instanceId: number, nodeId: string, decision: actions.ApproveOptions): Promise<void> {
    return actions.approve(this.ctx, instanceId, nodeId, decision);
  }

  /** Resumes a SUSPENDED instance (see manual-actions.ts). */
  resume(instanceId: number, options: actions.ResumeOptions): Promise<void> {
    return actions.resume(this.ctx, instanceId, options);
  }

  /** Cancels a live instance (see manual-actions.ts). */
  cancel(instanceId: number, options: { compensate?: boolean; actor?: string; expectedVersion?: number } = {}): Promise<void> {
    return actions.cancel(this.ctx, instanceId, options);
  }

  /** Sends an event to a live instance, by id or business key (see manual-actions.ts `signal`). */
  signal(target: { id?: number; businessKey?: string }, options: actions.SignalOptions) {
    return actions.signal(this.ctx, target, options);
  }

  /** Pauses a live instance: it starts no node until unpaused (see manual-actions.ts). */
  pause(instanceId: number, options: { actor?: string } = {}): Promise<void> {
    return actions.pause(this.ctx, instanceId, options);
  }

  /** Unpauses an instance (see manual-actions.ts). */
  unpause(instanceId: number, options: { actor?: string } = {}): Promise<void> {
    return actions.unpause(this.ctx, instanceId, options);
  }

  /** Retries a FAILED instance (see manual-actions.ts). */
  retry(instanceId: number, options: { actor?: string; expectedVersion?: number } = {}): Promise<void> {
    return actions.retry(this.ctx, instanceId, options);
  }

  /**
   * Deletes one ended instance with everything it owns (node states, schedule rows, dead letters,
   * history, events) and the child instances its nodes started — retention's own path. Returns
   * the rows deleted per table.
   *
   * @throws EngineError NOT_FOUND; INVALID_STATE (live, a child instance of it is live, or it is a
   *   child instance itself: those go with their parent); CONFLICT (history above `keepHistoryAfter`).
   */
  deleteInstance(id: number, options: { keepHistoryAfter?: number } = {}): Promise<PurgeCounts> {
    this.assertWritable();
    return this.storage.write((q) => {
      const keep = keepAfter(q, options.keepHistoryAfter);
      return deleteInstance(q, id, keep === undefined ? {} : { keepHistoryAfter: keep });
    });
  }

  /**
   * Deletes every ended test run (`start` with `test`) with everything it owns and its child
   * instances, one tree per transaction (as {@link deleteInstance}). Live test runs, and trees
   * with a live child, are left and counted in `live`; a tree whose history a change-feed consumer
   * has not read yet is left and counted in `kept`.
   *
   * @returns the rows deleted per table, the test runs deleted (`runs`, child instances not
   *   counted), and those left.
   */
  async deleteTestRuns(): Promise<{ deleted: PurgeCounts; runs: number; live: number; kept: number }> {
    this.assertWritable();
    const out = { deleted: noPurge(), runs: 0, live: 0, kept: 0 };
    let beforeId: number | undefined;
    for (;;) {
      const page = await this.storage.read.listInstances({ test: true, limit: 500, ...(beforeId === undefined ? {} : { beforeId }) });
      for (const item of page) {
        if (item.parentId !== null && item.parentId !== undefined) continue; // deleted with its root
        if (!isTerminal(item.status as Parameters<typeof isTerminal>[0])) {
          out.live++;
          continue;
        }
        try {
          addPurge(out.deleted, await this.deleteInstance(item.id));
          out.runs++;
        } catch (err) {
          if (!(err instanceof EngineError)) throw err;
          if (err.code === 'INVALID_STATE') out.live++;
          else if (err.code === 'CONFLICT') out.kept++;
          else if (err.code !== 'NOT_FOUND') throw err;
        }
      }
      const last = page[page.length - 1];
      if (page.length < 500 || last === undefined) return out;
      beforeId = last.id;
    }
  }

  /**
   * Deletes ended instances in batches (each a short transaction): by the retention policies, or
   * every one that ended more than `olderThanMs` ago; only counts with `dryRun`. See ./retention.ts.
   *
   * @throws EngineError INVALID_INPUT, DATABASE_READONLY; storage errors (batches done stay done).
   */
  /** The database's sizes, instances by age, retention and consumers (engine/runtime/database.ts). */
  databaseInfo(): Promise<database.DatabaseInfo> {
    return database.databaseInfo(this.storage, { now: this.clock.now(), retention: this.retention, retentionEnabled: this.retentionEnabled });
  }

  /**
   * Backs the SQLite file up to `dest` while the worker runs, emitting `operation.progress` events.
   *
   * @throws EngineError INVALID_INPUT (PostgreSQL, an existing `dest` without `force`), as {@link database.backupFile}.
   */
  backup(dest: string, options: { force?: boolean } = {}): Promise<BackupResult> {
    return database.backupFile(this.storage, dest, { force: options.force === true, progress: (p) => this.hub.emit([p]) });
  }

  /** Checks the SQLite file (integrity and the engine's invariants). @throws EngineError INVALID_INPUT on PostgreSQL. */
  checkDatabase(): CheckReport {
    return database.checkFile(this.storage);
  }

  /**
   * Gives the SQLite file's free pages back, emitting `operation.progress` events.
   *
   * @throws EngineError INVALID_INPUT (PostgreSQL), INVALID_STATE (not auto_vacuum=INCREMENTAL), as {@link database.vacuumFile}.
   */
  vacuumFreePages(): Promise<database.FreePagesResult> {
    this.assertWritable();
    return database.vacuumFile(this.storage, (p) => this.hub.emit([p]));
  }

  prune(options: PruneOptions = {}): Promise<PruneReport> {
    if (!options.dryRun) this.assertWritable();
    return runPrune(this.storage, { ...options, now: () => this.clock.now(), defaults: this.retention });
  }

  // ---------------------------------------------------------------- reads

  /** An instance with its node states, parsed. @throws EngineError NOT_FOUND */
  async getInstance(id: number) {
    const inst = await this.storage.read.instance(id);
    if (!inst) throw new EngineError('NOT_FOUND', `instance ${id} does not exist`);
    return inst;
  }

  /** An instance's id, status and version (what an action answers with). @throws EngineError NOT_FOUND */
  async instanceState(id: number): Promise<{ id: number; status: string; version: number }> {
    const s = await this.storage.read.instanceState(id);
    if (!s) throw new EngineError('NOT_FOUND', `instance ${id} does not exist`);
    return s;
  }

  /**
   * Instances matching `filter`, newest first (keyset-paged by id), each with the "why is it
   * stuck" columns (current nodes, attempt n of m, next retry, waiting for, since, reason).
   */
  listInstances(filter: InstanceFilter = {}) {
    return this.storage.read.listInstances(filter);
  }

  /** Instance count per status among instances matching `filter` (its status and paging ignored). */
  countByStatus(filter: InstanceFilter = {}) {
    return this.storage.read.countByStatus(filter);
  }

  /** Approvals waiting for a person, the longest-waiting first (the Approvals inbox), and how many in all. */
  async listApprovals(options: { workflow?: string; limit?: number } = {}) {
    const { rows, total } = await this.storage.read.approvals(options);
    const items = [];
    for (const { workflowId, ...r } of rows) {
      const config = (await this.workflowById(workflowId)).nodes.get(r.nodeId)?.def.config ?? {};
      items.push({
        ...r,
        assignee: typeof config.assignee === 'string' ? config.assignee : null,
        form: typeof config.form === 'object' && config.form !== null ? (config.form as Record<string, unknown>) : null,
      });
    }
    return { items, total };
  }

  /** The live instance waiting longest (WAITING or SUSPENDED, started first), as a list item; null when none waits. */
  oldestWaiting() {
    return this.storage.read.oldestWaiting();
  }

  /**
   * Throughput and latency over time: per bucket of `bucketMs` in [from, to), instances started,
   * completed, failed and cancelled, and the P50/P99 duration (ms) of those completed. Every
   * bucket is present (zeros where nothing happened); `t` is the bucket's start, epoch ms.
   */
  async metricsSeries(from: number, to: number, bucketMs: number, workflow?: string) {
    const rows = new Map((await this.storage.read.series(from, to, bucketMs, workflow)).map((r) => [r.bucket, r]));
    const points = [];
    for (let b = 0; from + b * bucketMs < to; b++) {
      const r = rows.get(b);
      points.push({
        t: from + b * bucketMs,
        started: r?.started ?? 0,
        completed: r?.completed ?? 0,
        failed: r?.failed ?? 0,
        cancelled: r?.cancelled ?? 0,
        p50Ms: r?.p50Ms ?? null,
        p99Ms: r?.p99Ms ?? null,
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
  async matchInstances(filter: InstanceFilter, eligible: readonly string[], limit: number): Promise<{ ids: number[]; total: number; upToId: number }> {
    const upToId = filter.upToId ?? (await this.storage.read.maxInstanceId());
    const { ids, total } = await this.storage.read.matchInstances({ ...filter, upToId }, eligible, limit);
    return { ids, total, upToId };
  }

  /**
   * Instance `id` as it was right after history entry `at` (a history id, or an ISO time: the
   * last entry at or before it). See engine/runtime/time-travel.ts.
   *
   * @throws EngineError NOT_FOUND (instance), INVALID_INPUT (field `at`: malformed, or no entry of this instance).
   */
  stateAt(id: number, at: HistoryPoint): Promise<InstanceAt> {
    return stateAt(this.storage, id, at);
  }

  /**
   * "Start a copy from here": a new instance of instance `id`'s workflow version, from its state
   * right after history entry `at` (variables as they were; nodes done then keep their results
   * and do not run; the others run — see time-travel.ts planFork). Its history starts with
   * `instance.created` carrying `forkedFrom: { id, at }` (at: the entry's id); the source's gets
   * `instance.forked`. Returns the new id.
   *
   * @throws as {@link stateAt}; EngineError INVALID_VARIABLES when the variables then are above the size limit.
   */
  async fork(id: number, at: HistoryPoint, options: { actor?: string } = {}): Promise<number> {
    const { now, doc, entry } = await loadState(this.storage, id, at);
    const wf = await this.workflowById(now.workflowId);
    const json = JSON.stringify(doc.variables);
    if (Buffer.byteLength(json) > this.opts.maxResultBytes) {
      throw new EngineError('INVALID_VARIABLES', `variables are ${Buffer.byteLength(json)} bytes, above the limit of ${this.opts.maxResultBytes}`);
    }
    const slot = await slotFor(wf, doc.variables);
    const test = now.test === true ? { test: true, pinsJson: now.pins ? JSON.stringify(now.pins) : null } : {};
    const plan = { variablesJson: json, forkedFrom: { id, at: entry.id }, nodes: planFork(doc, wf), actor: options.actor, priority: now.priority, slot, ...test };
    const forkId = await transact(this.ctx, (tx) => forkInstance(tx, wf, plan));
    this.worker.wake();
    return forkId;
  }

  /** History events of an instance, oldest first. */
  history(id: number, afterId = 0, limit = 10_000) {
    return this.storage.read.history(id, afterId, limit);
  }

  /** Counts by status, queue depth, durations (avg/P50/P99 per workflow), failures, dead letters. */
  metrics() {
    return this.storage.read.metrics();
  }

  /**
   * Whether an instance has ended or can go on only from outside: SUSPENDED, or WAITING with every
   * open node an approval, an event not sent yet, or child instances that can themselves go on
   * only from outside (or pending behind one).
   */
  async isSettled(id: number): Promise<boolean> {
    const inst = await this.storage.read.instance(id);
    if (!inst) return true;
    if (isTerminal(inst.status)) return true;
    return this.heldFromOutside(inst, 0);
  }

  /**
   * Whether a live instance can go on only from outside (see {@link isSettled}); `depth` bounds
   * the walk down its children. A child that has ended meanwhile holds nothing: its parent moves on.
   */
  private async heldFromOutside(inst: InstanceView, depth: number): Promise<boolean> {
    if (inst.status === 'SUSPENDED') return true;
    if (inst.status !== 'WAITING') return false;
    const open = inst.nodes.filter((n) => ['PENDING', 'READY', 'RUNNING', 'WAITING', 'RETRYING'].includes(n.status));
    const waiting = open.filter((n) => n.status === 'WAITING');
    if (waiting.length === 0 || !open.every((n) => n.status === 'WAITING' || n.status === 'PENDING')) return false;
    for (const n of waiting) {
      const w = n.wait as { kind?: string; received?: unknown } | undefined;
      if (w?.kind === 'approval' || (w?.kind === 'event' && w.received === undefined)) continue;
      // Children that can go on only from outside (an approval, an event, a person) hold their parent the same way.
      if (w?.kind === 'children' && depth < 20) {
        const live = await this.storage.read.listInstances({ parentId: inst.id, status: ['PENDING', 'RUNNING', 'WAITING', 'SUSPENDED', 'COMPENSATING'], limit: 1000 });
        const mine = live.filter((c) => c.parentNodeId === n.id);
        let all = mine.length > 0;
        for (const c of mine) {
          if (!all) break;
          // Read again: a child listed live may have ended since (the parent then has work).
          const child = await this.storage.read.instance(c.id);
          if (!child || isTerminal(child.status) || !(await this.heldFromOutside(child, depth + 1))) all = false;
        }
        if (all) continue;
      }
      return false;
    }
    return true;
  }

  // ---------------------------------------------------------------- worker

  /** Starts the worker loop in the background, with the backend's upkeep (SQLite: WAL checkpoints on their own thread). */
  startWorker(): void {
    this.assertWritable();
    this.worker.start();
    this.storage.startUpkeep();
  }

  /** Work needs a writable database: a read-only engine serves reads only. @throws EngineError DATABASE_READONLY */
  private assertWritable(): void {
    if (this.storage.readonly) {
      throw new EngineError('DATABASE_READONLY', `database ${this.storage.location} is open read-only; it cannot be worked`, { retryable: false });
    }
  }

  /** Stops the worker gracefully (see Worker.stop). */
  async stopWorker(graceMs?: number): Promise<void> {
    await this.worker.stop(graceMs);
    await this.storage.stopUpkeep();
  }

  /** One worker turn (tests drive the loop by hand with a ManualClock). */
  tick(): Promise<number> {
    return this.worker.tick();
  }

  /**
   * Runs the worker until `done()` is true, checking every `pollMs` (default 5).
   *
   * @throws EngineError TIMEOUT after `timeoutMs` (default: none).
   */
  async runUntil(done: () => boolean | Promise<boolean>, timeoutMs?: number, options: { pollMs?: number } = {}): Promise<void> {
    const started = Date.now();
    this.assertWritable();
    this.worker.start();
    try {
      while (!(await done())) {
        if (timeoutMs !== undefined && Date.now() - started > timeoutMs) {
          throw new EngineError('TIMEOUT', `work did not finish within ${timeoutMs} ms`);
        }
        await new Promise((r) => setTimeout(r, options.pollMs ?? 5));
      }
    } finally {
      await this.worker.stop();
    }
  }

  /**
   * Whether nothing is left for this process to do: no handler runs or waits to be launched or
   * committed here, and the queue holds no run, timer or compensation row — nor any row already
   * due (approval timeouts and deadlines are work only once due) — of a workflow this process can run.
   */
  async isIdle(): Promise<boolean> {
    if (this.worker.inflightCount > 0 || this.worker.hasPendingOutcomes) return false;
    // Work of workflows this process cannot run (a node type only another process registers) is
    // not ours to wait for.
    const except: number[] = [];
    for (;;) {
      const id = await this.storage.read.workflowWithWork(this.clock.now(), except);
      if (id === undefined) return true;
      if (await this.canRun(id)) return false;
      except.push(id);
    }
  }

  /** Whether this process has every node type workflow version `id` uses. */
  private async canRun(id: number): Promise<boolean> {
    try {
      await this.workflowById(id);
      return true;
    } catch {
      return false;
    }
  }

  private closing: Promise<void> | undefined;

  /** Stops the worker and closes the database. Safe to call twice. */
  close(): Promise<void> {
    this.closing ??= this.doClose();
    return this.closing;
  }

  private async doClose(): Promise<void> {
    this.stopWatching?.();
    // A read-only engine never worked: nothing to commit or release (and no write would succeed).
    if (!this.storage.readonly) await this.worker.stop();
    await this.storage.close();
  }
}

/** An engine over a SQLite file ({@link Engine.open}), with the file's handle for what only SQLite has. */
export class SqliteEngine extends Engine {
  /** The open file (raw handle, checkpoints; tests and the benchmark read it directly). */
  readonly db: RunnelDb;

  constructor(storage: SqliteStorage, options: Omit<EngineOptions, keyof SqliteStorageOptions | keyof PostgresStorageOptions> = {}) {
    super(storage, options);
    this.db = storage.db;
  }

  /**
   * Opens (creating and migrating if needed) the SQLite database `file` and builds an engine on it.
   *
   * @throws EngineError DATABASE_CORRUPT, DATABASE_NEWER, DATABASE_READONLY, NOT_FOUND (see openDatabase);
   *   INVALID_INPUT for a PostgreSQL URL (that is {@link Engine.open}'s).
   */
  static override open(file: string, options: EngineOptions = {}): SqliteEngine {
    if (isPostgresUrl(file)) {
      throw new EngineError('INVALID_INPUT', `${redactUrl(file)} is a PostgreSQL URL: SqliteEngine opens SQLite files (Engine.open opens either)`);
    }
    return new SqliteEngine(openSqliteStorage(file, options), options);
  }
}

/**
 * Refuses an empty business key: a signal by business key needs at least one character (the
 * API's `instance:signal`), so an instance started with "" could never be found by it. And one
 * a backend cannot store as given ({@link unstorableText}: a NUL, a lone surrogate).
 *
 * @throws EngineError INVALID_INPUT naming `businessKey`.
 */
function checkBusinessKey(key: string | undefined): void {
  if (key === '') throw new EngineError('INVALID_INPUT', 'businessKey: must not be empty (leave it out for none)', { details: { field: 'businessKey' } });
  const why = key === undefined ? undefined : unstorableText(key);
  if (why) throw new EngineError('INVALID_INPUT', `businessKey: ${why}`, { details: { field: 'businessKey' } });
}
