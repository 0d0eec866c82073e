/**
 * The control-flow node types: `subworkflow` (call another workflow and wait for it), `map` (one
 * child instance per item of a list) and `event` (wait for an event sent to the instance).
 *
 * Their handlers only compute what to wait for; the runtime starts the children and records the
 * events in its transactions (engine/runtime/state-machine/children.ts and signal.ts), so none
 * has an effect outside the engine (`instant`). Each allows one attempt by default: running a
 * whole workflow again is asked for with `retry`, not assumed. `timeoutMs` bounds the wait.
 */
import { EngineError } from '../errors';
import { CONTROL_CHARACTERS, unstorableText } from '../vocabulary';
import { evaluateExpression } from '../dsl/expressions';
import { MAX_CHILDREN_PER_NODE, type NodeContext, type NodeType } from './types';
import { EventConfigSchema, MapConfigSchema, SubworkflowConfigSchema, type EventConfig, type MapConfig, type SubworkflowConfig } from './control-flow-config';

export { EventConfigSchema, MapConfigSchema, SubworkflowConfigSchema, type EventConfig, type MapConfig, type SubworkflowConfig };

/** An expression's value, as the node's config field `field` (named in errors). */
async function evaluateField(ctx: NodeContext<unknown>, field: string, src: string): Promise<unknown> {
  try {
    return await evaluateExpression(src, { variables: ctx.variables as Record<string, unknown>, steps: ctx.steps as Record<string, unknown> });
  } catch (err) {
    if (err instanceof EngineError) throw new EngineError(err.code, `node "${ctx.nodeId}": config.${field}: ${err.message}`, { retryable: false, details: err.details });
    throw err;
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A kind of value for a message: `an array`, `null`, `a string`, … */
function kindOf(v: unknown): string {
  if (v === undefined) return 'nothing (is the variable there?)';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

/**
 * The `subworkflow` node type: starts one child instance and waits for it; the child's final
 * variables are the result. A FAILED or CANCELLED child fails the attempt (CHILD_FAILED, naming
 * the child); a retry starts a new child.
 */
export const subworkflowNode: NodeType<SubworkflowConfig> = {
  type: 'subworkflow',
  title: 'Sub-workflow',
  description: 'Runs another workflow and waits for it',
  icon: 'workflow',
  group: 'Flow',
  configSchema: SubworkflowConfigSchema,
  templates: false,
  defaultRetry: { maxAttempts: 1 },
  instant: true,
  timeoutBoundsWait: true,
  async execute(ctx) {
    const { workflow, version, input } = ctx.config;
    const vars = input === undefined ? { ...ctx.variables } : await evaluateField(ctx, 'input', input);
    if (!isObject(vars)) {
      throw new EngineError('INVALID_INPUT', `node "${ctx.nodeId}": config.input must give an object (the child's variables), got ${kindOf(vars)}`, { retryable: false });
    }
    return { wait: { children: { mode: 'subworkflow', workflow, ...(version === undefined ? {} : { version }), inputs: [vars], maxConcurrency: 1, toleratedFailures: 0 } } };
  },
};

/**
 * The `map` node type: one child instance per item (start variables `{ item, index }` over the
 * globals, or what `config.input` makes of them), at most `maxConcurrency` at once; the result is the children's final variables in
 * item order (`null` for a tolerated failure). More failures than tolerated fail the node and
 * cancel the children still running; an empty list completes at once with `[]`; more than
 * {@link MAX_CHILDREN_PER_NODE} items is a non-retryable INVALID_INPUT.
 */
export const mapNode: NodeType<MapConfig> = {
  type: 'map',
  title: 'Map',
  description: 'Runs a workflow once per item of a list',
  icon: 'layers',
  group: 'Flow',
  configSchema: MapConfigSchema,
  templates: false,
  defaultRetry: { maxAttempts: 1 },
  instant: true,
  timeoutBoundsWait: true,
  async execute(ctx) {
    const { items: src, workflow, version, input, maxConcurrency, toleratedFailures } = ctx.config;
    const items = await evaluateField(ctx, 'items', src);
    if (!Array.isArray(items)) {
      // A JSONata path over one element yields that element, not a one-element array.
      const hint = items !== undefined && items !== null ? ` (a path yields a single value when it matches one: wrap it as [${src}])` : '';
      throw new EngineError('INVALID_INPUT', `node "${ctx.nodeId}": config.items must yield an array, got ${kindOf(items)}${hint}`, { retryable: false });
    }
    if (items.length > MAX_CHILDREN_PER_NODE) {
      throw new EngineError('INVALID_INPUT', `node "${ctx.nodeId}": config.items yielded ${items.length} items, above the limit of ${MAX_CHILDREN_PER_NODE} per node`, {
        retryable: false,
        details: { items: items.length, limit: MAX_CHILDREN_PER_NODE },
      });
    }
    const inputs: Record<string, unknown>[] = [];
    for (let index = 0; index < items.length; index++) {
      if (input === undefined) {
        // Merged over the globals when each child starts (the items are stored alone).
        inputs.push({ item: items[index] as unknown, index });
        continue;
      }
      const base = { ...ctx.variables, item: items[index] as unknown, index };
      const vars = await evaluateField({ ...ctx, variables: base }, 'input', input);
      if (!isObject(vars)) {
        throw new EngineError('INVALID_INPUT', `node "${ctx.nodeId}": config.input must give an object for each item (the child's variables), got ${kindOf(vars)} for item ${index}`, { retryable: false });
      }
      inputs.push(vars);
    }
    return {
      wait: {
        children: { mode: 'map', workflow, ...(version === undefined ? {} : { version }), inputs, maxConcurrency, toleratedFailures, ...(input === undefined ? { mergeGlobals: true } : {}) },
      },
    };
  },
};

/**
 * The `event` node type: the instance waits until an event of `name` (with `key`, when given) is
 * sent to it (`instance:signal`, `runnel signal`); the event's data is the result. An event sent
 * before the node is reached is kept and taken when it is. A `timeoutMs` fails the attempt with
 * TIMEOUT (onFailure and error edges apply).
 */
export const eventNode: NodeType<EventConfig> = {
  type: 'event',
  title: 'Wait for event',
  description: 'Waits until an event is sent to the instance',
  icon: 'bell',
  group: 'Flow',
  configSchema: EventConfigSchema,
  defaultRetry: { maxAttempts: 1 },
  instant: true,
  timeoutBoundsWait: true,
  execute(ctx) {
    const { name, key } = ctx.config;
    // A name or key that signal refuses (control characters, a NUL, …) could never be sent: fail now, not wait for good.
    for (const [field, value] of [['name', name], ['key', key]] as const) {
      if (value === undefined) continue;
      const bad = CONTROL_CHARACTERS.test(value) ? 'holds control characters (a tab, a newline, a line separator, a direction override, …), which a signal cannot carry' : unstorableText(value);
      if (bad !== undefined) {
        throw new EngineError('INVALID_INPUT', `node "${ctx.nodeId}": config.${field} ${JSON.stringify(value)} ${bad}: no event could be sent with it`, { retryable: false });
      }
    }
    return Promise.resolve({ wait: { event: { name, ...(key === undefined ? {} : { key }) } } });
  },
};
