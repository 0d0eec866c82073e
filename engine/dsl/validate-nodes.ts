/**
 * The node checks of validation: each node's (and compensation's) type against the catalog, its
 * config against the type's schema and `validateConfig`, its `input` / `output` expressions, and
 * its retry intervals resolved over the workflow's and the engine's defaults.
 *
 * Shared with the renderer: imports nothing from Node.
 */
import type { z } from 'zod';
import { isIdentifier } from './expressions';
import { DEFAULT_RETRY, resolveRetry, type RetryPolicy } from './schema';
import { checkConfigTemplates, checkExpression, isTemplated } from './validate-expressions';
import {
  describeIssue,
  getAt,
  isRecord,
  nodeSubject,
  problem,
  showPath,
  tightestBounds,
  str,
  type Json,
  type LooseNode,
  type Path,
  type Problem,
  type Subject,
} from './validate-problems';

/** What validation needs to know of a node type. */
export interface TypeInfo {
  /** The type's config schema. */
  configSchema: z.ZodType;
  /** Whether `{{ … }}` in config strings are templates (default true; `script` says false). */
  templates?: boolean;
  /**
   * Checks beyond the schema (the node type's `validateConfig`): gets the parsed config and
   * returns one message per problem. Absent in the renderer's catalog.
   */
  validateConfig?: (config: unknown) => string[];
}

/** Looks a node type up by name: `undefined` for an unknown type. */
export type TypeCatalog = (type: string) => TypeInfo | undefined;

/**
 * Checks one `type` + `config` pair (a node's, or its compensation's) against the catalog.
 *
 * `prefix` is `""` or `"compensate."` so messages name the right field.
 */
function checkTypeAndConfig(
  holder: Json,
  subject: Subject,
  basePath: Path,
  prefix: string,
  catalog: TypeCatalog,
  out: Problem[],
): void {
  const type = str(holder['type']);
  if (type === undefined || type === '') return;
  const info = catalog(type);
  // A plain-object catalog answers `constructor` with a function: that is not a type either.
  if (!info || typeof info.configSchema?.safeParse !== 'function') {
    out.push(
      problem('UNKNOWN_TYPE', subject, `${prefix}type ${JSON.stringify(type)} is not a known node type (not built in, and no loaded plug-in registers it)`, [
        ...basePath,
        'type',
      ]),
    );
    return;
  }
  const config = holder['config'];
  if (config !== undefined && !isRecord(config)) return; // the schema reports it
  const templates = info.templates !== false;
  let parsed: ReturnType<z.ZodType['safeParse']>;
  try {
    parsed = info.configSchema.safeParse(config ?? {});
  } catch (err) {
    // A plug-in's refinement may throw; validation still reports rather than crashes.
    const reason = err instanceof Error ? err.message : String(err);
    out.push(
      problem('INVALID_CONFIG', subject, `${prefix}config could not be checked: ${reason}`, [
        ...basePath,
        'config',
      ]),
    );
    parsed = { success: true, data: config };
  }
  if (parsed.success && typeof info.validateConfig === 'function') {
    let messages: string[];
    try {
      messages = info.validateConfig(parsed.data);
    } catch (err) {
      messages = [`could not be checked: ${err instanceof Error ? err.message : String(err)}`];
    }
    for (const message of messages) {
      out.push(problem('INVALID_CONFIG', subject, `${prefix}config: ${message}`, [...basePath, 'config']));
    }
  }
  if (!parsed.success) {
    for (const issue of tightestBounds(parsed.error.issues)) {
      const local = issue.path.filter((k): k is string | number => typeof k !== 'symbol');
      // Templates are rendered at run time, so "{{ n }}" where a number is expected is fine.
      const templated = local.some((_, i) => isTemplated(getAt(config, local.slice(0, i + 1)), templates));
      if (templated) continue;
      const field = showPath([`${prefix}config`, ...local]);
      const text =
        issue.code === 'unrecognized_keys'
          ? `${field} has unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}`
          : describeIssue(issue, field, getAt(config, local));
      out.push(problem('INVALID_CONFIG', subject, text, [...basePath, 'config', ...local]));
    }
  }
  if (!templates) return;
  checkConfigTemplates(config, subject, basePath, prefix, out);
}

