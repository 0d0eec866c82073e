/**
 * Workflow validation (DESIGN.md section 3, "Validation names every problem with its node or
 * edge id").
 *
 * Every problem is collected, never only the first: the schema check and the graph, type, config
 * and expression checks all run, the latter on a lenient reading of the raw input, so a bad retry
 * number does not hide a cycle. Shared with the renderer: imports nothing from Node.
 *
 * This module is the entry: it composes the checks, each in a file of its own —
 * validate-problems.ts (problem codes, the lenient reading, schema issues as problems),
 * validate-graph.ts (ids, edges, cycles, entry node), validate-nodes.ts (types, config, retry),
 * validate-expressions.ts (JSONata and templates) and validate-input-schema.ts.
 */
import { EngineError } from '../errors';
import { describeValueProblem, findValueProblem, valueProblemCode } from './value-limits';
import { WorkflowSchema, type Workflow } from './schema';
import { checkEdgeExpressions, checkExpression } from './validate-expressions';
import { checkGraph, checkIds } from './validate-graph';
import { checkApprovalForms, checkInputSchema } from './validate-input-schema';
import { checkSchedules } from './validate-schedules';
import { checkIntervals, checkNodes, looseRetry, type TypeCatalog } from './validate-nodes';
import { isRecord, nodeSubject, problem, readLoose, schemaProblems, tightestBounds, type LooseNode, type Problem } from './validate-problems';

export { ProblemCodes, type Problem, type ProblemCode } from './validate-problems';
export type { TypeCatalog, TypeInfo } from './validate-nodes';

/** The outcome of {@link validateWorkflow}; `workflow` is set on failure when the schema passed. */
export type ValidationResult =
  { ok: true; workflow: Workflow; problems: [] } | { ok: false; problems: Problem[]; workflow?: Workflow };

/**
 * Whether Ajv may compile schemas here: browsers run Runnel's pages under a CSP without
 * 'unsafe-eval', where Ajv's generated code cannot run (and a try would be reported as a CSP
 * violation). There the light check stands alone; the host compiles on save.
 */
const CAN_COMPILE_SCHEMAS = !('document' in globalThis);

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
  // Every check below walks the definition recursively: one nested past the limit is refused
  // before any of them runs.
  const nesting = findValueProblem(raw);
  if (nesting) {
    return { ok: false, problems: [{ code: valueProblemCode(nesting), message: describeValueProblem('the workflow', nesting), path: nesting.path }] };
  }
  const { nodes, edges, nodesArray } = readLoose(raw);
  const parsed = WorkflowSchema.safeParse(raw);
  if (!parsed.success) {
    for (const issue of tightestBounds(parsed.error.issues)) problems.push(...schemaProblems(issue, raw, nodes, edges));
  }
  const workflowRetry = isRecord(raw) ? looseRetry(raw['retry']) : undefined;
  if (isRecord(raw))
    checkIntervals(raw['retry'], undefined, { label: 'workflow' }, ['retry'], 'retry', problems);
  checkNames(raw, nodes, problems);
  checkInputSchema(raw, options.compileInputSchema ?? CAN_COMPILE_SCHEMAS, problems);
  checkApprovalForms(nodes, options.compileInputSchema ?? CAN_COMPILE_SCHEMAS, problems);
  checkIds(nodes, edges, problems);
  checkGraph(nodes, edges, nodesArray, problems);
  checkNodes(nodes, catalog, workflowRetry, problems);
  checkEdgeExpressions(edges, problems);
  if (isRecord(raw) && isRecord(raw['concurrency'])) {
    checkExpression(raw['concurrency']['key'], 'concurrency.key', { label: 'workflow' }, ['concurrency', 'key'], problems);
  }
  if (isRecord(raw)) checkSchedules(raw['schedules'], problems);

  if (parsed.success && problems.length === 0) return { ok: true, workflow: parsed.data, problems: [] };
  return parsed.success ? { ok: false, problems, workflow: parsed.data } : { ok: false, problems };
}

/**
 * Why a workflow name is refused by its spacing, or undefined: blank (only spaces: it looks like
 * no name in every list), or spaces at its start or end (`"orders "` and `"orders"` read the same in
 * a list but are two workflows, and `runnel start orders` finds only one). Spaces inside are fine.
 * Checked on save (validation and rename), not on reading a stored version: one saved before the
 * rule still loads.
 */
export function workflowNameSpacing(name: string): string | undefined {
  if (name.trim() === '') return 'must not be blank (only spaces)';
  if (name.trim() !== name) return `must not start or end with spaces (${JSON.stringify(name)}): use ${JSON.stringify(name.trim())}`;
  return undefined;
}

/** The spacing of the workflow's name ({@link workflowNameSpacing}) and of node names (not blank). */
function checkNames(raw: unknown, nodes: readonly LooseNode[], problems: Problem[]): void {
  if (!isRecord(raw)) return;
  const name = raw['name'];
  // An empty or non-string name is the schema's problem already.
  const spacing = typeof name === 'string' && name !== '' ? workflowNameSpacing(name) : undefined;
  if (spacing) problems.push(problem('INVALID_FIELD', { label: 'workflow' }, `name ${spacing}`, ['name']));
  for (const n of nodes) {
    const label = isRecord(n.raw) ? n.raw['name'] : undefined;
    if (typeof label !== 'string' || label === '' || label.trim() !== '') continue;
    problems.push(problem('INVALID_FIELD', nodeSubject(n, n.index), 'name must not be blank (only spaces): leave it out to show the id', ['nodes', n.index, 'name']));
  }
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
