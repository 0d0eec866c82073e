/**
 * Workflow validation (DESIGN.md section 3, "Validation names every problem with its node or
 * edge id").
 *
 * Every problem is collected, never only the first: the schema check and the graph, type, config
 * and expression checks all run, the latter on a lenient reading of the raw input, so a bad retry
 * number does not hide a cycle. Shared with the renderer: imports nothing from Node.
 */
import type { z } from 'zod';
import { EngineError } from '../errors';
import { findCycles, entryNodes, type GraphSource } from './graph';
import { isIdentifier, parseExpression, splitTemplate } from './expressions';
import { compileInputSchema, schemaPath, schemaPatternProblems } from './input-schema';
import {
  DEFAULT_RETRY,
  WorkflowSchema,
  edgeId,
  resolveRetry,
  type RetryPolicy,
  type Workflow,
} from './schema';

/** Problem codes. UIs and tests match on these, never on messages. */
export const ProblemCodes = {
  /** A field has the wrong type or value (from the schema). */
  INVALID_FIELD: 'INVALID_FIELD',
  /** A required field is absent (from the schema). */
  MISSING_FIELD: 'MISSING_FIELD',
  /** A field the format does not know, e.g. a typo such as `retyr` (from the schema). */
  UNKNOWN_FIELD: 'UNKNOWN_FIELD',
  /** Two nodes, or two edges, share an id. */
  DUPLICATE_ID: 'DUPLICATE_ID',
  /** A node or edge id is not 1–128 letters, digits, emoji, `_`, `-` or `.`. */
  INVALID_ID: 'INVALID_ID',
  /** An edge's `from` or `to` names no node. */
  UNKNOWN_NODE: 'UNKNOWN_NODE',
  /** An edge goes from a node to itself. */
  SELF_LOOP: 'SELF_LOOP',
  /** Edges form a cycle; the message gives its path. */
  CYCLE: 'CYCLE',
  /** No node lacks an incoming edge (or there are no nodes), so nothing can start. */
  NO_ENTRY_NODE: 'NO_ENTRY_NODE',
  /** A node's `type` (or `compensate.type`) is not in the catalog. */
  UNKNOWN_TYPE: 'UNKNOWN_TYPE',
  /** A node's config fails its type's schema. */
  INVALID_CONFIG: 'INVALID_CONFIG',
  /** A `when`, `input`, `output` or `{{ … }}` template is not valid JSONata. */
  EXPRESSION_PARSE: 'EXPRESSION_PARSE',
  /** A retry number is out of range, or `maxIntervalMs` is below `initialIntervalMs`. */
  RETRY_OUT_OF_RANGE: 'RETRY_OUT_OF_RANGE',
  /** Two edges have the same `from`, `to` and `on`. */
  DUPLICATE_EDGE: 'DUPLICATE_EDGE',
  /** An `output` names a variable starting with `$`, like the expression bindings (`$steps`, `$result`). */
  INVALID_OUTPUT: 'INVALID_OUTPUT',
  /**
   * `inputSchema` is not a JSON Schema for an object, a pattern in it is not a regular expression,
   * or Ajv cannot compile it (its reason is given).
   */
  INVALID_INPUT_SCHEMA: 'INVALID_INPUT_SCHEMA',
  /**
   * A regular expression RE2 cannot run (a backreference, a lookaround, …): a JSONata regex
   * literal, or an `inputSchema` `pattern` / `patternProperties` key; or a JSONata function
   * signature that jsonata would check with a backtracking pattern. The message names the field
   * and the construct. (A pattern that is not a regular expression at all is
   * `INVALID_INPUT_SCHEMA`.)
   */
  UNSUPPORTED_REGEX: 'UNSUPPORTED_REGEX',
} as const;

/** One of {@link ProblemCodes}. */
export type ProblemCode = (typeof ProblemCodes)[keyof typeof ProblemCodes];

/**
 * One validation problem.
 *
 * `message` is one line of English naming the node or edge and the field, e.g.
 * `node "check": retry.maxAttempts must be at least 1 (got 0)`. `path` locates the field in the
 * raw definition (`["nodes", 3, "retry", "maxAttempts"]`); `nodeId` / `edgeId` are set whenever
 * the problem belongs to a node or edge whose id could be read.
 */