/**
 * Every node's checks: type and config, `input` and `output` expressions, retry intervals, and
 * the same for its `compensate`. `workflowRetry` is the workflow's own retry (what a node inherits).
 */
export function checkNodes(
  nodes: LooseNode[],
  catalog: TypeCatalog,
  workflowRetry: RetryPolicy | undefined,
  out: Problem[],
): void {
  for (const node of nodes) {
    const subject = nodeSubject(node, node.index);
    const base: Path = ['nodes', node.index];
    checkTypeAndConfig(node.raw, subject, base, '', catalog, out);
    checkExpression(node.raw['input'], 'input', subject, [...base, 'input'], out);
    const output = node.raw['output'];
    if (typeof output === 'string' && !isIdentifier(output)) {
      checkExpression(output, 'output', subject, [...base, 'output'], out);
    } else if (typeof output === 'string' && output.startsWith('$')) {
      out.push(
        problem(
          'INVALID_OUTPUT',
          subject,
          `output ${JSON.stringify(output)} would make a variable named like an expression binding ($steps, $result, …); ` +
            `name the variable without "$", or map the result with an expression such as { "name": $result }`,
          [...base, 'output'],
        ),
      );
    }
    checkIntervals(node.raw['retry'], workflowRetry, subject, [...base, 'retry'], 'retry', out);
    const compensate = node.raw['compensate'];
    if (isRecord(compensate)) {
      const compBase: Path = [...base, 'compensate'];
      checkTypeAndConfig(compensate, subject, compBase, 'compensate.', catalog, out);
      checkExpression(compensate['input'], 'compensate.input', subject, [...compBase, 'input'], out);
      checkIntervals(
        compensate['retry'],
        workflowRetry,
        subject,
        [...compBase, 'retry'],
        'compensate.retry',
        out,
      );
    }
  }
}

/** The numeric fields of a raw retry policy (ill-typed ones are the schema's to report). */
export function looseRetry(raw: unknown): RetryPolicy | undefined {
  if (!isRecord(raw)) return undefined;
  const policy: RetryPolicy = {};
  for (const key of [
    'maxAttempts',
    'initialIntervalMs',
    'backoffCoefficient',
    'maxIntervalMs',
    'jitter',
  ] as const) {
    const v = raw[key];
    if (typeof v === 'number' && Number.isFinite(v)) policy[key] = v;
  }
  return policy;
}

/**
 * maxIntervalMs below initialIntervalMs caps every delay under the first one, which is never what
 * was meant. Checked on the resolved policy (node over workflow over the engine default), and only
 * where this level sets one of the two, so the problem is reported once, where it was written.
 */
export function checkIntervals(
  raw: unknown,
  inherited: RetryPolicy | undefined,
  subject: Subject,
  path: Path,
  field: string,
  out: Problem[],
): void {
  const own = looseRetry(raw);
  if (!own || (own.initialIntervalMs === undefined && own.maxIntervalMs === undefined)) return;
  // A negative interval already has its own range problem from the schema.
  if ((own.initialIntervalMs ?? 0) < 0 || (own.maxIntervalMs ?? 0) < 0) return;
  const resolved = resolveRetry(own, inherited);
  if (resolved.maxIntervalMs >= resolved.initialIntervalMs) return;
  const origin = (key: 'initialIntervalMs' | 'maxIntervalMs'): string => {
    if (own[key] !== undefined) return '';
    if (inherited?.[key] !== undefined) return ", from the workflow's retry";
    return DEFAULT_RETRY[key] === resolved[key] ? ', the default' : '';
  };
  out.push(
    problem(
      'RETRY_OUT_OF_RANGE',
      subject,
      `${field}.maxIntervalMs (${resolved.maxIntervalMs}${origin('maxIntervalMs')}) must be at least ` +
        `${field}.initialIntervalMs (${resolved.initialIntervalMs}${origin('initialIntervalMs')})`,
      [...path, own.maxIntervalMs !== undefined ? 'maxIntervalMs' : 'initialIntervalMs'],
    ),
  );
}
