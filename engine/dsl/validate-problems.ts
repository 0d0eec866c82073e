/**
 * What every validation check shares (validate.ts composes the checks): the problem codes and the
 * {@link Problem} shape, the lenient reading of the raw definition that lets graph and node checks
 * run even when the schema fails, and how a message names its subject and words a zod issue.
 *
 * Shared with the renderer: imports nothing from Node.
 */
import type { z } from 'zod';
import { edgeId } from './schema';

/** Problem codes. UIs and tests match on these, never on messages. */
export const ProblemCodes = {
  /** A field has the wrong type or value (from the schema). */
  INVALID_FIELD: 'INVALID_FIELD',
  /**
   * The definition nests objects and arrays deeper than MAX_NESTING_DEPTH (engine/dsl/nesting.ts),
   * or contains itself (a YAML alias inside its own anchor); the message gives the path.
   */
  TOO_DEEP: 'TOO_DEEP',
  /** A `__proto__` key somewhere in the definition (it would be lost where the value is copied): the message gives the path. */
  PROTOTYPE_KEY: 'PROTOTYPE_KEY',
  /** A number JSON cannot keep (Infinity, NaN: `1e999` parses to Infinity) somewhere in the definition: the message gives the path. */
  NOT_FINITE: 'NOT_FINITE',
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
  /** A `subworkflow` or `map` node names a workflow (or version) that is not deployed. */
  UNKNOWN_WORKFLOW: 'UNKNOWN_WORKFLOW',
  /** Workflows call each other in a cycle (through `subworkflow` and `map` nodes); the message gives it. */
  WORKFLOW_CYCLE: 'WORKFLOW_CYCLE',
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

/** Where a field is in the raw definition: keys and array indexes. */
export type Path = (string | number)[];
/** A JSON object, as read from the raw definition. */
export type Json = Record<string, unknown>;

/** Whether `v` is a plain object (not null, not an array). */
export function isRecord(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `v` when it is a string, else undefined. */
export function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** The value at `path` inside `root`, or undefined where the path leaves the data. */
export function getAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let at = root;
  for (const key of path) {
    if (typeof key === 'symbol' || at === null || typeof at !== 'object') return undefined;
    at = (at as Record<string | number, unknown>)[key];
  }
  return at;
}

/** A path as messages show it: `retry.maxAttempts`, `config.items[0]`. */
export function showPath(path: readonly (string | number)[]): string {
  let out = '';
  for (const key of path) out += typeof key === 'number' ? `[${key}]` : out === '' ? key : `.${key}`;
  return out;
}

/** A value as messages quote it after "got": `null`, `an array`, a short string in quotes, a number. */
export function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  // Quoted as JSON, as a subject's id is (`node "a\nb"`): a newline or a tab in it stays on the line.
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 37)}...` : v);
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
export interface LooseNode {
  index: number;
  raw: Json;
  id: string | undefined;
}

/** The part of a raw edge validation reads. */
export interface LooseEdge {
  index: number;
  raw: Json;
  from: string | undefined;
  to: string | undefined;
  on: 'success' | 'error';
  /** Explicit or default id; undefined when neither can be read. */
  id: string | undefined;
}

/** Reads what it can of the raw definition, so graph checks run even when the schema fails. */
export function readLoose(raw: unknown): { nodes: LooseNode[]; edges: LooseEdge[]; nodesArray: boolean } {
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
export interface Subject {
  label: string;
  nodeId?: string;
  edgeId?: string;
}

/** The subject of a node's problem: `node "id"` when its id can be read, else `nodes[i]`. */
export function nodeSubject(node: LooseNode | undefined, index: number): Subject {
  if (node?.id !== undefined) return { label: `node ${JSON.stringify(node.id)}`, nodeId: node.id };
  return { label: `nodes[${index}]` };
}

/** The subject of an edge's problem: `edge "id"` (explicit or default id), else `edges[i]`. */
export function edgeSubject(edge: LooseEdge | undefined, index: number): Subject {
  if (edge?.id !== undefined) return { label: `edge ${JSON.stringify(edge.id)}`, edgeId: edge.id };
  return { label: `edges[${index}]` };
}

type SchemaIssue = z.core.$ZodIssue;

/**
 * The issues with, per field, only the tightest bound it breaks: zod's `.int()` carries its own
 * bound of 2^53−1 beside the field's `.max(1000)`, so `maxAttempts: 1e23` was reported twice with
 * two limits. Of several `too_big` issues on one path the smallest maximum stays, of several
 * `too_small` the largest minimum.
 */
export function tightestBounds(issues: readonly SchemaIssue[]): SchemaIssue[] {
  const tightest = new Map<string, SchemaIssue>();
  const bound = (i: SchemaIssue): number | undefined =>
    i.code === 'too_big' ? Number(i.maximum) : i.code === 'too_small' ? Number(i.minimum) : undefined;
  for (const issue of issues) {
    if (bound(issue) === undefined) continue;
    const key = `${issue.code}:${JSON.stringify(issue.path)}`;
    const held = tightest.get(key);
    const tighter = issue.code === 'too_big' ? (a: number, b: number) => a < b : (a: number, b: number) => a > b;
    if (!held || tighter(bound(issue) as number, bound(held) as number)) tightest.set(key, issue);
  }
  return issues.filter((i) => bound(i) === undefined || tightest.get(`${i.code}:${JSON.stringify(i.path)}`) === i);
}

/** A {@link Problem} whose message is `<subject>: <text>`, with the subject's node or edge id. */
export function problem(code: ProblemCode, subject: Subject, text: string, path: Path): Problem {
  const p: Problem = { code, message: `${subject.label}: ${text}`, path };
  if (subject.nodeId !== undefined) p.nodeId = subject.nodeId;
  if (subject.edgeId !== undefined) p.edgeId = subject.edgeId;
  return p;
}

/** "field must …" for one zod issue; `field` is how the value is named ('' for the whole). */
export function describeIssue(issue: z.core.$ZodIssue, field: string, value: unknown): string {
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
export function schemaProblems(
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