export interface Problem {
  code: ProblemCode;
  message: string;
  nodeId?: string;
  edgeId?: string;
  path: (string | number)[];
}

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

/** The outcome of {@link validateWorkflow}; `workflow` is set on failure when the schema passed. */
export type ValidationResult =
  { ok: true; workflow: Workflow; problems: [] } | { ok: false; problems: Problem[]; workflow?: Workflow };

type Path = (string | number)[];
type Json = Record<string, unknown>;

function isRecord(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

function getAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let at = root;
  for (const key of path) {
    if (typeof key === 'symbol' || at === null || typeof at !== 'object') return undefined;
    at = (at as Record<string | number, unknown>)[key];
  }
  return at;
}

function showPath(path: readonly (string | number)[]): string {
  let out = '';
  for (const key of path) out += typeof key === 'number' ? `[${key}]` : out === '' ? key : `.${key}`;
  return out;
}

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  if (typeof v === 'string') return `"${v.length > 40 ? `${v.slice(0, 37)}...` : v}"`;
  if (typeof v === 'undefined') return 'nothing';
  return String(v);
}

const ARTICLES: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  object: 'an object',
  record: 'an object',
  array: 'an array',
};

/** The part of a raw node validation reads, whatever else is wrong with it. */
interface LooseNode {
  index: number;
  raw: Json;
  id: string | undefined;
}

/** The part of a raw edge validation reads. */
interface LooseEdge {
  index: number;
  raw: Json;
  from: string | undefined;
  to: string | undefined;
  on: 'success' | 'error';
  /** Explicit or default id; undefined when neither can be read. */
  id: string | undefined;
}

/** Reads what it can of the raw definition, so graph checks run even when the schema fails. */
function readLoose(raw: unknown): { nodes: LooseNode[]; edges: LooseEdge[]; nodesArray: boolean } {
  const rawNodes = isRecord(raw) ? raw['nodes'] : undefined;
  const rawEdges = isRecord(raw) ? raw['edges'] : undefined;
  const nodes: LooseNode[] = [];
  if (Array.isArray(rawNodes)) {
    rawNodes.forEach((n: unknown, index) => {
      if (isRecord(n)) nodes.push({ index, raw: n, id: str(n['id']) });
    });
  }
  const edges: LooseEdge[] = [];
  if (Array.isArray(rawEdges)) {
    rawEdges.forEach((e: unknown, index) => {
      if (!isRecord(e)) return;
      const from = str(e['from']);
      const to = str(e['to']);
      const on = e['on'] === 'error' ? 'error' : 'success';
      const explicit = str(e['id']);
      const id = explicit ?? (from !== undefined && to !== undefined ? edgeId({ from, to, on }) : undefined);
      edges.push({ index, raw: e, from, to, on, id });
    });
  }
  return { nodes, edges, nodesArray: Array.isArray(rawNodes) };
}

/** Who a problem is about, as the start of its message. */
interface Subject {
  label: string;
  nodeId?: string;
  edgeId?: string;
}

function nodeSubject(node: LooseNode | undefined, index: number): Subject {
  if (node?.id !== undefined) return { label: `node ${JSON.stringify(node.id)}`, nodeId: node.id };
  return { label: `nodes[${index}]` };
}

function edgeSubject(edge: LooseEdge | undefined, index: number): Subject {
  if (edge?.id !== undefined) return { label: `edge ${JSON.stringify(edge.id)}`, edgeId: edge.id };
  return { label: `edges[${index}]` };
}

function problem(code: ProblemCode, subject: Subject, text: string, path: Path): Problem {
  const p: Problem = { code, message: `${subject.label}: ${text}`, path };
  if (subject.nodeId !== undefined) p.nodeId = subject.nodeId;
  if (subject.edgeId !== undefined) p.edgeId = subject.edgeId;
  return p;
}

