/**
 * The contract's handlers over an {@link Engine}, and `dispatch`: the one entry every host
 * (Electron IPC, the browser host) calls with a channel name and an untrusted payload.
 *
 * Nothing here knows its transport. Handlers receive input already parsed by the channel's
 * schema and may throw EngineErrors; `dispatch` turns everything into a {@link Result}.
 */
import { stringify as toYaml } from 'yaml';
import type { z } from 'zod';
import { EngineError } from '../errors';
import { exportWorkflow, parseWorkflowText, validateWorkflow } from '../dsl';
import { describeValueProblem, findValueProblem, formatValuePath } from '../dsl/value-limits';
import type { Engine } from '../runtime/engine';
import { ackChanges, forgetConsumer, readChanges } from '../runtime/change-feed';
import { EngineMetrics } from '../runtime/metrics';
import {
  contract,
  err,
  LIMITS,
  isChannel,
  ok,
  type BulkResult,
  type Handlers,
  type InstanceState,
  type Result,
} from './contract';

/** A file-name-safe form of a workflow name (the name itself may hold `/`, `:` or spaces). */
function fileBase(name: string): string {
  const safe = name
    // eslint-disable-next-line no-control-regex -- control characters are what it removes
    .replace(/[\u0000-\u001f<>:"/\\|?*]+/g, '_')
    .replace(/^\.+/, '_')
    .trim();
  return safe === '' ? 'workflow' : safe.slice(0, 150);
}

/**
 * The contract's handler map over `engine`; `metrics` are the host's (what it serves at `GET
 * /metrics`), else ones of their own, counting from now.
 *
 * Reads go through the engine's read model; actions through its write path (the state machine)
 * and answer with the instance's state after the change, so a UI can chain `expectedVersion`.
 * Handlers throw EngineErrors (NOT_FOUND, INVALID_STATE, CONFLICT, …); `dispatch` makes them data.
 */
export function createHandlers(engine: Engine, options: { metrics?: EngineMetrics } = {}): Handlers {
  const stateOf = (id: number): Promise<InstanceState> => engine.instanceState(id);
  // The host's metrics (it serves the same ones at GET /metrics), or ones of these handlers' own.
  const metrics = options.metrics ?? new EngineMetrics(engine);

  return {
    'workflow:list': async () => engine.listWorkflows(),

    'workflow:get': async ({ name, version }) => engine.getWorkflow(name, version),

    'workflow:versions': async ({ name }) => {
      const versions = await engine.listVersions(name);
      if (versions.length === 0) throw new EngineError('NOT_FOUND', `workflow "${name}" does not exist`);
      return versions;
    },

    'workflow:save': async ({ definition }) => {
      const r = await engine.deploy(definition);
      return { workflowId: r.workflowId, name: r.name, version: r.version, created: r.created, ...(r.uiUpdated && { uiUpdated: r.uiUpdated }) };
    },

    'workflow:validate': async ({ definition }) => {
      const r = await engine.validate(definition);
      return { ok: r.ok, problems: r.problems };
    },

    'workflow:export': async ({ name, version, format }) => {
      const wf = await engine.getWorkflow(name, version);
      const definition = exportWorkflow(wf.definition);
      const text =
        format === 'yaml' ? toYaml(definition, { lineWidth: 0 }) : `${JSON.stringify(definition, null, 2)}\n`;
      return {
        name: wf.name,
        version: wf.version,
        fileName: `${fileBase(wf.name)}.workflow.${format}`,
        text,
        definition,
      };
    },

    'workflow:import': async ({ text, fileName }) => {
      const definition = parseWorkflowText(text, fileName);
      const r = validateWorkflow(definition, engine.registry.catalog());
      return { definition, ok: r.ok, problems: r.problems };
    },

    'workflow:rename': async ({ name, newName }) => engine.renameWorkflow(name, newName),

    'workflow:delete': async ({ name }) => engine.deleteWorkflow(name),

    'node:types': async () => engine.registry.describe(),

    'instance:start': async ({ workflow, version, variables, businessKey, priority, test, pins, actor }) => {
      const id = await engine.start(workflow, { version, variables, businessKey, priority, test, pins, actor });
      return stateOf(id);
    },

    'instance:list': async (input) => {
      const filter = {
        workflow: input.workflow,
        workflowVersion: input.version,
        createdFrom: input.createdFrom,
        createdTo: input.createdTo,
        text: input.text,
        waitingFor: input.waitingFor,
        node: input.node,
        parentId: input.parentId,
        businessKey: input.businessKey,
        paused: input.paused,
        test: input.test,
      };
      const items = await engine.listInstances({
        ...filter,
        status: input.status,
        ids: input.ids,
        beforeId: input.beforeId,
        afterId: input.afterId,
        limit: input.limit,
      });
      const last = items[items.length - 1];
      const nextBeforeId = items.length === input.limit && last !== undefined ? last.id : null;
      return input.withCounts
        ? { items, nextBeforeId, counts: await engine.countByStatus(filter) }
        : { items, nextBeforeId };
    },

    'instance:get': async ({ id }) => engine.getInstance(id),

    'instance:stateAt': async ({ id, at }) => engine.stateAt(id, at),

    'instance:fork': async ({ id, at, actor }) => stateOf(await engine.fork(id, at, { actor })),

    'instance:history': async ({ id, afterId, limit }) => {
      const events = await engine.history(id, afterId, limit);
      // An empty first page may mean "no such instance": say so rather than answer [].
      if (events.length === 0 && afterId === 0) await engine.getInstance(id);
      const last = events[events.length - 1];
      return { events, nextAfterId: events.length === limit && last !== undefined ? last.id : null };
    },

    'instance:resume': async ({ id, action, result, variables, expectedVersion, actor }) => {
      await engine.resume(id, { action, result, variables, expectedVersion, actor });
      return stateOf(id);
    },

    'instance:retry': async ({ id, expectedVersion, actor }) => {
      await engine.retry(id, { expectedVersion, actor });
      return stateOf(id);
    },

    'instance:delete': async ({ id }) => ({ id, deleted: await engine.deleteInstance(id) }),

    'instance:deleteTestRuns': async () => engine.deleteTestRuns(),

    'instance:cancel': async ({ id, compensate, expectedVersion, actor }) => {
      await engine.cancel(id, { compensate, expectedVersion, actor });
      return stateOf(id);
    },

    'instance:approve': async ({ id, nodeId, approved, data, comment, actor }) => {
      await engine.approve(id, nodeId, { approved, data, comment, actor });
      return stateOf(id);
    },

    'instance:pause': async ({ id, actor }) => {
      await engine.pause(id, { actor });
      return stateOf(id);
    },

    'instance:unpause': async ({ id, actor }) => {
      await engine.unpause(id, { actor });
      return stateOf(id);
    },

    'instance:signal': async ({ id, businessKey, event, key, data, actor }) => {
      const r = await engine.signal({ ...(id === undefined ? {} : { id }), ...(businessKey === undefined ? {} : { businessKey }) }, { event, key, data, actor });
      return { eventId: r.eventId, consumedBy: r.consumedBy, instance: await stateOf(r.instanceId) };
    },

    'metrics:get': async () => ({ ...(await engine.metrics()), oldestWaiting: await engine.oldestWaiting(), storage: engine.storage.health() }),

    'storage:health': async () => engine.storage.health(),

    'metrics:runtime': async () => metrics.summary(),

    'changes:read': async ({ after, limit, workflow, consumer }) => readChanges(engine.storage, { after, limit, workflow, consumer }),

    'changes:ack': async ({ consumer, cursor }) => ackChanges(engine.storage, { consumer, cursor, now: engine.clock.now() }),

    'changes:consumers': async () => {
      const consumers = await engine.storage.read.changeConsumers();
      // The safe head comes with any read (one entry is the least it asks for).
      const { head } = await engine.storage.read.changes({ after: 0, limit: 1 });
      return { consumers, head };
    },

    'changes:forget': async ({ consumer }) => {
      await forgetConsumer(engine.storage, consumer);
      return { consumer };
    },

    'database:info': async () => engine.databaseInfo(),

    'database:check': async () => engine.checkDatabase(),

    'database:backup': async ({ dest, force }) => engine.backup(dest, { force }),

    'database:vacuum': async () => engine.vacuumFreePages(),
    'schedule:list': async ({ workflow }) => engine.listSchedules(workflow),

    'schedule:pause': async ({ workflow, id, actor }) => engine.pauseSchedule(workflow, id, { actor }),

    'schedule:resume': async ({ workflow, id, actor }) => engine.resumeSchedule(workflow, id, { actor }),

    'schedule:trigger': async ({ workflow, id, actor }) => ({ instance: await stateOf(await engine.triggerSchedule(workflow, id, { actor })) }),

    'instance:approvals': async ({ workflow, limit }) => engine.listApprovals({ workflow, limit }),

    'instance:bulk': async ({ action, filter, dryRun, upToId, compensate, actor }) => {
      // Cancel applies to live instances (not one already COMPENSATING: its chain must finish);
      // retry to FAILED ones; pause to live ones not paused, unpause to paused ones. The filter's
      // own statuses narrow that further.
      // Pause and unpause apply to every live instance (the filter's paused flag is set for them).
      const eligible =
        action === 'retry' ? ['FAILED'] : action === 'cancel' ? ['PENDING', 'RUNNING', 'WAITING', 'SUSPENDED'] : ['PENDING', 'RUNNING', 'WAITING', 'SUSPENDED', 'COMPENSATING'];
      const match = await engine.matchInstances(
        {
          status: filter.status,
          workflow: filter.workflow,
          workflowVersion: filter.version,
          createdFrom: filter.createdFrom,
          createdTo: filter.createdTo,
          text: filter.text,
          waitingFor: filter.waitingFor,
          node: filter.node,
          parentId: filter.parentId,
          businessKey: filter.businessKey,
          test: filter.test,
          ...(action === 'pause' ? { paused: false } : action === 'unpause' ? { paused: true } : filter.paused === undefined ? {} : { paused: filter.paused }),
          upToId,
        },
        eligible,
        LIMITS.bulk,
      );
      const result: BulkResult = {
        action,
        dryRun,
        matched: match.total,
        upToId: match.upToId,
        sample: match.ids.slice(0, 100),
        affected: 0,
        skipped: 0,
        errors: [],
      };
      if (dryRun) return result;
      if (match.total > LIMITS.bulk) {
        throw new EngineError('INVALID_INPUT', `${match.total} instances match; a bulk ${action} touches at most ${LIMITS.bulk}: narrow the filter`, {
          details: { matched: match.total, limit: LIMITS.bulk },
        });
      }
      // One action per instance, each its own transaction with the same checks (and history
      // record) as a single action; an instance that changed since it was matched is skipped.
      for (const id of match.ids) {
        try {
          if (action === 'cancel') await engine.cancel(id, { compensate, actor });
          else if (action === 'pause') await engine.pause(id, { actor });
          else if (action === 'unpause') await engine.unpause(id, { actor });
          else await engine.retry(id, { actor });
          result.affected++;
        } catch (e) {
          if (!(e instanceof EngineError)) throw e;
          result.skipped++;
          if (result.errors.length < 100) result.errors.push({ id, code: e.code, message: e.message });
        }
      }
      return result;
    },

    'metrics:series': async ({ from, to, bucketMs, workflow }) => {
      const end = to ?? engine.clock.now();
      // Buckets are aligned to bucketMs, so a chart polled every few seconds keeps its buckets.
      const alignedEnd = Math.ceil((end + 1) / bucketMs) * bucketMs;
      const start = from ?? alignedEnd - 60 * bucketMs;
      if (start >= alignedEnd) throw new EngineError('INVALID_INPUT', `metrics:series: from (${start}) must be before to (${end})`);
      const buckets = Math.ceil((alignedEnd - start) / bucketMs);
      if (buckets > LIMITS.seriesBuckets) {
        throw new EngineError('INVALID_INPUT', `metrics:series: ${buckets} buckets of ${bucketMs} ms, above the limit of ${LIMITS.seriesBuckets}: widen bucketMs or narrow the range`);
      }
      const stop = start + buckets * bucketMs;
      return { from: start, to: stop, bucketMs, points: await engine.metricsSeries(start, stop, bucketMs, workflow) };
    },
  };
}

/** One schema issue as `BAD_REQUEST` details carry it: `path` like `variables.items[0].sku`. */
export interface FieldIssue {
  path: string;
  code: string;
  message: string;
}

/** A zod path as text: `a.b[0].c`; `(input)` for the payload itself. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out === '' ? String(key) : `.${String(key)}`;
  }
  return out === '' ? '(input)' : out;
}

function issuesOf(error: z.ZodError): FieldIssue[] {
  return error.issues.map((i) => {
    // Unknown keys are reported at their object's path; name the key itself.
    const keys = i.code === 'unrecognized_keys' ? i.keys : [];
    const path = keys.length === 1 ? [...i.path, keys[0] ?? ''] : i.path;
    return { path: formatPath(path), code: i.code, message: i.message };
  });
}

/** Options of {@link dispatch}. */
export interface DispatchOptions {
  /**
   * Check every handler's value against the channel's output schema (a mismatch is an
   * INTERNAL error: the handler broke the contract). Default: on unless NODE_ENV is `production`.
   */
  validateOutput?: boolean;
  /** Where unexpected errors are logged with their stack (never sent). Default console.error. */
  log?: (message: string, error: unknown) => void;
}

const DEFAULT_VALIDATE_OUTPUT = typeof process === 'undefined' || process.env.NODE_ENV !== 'production';

/**
 * Runs `payload` through `channel`'s handler and answers with a {@link Result}; never throws.
 *
 * - an unknown channel → `UNKNOWN_CHANNEL`;
 * - a payload failing the input schema → `BAD_REQUEST`, the message naming the first field
 *   (`instance:get: id: expected number, received string`), `details.issues` every one;
 * - an EngineError → its code, message and details;
 * - anything else → `INTERNAL` with the error's message only (the stack goes to `log`).
 */
export async function dispatch(
  handlers: Handlers,
  channel: string,
  payload: unknown,
  options: DispatchOptions = {},
): Promise<Result<unknown>> {
  const log = options.log ?? ((m: string, e: unknown) => console.error(m, e));
  if (!isChannel(channel)) {
    const shown = channel.length > 100 ? `${channel.slice(0, 100)}…` : channel;
    return err('UNKNOWN_CHANNEL', `unknown channel "${shown}"`, { channel: shown });
  }
  // Before the schema: a payload nested past the limit (it would overflow what walks it next) or
  // holding a `__proto__` key (copying it would lose it) is refused with the path.
  const shape = findValueProblem(payload);
  if (shape) {
    const message = describeValueProblem('the payload', shape);
    return err('BAD_REQUEST', `${channel}: ${message}`, { channel, issues: [{ path: formatValuePath(shape.path), code: shape.kind, message }] });
  }
  const spec = contract[channel];
  const parsed = spec.input.safeParse(payload);
  if (!parsed.success) {
    const issues = issuesOf(parsed.error);
    const first = issues[0];
    const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
    return err(
      'BAD_REQUEST',
      `${channel}: ${first ? `${first.path}: ${first.message}` : 'invalid input'}${more}`,
      { channel, issues },
    );
  }
  try {
    const value: unknown = await (handlers[channel] as (input: unknown) => Promise<unknown>)(parsed.data);
    if (options.validateOutput ?? DEFAULT_VALIDATE_OUTPUT) {
      const checked = spec.output.safeParse(value);
      if (!checked.success) {
        const issues = issuesOf(checked.error);
        log(`runnel: handler of ${channel} broke its output schema`, issues);
        return err('INTERNAL', `${channel}: the handler's result does not match the contract`, {
          channel,
          issues,
        });
      }
    }
    return ok(value);
  } catch (e) {
    if (e instanceof EngineError) {
      return err(e.code, e.message, e.details);
    }
    log(`runnel: ${channel} failed unexpectedly`, e);
    return err('INTERNAL', `${channel}: unexpected error: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** Binds {@link dispatch} to a handler map: what a host holds. */
export function createDispatcher(
  handlers: Handlers,
  options: DispatchOptions = {},
): (channel: string, payload: unknown) => Promise<Result<unknown>> {
  return (channel, payload) => dispatch(handlers, channel, payload, options);
}
