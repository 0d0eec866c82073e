/**
 * The expression checks of validation: every `when`, `input`, `output` and `{{ … }}` template
 * must parse as JSONata and be able to run (a regex RE2 refuses is `UNSUPPORTED_REGEX`), and a
 * template must be closed.
 *
 * Shared with the renderer: imports nothing from Node.
 */
import { parseExpression, splitTemplate } from './expressions';
import {
  edgeSubject,
  isRecord,
  problem,
  showPath,
  type LooseEdge,
  type Path,
  type Problem,
  type Subject,
} from './validate-problems';

/** Every string in a config with its path, for template checks. */
function strings(value: unknown, path: Path, out: Array<{ path: Path; value: string }>): void {
  if (typeof value === 'string') out.push({ path, value });
  else if (Array.isArray(value)) value.forEach((v: unknown, i) => strings(v, [...path, i], out));
  else if (isRecord(value)) for (const [k, v] of Object.entries(value)) strings(v, [...path, k], out);
}

/** Whether `value` is a string holding a `{{ … }}` template, in a type whose config has templates. */
export function isTemplated(value: unknown, templates: boolean): boolean {
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
 * Checks the `{{ … }}` templates in every string of a config: each must be closed and parse.
 *
 * `prefix` is `""` or `"compensate."`, as in validate-nodes.ts's `checkTypeAndConfig`.
 */
export function checkConfigTemplates(
  config: unknown,
  subject: Subject,
  basePath: Path,
  prefix: string,
  out: Problem[],
): void {
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

/**
 * Reports `src` (a `when`, `input` or `output`) when it does not parse or cannot run; anything
 * but a string is the schema's to report. `field` names it in the message.
 */
export function checkExpression(src: unknown, field: string, subject: Subject, path: Path, out: Problem[]): void {
  if (typeof src !== 'string') return;
  const failure = parseFailure(src);
  if (failure === undefined) return;
  out.push(
    failure.unsupported
      ? problem('UNSUPPORTED_REGEX', subject, `${field} cannot run: ${failure.text}`, path)
      : problem('EXPRESSION_PARSE', subject, `${field} does not parse: ${failure.text}`, path),
  );
}

/** Checks every edge's `when`. */
export function checkEdgeExpressions(edges: LooseEdge[], out: Problem[]): void {
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