/** "field must …" for one zod issue; `field` is how the value is named ('' for the whole). */
function describeIssue(issue: z.core.$ZodIssue, field: string, value: unknown): string {
  const subject = field === '' ? 'value' : field;
  const got = ` (got ${typeName(value)})`;
  switch (issue.code) {
    case 'too_small': {
      const min = String(issue.minimum);
      if (issue.origin === 'string') {
        return Number(issue.minimum) <= 1
          ? `${subject} must not be empty`
          : `${subject} must be at least ${min} characters`;
      }
      if (issue.origin === 'array') return `${subject} must have at least ${min} items`;
      return `${subject} must be ${issue.inclusive === false ? 'greater than' : 'at least'} ${min}${got}`;
    }
    case 'too_big': {
      const max = String(issue.maximum);
      if (issue.origin === 'string') return `${subject} must be at most ${max} characters`;
      if (issue.origin === 'array') return `${subject} must have at most ${max} items`;
      return `${subject} must be ${issue.inclusive === false ? 'less than' : 'at most'} ${max}${got}`;
    }
    case 'invalid_type':
      if (value === undefined) return `${subject} is required`;
      return `${subject} must be ${ARTICLES[issue.expected] ?? issue.expected}${got}`;
    case 'invalid_value':
      return `${subject} must be ${issue.values.map((v) => JSON.stringify(v)).join(' or ')}${got}`;
    case 'invalid_format':
      return `${subject} ${issue.message}${got}`;
    default:
      return `${subject}: ${issue.message}`;
  }
}

/** Maps one issue of the workflow schema to problems naming the node or edge it is about. */
function schemaProblems(
  issue: z.core.$ZodIssue,
  raw: unknown,
  nodes: LooseNode[],
  edges: LooseEdge[],
): Problem[] {
  const path: Path = issue.path.filter((k): k is string | number => typeof k !== 'symbol');
  let subject: Subject = { label: 'workflow' };
  let local = path;
  const index = path[1];
  if ((path[0] === 'nodes' || path[0] === 'edges') && typeof index === 'number') {
    subject =
      path[0] === 'nodes'
        ? nodeSubject(
            nodes.find((n) => n.index === index),
            index,
          )
        : edgeSubject(
            edges.find((e) => e.index === index),
            index,
          );
    local = path.slice(2);
  }
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) =>
      problem('UNKNOWN_FIELD', subject, `unknown field ${JSON.stringify(showPath([...local, key]))}`, [
        ...path,
        key,
      ]),
    );
  }
  const value = getAt(raw, path);
  const text = describeIssue(issue, showPath(local), value);
  let code: ProblemCode = 'INVALID_FIELD';
  if (subject.label !== 'workflow' && local.length === 1 && local[0] === 'id') code = 'INVALID_ID';
  else if (local.includes('retry') && (issue.code === 'too_small' || issue.code === 'too_big'))
    code = 'RETRY_OUT_OF_RANGE';
  else if (issue.code === 'invalid_type' && value === undefined) code = 'MISSING_FIELD';
  if (local.length === 0) {
    // The whole workflow, node or edge is wrong: "nodes[1] must be an object (got …)".
    const p = problem(code, subject, '', path);
    p.message = `${subject.label} ${text.replace(/^value /u, '')}`;
    return [p];
  }
  return [problem(code, subject, text, path)];
}

