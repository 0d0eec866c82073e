/**
 * The `inputSchema` check of validation: a light shape check, the patterns RE2 must be able to
 * run, then Ajv's own compile where the page allows it (input-schema.ts).
 *
 * Shared with the renderer: imports nothing from Node.
 */
import { compileInputSchema, schemaPath, schemaPatternProblems } from './input-schema';
import { isRecord, nodeSubject, problem, typeName, type Json, type LooseNode, type Problem, type Subject } from './validate-problems';

/**
 * A light shape check (a pasted example, a typo), then Ajv's own compile when `compile` is set:
 * a schema Ajv refuses would otherwise pass here and fail every start.
 */
export function checkInputSchema(raw: unknown, compile: boolean, out: Problem[]): void {
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
  return pushPatternProblems(schema, { subject, root: 'inputSchema', path: ['inputSchema'], syntax: 'INVALID_INPUT_SCHEMA' }, out);
}

/**
 * Reports each pattern of `schema` that cannot run, named under `at.root` (`inputSchema`,
 * `config.form`) with its path under `at.path`: a syntax error as `at.syntax`, a construct RE2
 * lacks as UNSUPPORTED_REGEX. True when every pattern can run.
 */
function pushPatternProblems(
  schema: Json,
  at: { subject: Subject; root: string; path: (string | number)[]; syntax: 'INVALID_INPUT_SCHEMA' | 'INVALID_CONFIG' },
  out: Problem[],
): boolean {
  const found = schemaPatternProblems(schema);
  for (const p of found) {
    out.push(
      problem(
        p.kind === 'syntax' ? at.syntax : 'UNSUPPORTED_REGEX',
        at.subject,
        `${schemaPath(p.path, at.root)} ${JSON.stringify(p.pattern)} ${p.reason}`,
        [...at.path, ...p.path],
      ),
    );
  }
  return found.length === 0;
}

/**
 * An approval's `config.form` is a JSON Schema the same way: its patterns must run and (where the
 * page allows it) Ajv must compile it, or every approval of the node is refused at decision time
 * and it can only be rejected. Problems name `config.form…` (INVALID_CONFIG, UNSUPPORTED_REGEX).
 */
export function checkApprovalForms(nodes: readonly LooseNode[], compile: boolean, out: Problem[]): void {
  for (const node of nodes) {
    const config = node.raw['config'];
    const form = node.raw['type'] === 'approval' && isRecord(config) ? config['form'] : undefined;
    if (!isRecord(form)) continue;
    const subject = nodeSubject(node, node.index);
    const base: (string | number)[] = ['nodes', node.index, 'config', 'form'];
    if (!pushPatternProblems(form, { subject, root: 'config.form', path: base, syntax: 'INVALID_CONFIG' }, out) || !compile) continue;
    const compiled = compileInputSchema(form);
    if (!compiled.ok) out.push(problem('INVALID_CONFIG', subject, `config.form is not a valid JSON Schema: ${compiled.reason}`, base));
  }
}
