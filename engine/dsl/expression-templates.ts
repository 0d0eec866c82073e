/**
 * `{{ … }}` templates inside config strings (DESIGN.md section 3): splitting a string into text
 * and expressions, and rendering every template of a config against a scope. A template that
 * reads a missing variable fails its node ("Rules pinned"), found as expression-scope.ts finds it.
 *
 * Shared with the renderer: imports nothing from Node.
 */
import { EngineError } from '../errors';
import { evaluateExpression, parses, type ExpressionScope } from './expression-core';
import { describeMissing, missingNames, references } from './expression-scope';

/** One piece of a config string: literal text or a `{{ … }}` expression. */
export type TemplatePart = { kind: 'text'; text: string } | { kind: 'expr'; src: string; start: number };

/**
 * Splits a string into literal text and `{{ … }}` expressions.
 *
 * A template ends at the first `}}` after which its inside parses, so object constructors such as
 * `{{ {"a": {"b": 1}} }}` work; when no candidate parses, the first `}}` ends it (and evaluation
 * reports the parse error). An unclosed `{{` is literal text. `start` is the offset of `{{`.
 */
export function splitTemplate(s: string): TemplatePart[] {
  const parts: TemplatePart[] = [];
  let pos = 0;
  while (pos < s.length) {
    const open = s.indexOf('{{', pos);
    if (open < 0) break;
    const firstClose = s.indexOf('}}', open + 2);
    if (firstClose < 0) break;
    let close = firstClose;
    // Bounded, so a long string of stray braces cannot cost many parses.
    for (let c = firstClose, tries = 0; c >= 0 && tries < 16; c = s.indexOf('}}', c + 1), tries++) {
      if (parses(s.slice(open + 2, c))) {
        close = c;
        break;
      }
    }
    if (open > pos) parts.push({ kind: 'text', text: s.slice(pos, open) });
    parts.push({ kind: 'expr', src: s.slice(open + 2, close), start: open });
    pos = close + 2;
  }
  if (pos < s.length) parts.push({ kind: 'text', text: s.slice(pos) });
  return parts;
}

/** Whether `s` contains at least one `{{ … }}` template. */
export function hasTemplate(s: string): boolean {
  return splitTemplate(s).some((part) => part.kind === 'expr');
}

/**
 * Renders `{{ … }}` templates in every string of a JSON-like value.
 *
 * Walks objects and arrays and returns a new structure (the input is never mutated). A string
 * that is exactly one template (nothing around it) takes the expression's value with its type
 * (number, object, …); otherwise each template is stringified into the text (strings as is,
 * objects and arrays as JSON, `null` as `null`). Values are not URL-encoded: wrap path and query
 * parts in `$encodeUrlComponent(…)`.
 *
 * A template never renders a missing value silently (a request to `/devices//` or a message
 * with a hole): it fails when it reads a missing variable (found as {@link evaluateWhen} finds
 * them) unless it tests presence with `$exists(…)` and still yields a value, and a template inside
 * text fails when it yields no value.
 *
 * @throws EngineError `EXPRESSION_ERROR` (not retryable) naming the template, where it is in the
 *   value (`config.url`) and the missing variable(s); or from {@link evaluateExpression}.
 */
export async function renderTemplates(value: unknown, scope: ExpressionScope): Promise<unknown> {
  return renderAt(value, scope, []);
}

async function renderAt(value: unknown, scope: ExpressionScope, path: (string | number)[]): Promise<unknown> {
  if (typeof value === 'string') return renderString(value, scope, path);
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const [i, item] of value.entries()) out.push(await renderAt(item, scope, [...path, i]));
    return out;
  }
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = await renderAt(item, scope, [...path, key]);
    return out;
  }
  return value;
}

/** `config.url`, `config.body.items[0]`: where a template sits, as messages name it. */
function templatePath(path: readonly (string | number)[]): string {
  let out = 'config';
  for (const key of path) out += typeof key === 'number' ? `[${key}]` : `.${key}`;
  return out;
}

function templateError(src: string, path: readonly (string | number)[], problem: string, missing: string[] = []): EngineError {
  return new EngineError('EXPRESSION_ERROR', `template {{${src}}} in ${templatePath(path)} ${problem}`, {
    retryable: false,
    details: { expression: src, path: templatePath(path), ...(missing.length > 0 && { missing }) },
  });
}

/** One template's value; `embedded` when text surrounds it (then it must yield a value). */
async function renderPart(
  src: string,
  scope: ExpressionScope,
  path: readonly (string | number)[],
  embedded: boolean,
): Promise<unknown> {
  const refs = references(src);
  const missing = missingNames(refs, scope);
  const guarded = refs.some((ref) => ref.presenceOnly);
  const hint = ' (test optional variables with $exists(…), e.g. {{ $exists(x) ? x : "none" }})';
  if (missing.length > 0 && !guarded) throw templateError(src, path, `${describeMissing(missing)}${hint}`, missing);
  const value = await evaluateExpression(src, scope);
  if (value === undefined && missing.length > 0) {
    throw templateError(src, path, `${describeMissing(missing)}${hint}`, missing);
  }
  if (value === undefined && embedded) {
    throw templateError(src, path, `yields no value, which would leave a hole in the text${hint}`);
  }
  return value;
}

async function renderString(s: string, scope: ExpressionScope, path: readonly (string | number)[]): Promise<unknown> {
  const parts = splitTemplate(s);
  const only = parts[0];
  if (parts.length === 1 && only?.kind === 'expr') return renderPart(only.src, scope, path, false);
  if (!parts.some((part) => part.kind === 'expr')) return s;
  let out = '';
  for (const part of parts) {
    out += part.kind === 'text' ? part.text : stringify(await renderPart(part.src, scope, path, true));
  }
  return out;
}

function stringify(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value !== null && typeof value === 'object') return JSON.stringify(value);
  return String(value);
}