function checkIds(nodes: LooseNode[], edges: LooseEdge[], out: Problem[]): void {
  const firstNode = new Map<string, number>();
  for (const node of nodes) {
    if (node.id === undefined) continue;
    const first = firstNode.get(node.id);
    if (first === undefined) {
      firstNode.set(node.id, node.index);
      continue;
    }
    out.push(
      problem('DUPLICATE_ID', nodeSubject(node, node.index), `id is already used by nodes[${first}]`, [
        'nodes',
        node.index,
        'id',
      ]),
    );
  }

  const nodeIds = new Set(firstNode.keys());
  const firstEdgeId = new Map<string, number>();
  const firstLink = new Map<string, number>();
  for (const edge of edges) {
    const subject = edgeSubject(edge, edge.index);
    for (const end of ['from', 'to'] as const) {
      const target = edge[end];
      if (target !== undefined && target !== '' && !nodeIds.has(target)) {
        out.push(
          problem('UNKNOWN_NODE', subject, `${end} ${JSON.stringify(target)} is not a node`, [
            'edges',
            edge.index,
            end,
          ]),
        );
      }
    }
    if (edge.from !== undefined && edge.from === edge.to) {
      out.push(
        problem(
          'SELF_LOOP',
          { ...subject, nodeId: edge.from },
          `connects node ${JSON.stringify(edge.from)} to itself`,
          ['edges', edge.index],
        ),
      );
    }
    let duplicateLink = false;
    if (edge.from !== undefined && edge.to !== undefined) {
      const link = `${edge.from}\u0000${edge.to}\u0000${edge.on}`;
      const first = firstLink.get(link);
      if (first === undefined) firstLink.set(link, edge.index);
      else {
        duplicateLink = true;
        out.push(
          problem('DUPLICATE_EDGE', subject, `repeats edges[${first}] (same from, to and on)`, [
            'edges',
            edge.index,
          ]),
        );
      }
    }
    if (edge.id === undefined) continue;
    const first = firstEdgeId.get(edge.id);
    if (first === undefined) firstEdgeId.set(edge.id, edge.index);
    else if (!duplicateLink) {
      // Two edges between the same nodes already got DUPLICATE_EDGE; their default ids clash too.
      out.push(
        problem('DUPLICATE_ID', subject, `id is already used by edges[${first}]`, [
          'edges',
          edge.index,
          'id',
        ]),
      );
    }
  }
}

function graphSource(nodes: LooseNode[], edges: LooseEdge[]): GraphSource {
  return {
    nodes: nodes.flatMap((n) => (n.id === undefined ? [] : [{ id: n.id }])),
    edges: edges.flatMap((e) =>
      e.from === undefined || e.to === undefined ? [] : [{ id: e.id, from: e.from, to: e.to, on: e.on }],
    ),
  };
}

function checkGraph(nodes: LooseNode[], edges: LooseEdge[], nodesArray: boolean, out: Problem[]): void {
  const source = graphSource(nodes, edges);
  for (const cycle of findCycles(source)) {
    if (cycle.length <= 2) continue; // a self-loop, reported as SELF_LOOP
    const last = cycle[cycle.length - 2];
    const first = cycle[0];
    const closing = edges.find((e) => e.from === last && e.to === first);
    const p: Problem = {
      code: 'CYCLE',
      message: `node ${JSON.stringify(first)}: cycle ${cycle.join(' → ')}`,
      path: closing ? ['edges', closing.index] : ['edges'],
    };
    if (first !== undefined) p.nodeId = first;
    if (closing?.id !== undefined) p.edgeId = closing.id;
    out.push(p);
  }
  if (!nodesArray) return;
  if (nodes.length === 0) {
    out.push({
      code: 'NO_ENTRY_NODE',
      message: 'workflow has no nodes, so nothing can start',
      path: ['nodes'],
    });
  } else if (source.nodes.length > 0 && entryNodes(source).length === 0) {
    out.push({
      code: 'NO_ENTRY_NODE',
      message: 'workflow has no entry node: every node has an incoming edge, so nothing can start',
      path: ['nodes'],
    });
  }
}

/** Every string in a config with its path, for template checks. */
function strings(value: unknown, path: Path, out: Array<{ path: Path; value: string }>): void {
  if (typeof value === 'string') out.push({ path, value });
  else if (Array.isArray(value)) value.forEach((v: unknown, i) => strings(v, [...path, i], out));
  else if (isRecord(value)) for (const [k, v] of Object.entries(value)) strings(v, [...path, k], out);
}

function isTemplated(value: unknown, templates: boolean): boolean {
  return templates && typeof value === 'string' && splitTemplate(value).some((p) => p.kind === 'expr');
}

