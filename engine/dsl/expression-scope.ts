/**
 * What an expression reads of its scope, found statically in its AST: the globals, step results,
 * `$result` and `$error` it names, which of them it only tests with `$exists(…)`, and which are
 * missing from a given scope. A `when` or a template that reads a missing variable is decided on
 * this (DESIGN.md "Rules pinned").
 *
 * Shared with the renderer: imports nothing from Node.
 */
import { compile, type ExpressionScope } from './expression-core';

/** A variable an expression reads, and whether it only tests presence (`$exists(x)`). */
export interface Reference {
  name: string;
  presenceOnly: boolean;
}

/** The parts of a JSONata AST node this walker reads; jsonata's own typing omits most of them. */
interface AstNode {
  type: string;
  value?: unknown;
  steps?: AstNode[];
  stages?: AstNode[];
  predicate?: AstNode[];
  expr?: AstNode;
  [key: string]: unknown;
}

function isAstNode(v: unknown): v is AstNode {
  return typeof v === 'object' && v !== null && typeof (v as { type?: unknown }).type === 'string';
}

/** Every AST node below `v` (arrays and `[key, value]` pairs of object constructors included). */
function childNodes(v: unknown): AstNode[] {
  if (isAstNode(v)) return [v];
  if (Array.isArray(v)) return v.flatMap(childNodes);
  return [];
}

/**
 * Collects the globals an expression reads.
 *
 * `root` says whether the node is evaluated against the globals (`$`): top level, operands,
 * arguments, object and array constructors, lambda bodies (JSONata evaluates them against the
 * input where they were defined). The first step of a path read at root is a global; later steps,
 * filters, sort terms and group-by are relative to the path and are not. `$$` is the root
 * everywhere.
 */
function collect(node: AstNode, root: boolean, presenceOnly: boolean, out: Reference[]): void {
  const add = (name: string): void => {
    out.push({ name, presenceOnly });
  };
  const relative = (v: unknown): void => {
    for (const child of childNodes(v)) collect(child, false, presenceOnly, out);
  };
  const same = (v: unknown): void => {
    for (const child of childNodes(v)) collect(child, root, presenceOnly, out);
  };

  switch (node.type) {
    case 'path': {
      const steps = node.steps ?? [];
      steps.forEach((step, i) => {
        const prev = steps[i - 1];
        // `$.x` at root and `$$.x` anywhere name a global.
        const afterRoot =
          i === 1 && prev?.type === 'variable' && ((prev.value === '' && root) || prev.value === '$');
        collect(step, i === 0 ? root : afterRoot, presenceOnly, out);
      });
      const first = steps[0];
      const second = steps[1];
      // `$steps.check`; with `$steps["check"].ok` the variable's own filter named the step.
      const plainSteps =
        first?.type === 'variable' && first.value === 'steps' && first.predicate === undefined;
      if (plainSteps && second?.type === 'name') {
        if (typeof second.value === 'string') add(`$steps.${second.value}`);
      }
      relative(node.group);
      return;
    }
    case 'name':
      if (root && typeof node.value === 'string') add(node.value);
      relative(node.stages);
      relative(node.predicate);
      relative(node.group);
      return;
    case 'variable': {
      if (typeof node.value === 'string') {
        // `$steps["check"]`: the step name is a string filter right on the variable.
        const filter = node.predicate?.[0]?.expr;
        if (node.value === 'steps' && filter?.type === 'string' && typeof filter.value === 'string') {
          add(`$steps.${filter.value}`);
        } else if (node.value === 'result' || node.value === 'error') {
          // `$steps`, `$result` and `$error` are the only bindings besides `$`; others are local.
          add(`$${node.value}`);
        }
      }
      relative(node.stages);
      relative(node.predicate);
      return;
    }
    case 'function':
    case 'partial': {
      const procedure = node['procedure'];
      const isExists = isAstNode(procedure) && procedure.type === 'variable' && procedure.value === 'exists';
      for (const arg of childNodes(node['arguments'])) collect(arg, root, presenceOnly || isExists, out);
      if (isAstNode(procedure)) collect(procedure, root, presenceOnly, out);
      relative(node.stages);
      relative(node.predicate);
      return;
    }
    case 'lambda':
      same(node['body']);
      return;
    case 'sort':
      relative(node['terms']);
      return;
    case 'transform':
      relative(node['pattern']);
      relative(node['update']);
      relative(node['delete']);
      return;
    case 'filter':
      relative(node.expr);
      return;
    default:
      // binary, unary (incl. object and array constructors), condition, block, bind, apply, …:
      // their operands are evaluated where the node is, except the usual relative parts.
      for (const [key, value] of Object.entries(node)) {
        if (key === 'stages' || key === 'predicate' || key === 'group') relative(value);
        else if (key !== 'type' && key !== 'value') same(value);
      }
  }
}

/** Every global and binding `src` reads, with repeats, in order; none when it does not parse. */
export function references(src: string): Reference[] {
  const compiled = compile(src);
  if (!compiled.ok) return [];
  const out: Reference[] = [];
  collect(compiled.expr.ast() as unknown as AstNode, true, false, out);
  return out;
}

/**
 * The globals and step results an expression reads, found statically in its AST.
 *
 * Returns unique names in order of appearance: a global as its name (`device`), a step result as
 * `$steps.<nodeId>`, and `$result` / `$error` when used. Names inside filters and later path steps
 * are relative and not listed. An expression that does not parse reads nothing.
 */
export function referencedVariables(src: string): string[] {
  return [...new Set(references(src).map((ref) => ref.name))];
}

/** Whether a name from {@link referencedVariables} is absent from the scope. */
function isMissing(name: string, scope: ExpressionScope): boolean {
  if (name === '$result') return scope.result === undefined;
  if (name === '$error') return scope.error === undefined;
  if (name.startsWith('$steps.')) {
    const step = name.slice('$steps.'.length);
    return scope.steps === undefined || !Object.hasOwn(scope.steps, step) || scope.steps[step] === undefined;
  }
  return !Object.hasOwn(scope.variables, name) || scope.variables[name] === undefined;
}

/** The names among `refs` that are read (not only tested with `$exists`) and absent from `scope`. */
export function missingNames(refs: readonly Reference[], scope: ExpressionScope): string[] {
  return [...new Set(refs.filter((ref) => !ref.presenceOnly && isMissing(ref.name, scope)).map((ref) => ref.name))];
}

/** `reads missing variable "x"` / `reads missing variables "x", "y"`: the reason messages give. */
export function describeMissing(names: string[]): string {
  const listed = names.map((name) => JSON.stringify(name)).join(', ');
  return names.length === 1 ? `reads missing variable ${listed}` : `reads missing variables ${listed}`;
}