/** Why an expression cannot be used, or undefined; `unsupported` when it parses but cannot run. */
function parseFailure(src: string): { text: string; unsupported: boolean } | undefined {
  const parsed = parseExpression(src);
  if (parsed.ok) return undefined;
  const text = parsed.position === undefined ? parsed.message : `${parsed.message} (at character ${parsed.position})`;
  return { text, unsupported: parsed.unsupported === true };
}

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
      problem('UNKNOWN_TYPE', subject, `${prefix}type ${JSON.stringify(type)} is not a known node type`, [
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
    for (const issue of parsed.error.issues) {
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
  const found: Array<{ path: Path; value: string }> = [];
  strings(config, [], found);
  for (const { path, value } of found) {
    for (const part of splitTemplate(value)) {
      if (part.kind === 'text') {
        // splitTemplate keeps an unclosed `{{` as text: it would be sent as written.
        const open = part.text.indexOf('{{');
        if (open >= 0) {
          const field = showPath([`${prefix}config`, ...path]);
          const excerpt = part.text.slice(open, open + 40);
          out.push(
            problem(
              'EXPRESSION_PARSE',
              subject,
              `template in ${field} is not closed: ${JSON.stringify(excerpt)} has no matching "}}"`,
              [...basePath, 'config', ...path],
            ),
          );
        }
        continue;
      }
      const failure = parseFailure(part.src);
      if (failure === undefined) continue;
      const field = showPath([`${prefix}config`, ...path]);
      out.push(
        problem(
          failure.unsupported ? 'UNSUPPORTED_REGEX' : 'EXPRESSION_PARSE',
          subject,
          `template {{${part.src}}} in ${field} ${failure.unsupported ? 'cannot run' : 'does not parse'}: ${failure.text}`,
          [...basePath, 'config', ...path],
        ),
      );
    }
  }
}

function checkExpression(src: unknown, field: string, subject: Subject, path: Path, out: Problem[]): void {
  if (typeof src !== 'string') return;
  const failure = parseFailure(src);
  if (failure === undefined) return;
  out.push(
    failure.unsupported
      ? problem('UNSUPPORTED_REGEX', subject, `${field} cannot run: ${failure.text}`, path)
      : problem('EXPRESSION_PARSE', subject, `${field} does not parse: ${failure.text}`, path),
  );
}

function checkNodes(
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
function looseRetry(raw: unknown): RetryPolicy | undefined {
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
function checkIntervals(
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

function checkEdgeExpressions(edges: LooseEdge[], out: Problem[]): void {
  for (const edge of edges) {
    checkExpression(
      edge.raw['when'],
      'when',
      edgeSubject(edge, edge.index),
      ['edges', edge.index, 'when'],
      out,
    );
  }
}

/**
 * Whether Ajv may compile schemas here: browsers run Runnel's pages under a CSP without
 * 'unsafe-eval', where Ajv's generated code cannot run (and a try would be reported as a CSP
 * violation). There the light check stands alone; the host compiles on save.
 */
const CAN_COMPILE_SCHEMAS = !('document' in globalThis);

/**
 * A light shape check (a pasted example, a typo), then Ajv's own compile when `compile` is set:
 * a schema Ajv refuses would otherwise pass here and fail every start.
 */
function checkInputSchema(raw: unknown, compile: boolean, out: Problem[]): void {
  const schema = isRecord(raw) ? raw['inputSchema'] : undefined;
  if (!isRecord(schema)) return;
  const type = schema['type'];
  const properties = schema['properties'];
  const typeOk =
    typeof type === 'string' || (Array.isArray(type) && type.every((t) => typeof t === 'string'));
  const subject: Subject = { label: 'workflow' };
  if (type !== undefined && !typeOk) {
    out.push(
      problem(
        'INVALID_INPUT_SCHEMA',
        subject,
        `inputSchema.type must be a string or an array of strings (got ${typeName(type)})`,
        ['inputSchema', 'type'],
      ),
    );
  } else if (properties !== undefined && !isRecord(properties)) {
    out.push(
      problem(
        'INVALID_INPUT_SCHEMA',
        subject,
        `inputSchema.properties must be an object (got ${typeName(properties)})`,
        ['inputSchema', 'properties'],
      ),
    );
  } else if (type === undefined && properties === undefined) {
    out.push(
      problem(
        'INVALID_INPUT_SCHEMA',
        subject,
        'inputSchema must be a JSON Schema with a "type" or "properties"',
        ['inputSchema'],
      ),
    );
  } else if (patternsRun(schema, subject, out) && compile) {
    const compiled = compileInputSchema(schema);
    if (!compiled.ok) {
      out.push(
        problem('INVALID_INPUT_SCHEMA', subject, `inputSchema is not a valid JSON Schema: ${compiled.reason}`, [
          'inputSchema',
        ]),
      );
    }
  }
}

/**
 * Reports each `inputSchema` pattern that cannot run (checked everywhere, the renderer included);
 * true when all can. Ajv's compile is skipped otherwise: it would refuse the same pattern again.
 */
function patternsRun(schema: Json, subject: Subject, out: Problem[]): boolean {
  const found = schemaPatternProblems(schema);
  for (const p of found) {
    out.push(
      problem(
        p.kind === 'syntax' ? 'INVALID_INPUT_SCHEMA' : 'UNSUPPORTED_REGEX',
        subject,
        `${schemaPath(p.path)} ${JSON.stringify(p.pattern)} ${p.reason}`,
        ['inputSchema', ...p.path],
      ),
    );
  }
  return found.length === 0;
}

/** Options of {@link validateWorkflow}. */
export interface ValidateOptions {
  /**
   * Compile `inputSchema` with Ajv and report what Ajv refuses. Default: true, except in a
   * browser page (see {@link CAN_COMPILE_SCHEMAS}).
   */
  compileInputSchema?: boolean;
}

/**
 * Validates a raw workflow definition (parsed JSON or YAML) against the DSL and a type catalog.
 *
 * Collects every problem (see {@link ProblemCodes}), each naming its node or edge id where one
 * can be read. On success, `workflow` is the schema's output (defaults applied). On failure,
 * `workflow` is still given when only semantic checks failed, so the designer can show the graph
 * with its problems. Never throws.
 */
export function validateWorkflow(
  raw: unknown,
  catalog: TypeCatalog,
  options: ValidateOptions = {},
): ValidationResult {
  const problems: Problem[] = [];
  const { nodes, edges, nodesArray } = readLoose(raw);
  const parsed = WorkflowSchema.safeParse(raw);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) problems.push(...schemaProblems(issue, raw, nodes, edges));
  }
  const workflowRetry = isRecord(raw) ? looseRetry(raw['retry']) : undefined;
  if (isRecord(raw))
    checkIntervals(raw['retry'], undefined, { label: 'workflow' }, ['retry'], 'retry', problems);
  checkInputSchema(raw, options.compileInputSchema ?? CAN_COMPILE_SCHEMAS, problems);
  checkIds(nodes, edges, problems);
  checkGraph(nodes, edges, nodesArray, problems);
  checkNodes(nodes, catalog, workflowRetry, problems);
  checkEdgeExpressions(edges, problems);

  if (parsed.success && problems.length === 0) return { ok: true, workflow: parsed.data, problems: [] };
  return parsed.success ? { ok: false, problems, workflow: parsed.data } : { ok: false, problems };
}

/** Problems as text, one line each: `CODE message`. */
export function formatProblems(problems: readonly Problem[]): string {
  return problems.map((p) => `${p.code} ${p.message}`).join('\n');
}

/**
 * Validates and returns the parsed workflow, or throws.
 *
 * @throws EngineError `INVALID_WORKFLOW` whose message lists every problem (one per line) and
 *   whose `details` is the {@link Problem} array.
 */
export function assertValidWorkflow(raw: unknown, catalog: TypeCatalog): Workflow {
  const result = validateWorkflow(raw, catalog);
  if (result.ok) return result.workflow;
  const count = result.problems.length;
  throw new EngineError(
    'INVALID_WORKFLOW',
    `workflow is invalid (${count} problem${count === 1 ? '' : 's'}):\n${formatProblems(result.problems)}`,
    { details: result.problems },
  );
}
