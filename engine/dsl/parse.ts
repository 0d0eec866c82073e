/**
 * Reading workflow files: JSON, or YAML with the same shape (DESIGN.md section 3).
 *
 * Shared with the renderer (import from a file picker or a paste): imports nothing from Node.
 */
import { parseDocument } from 'yaml';
import { EngineError } from '../errors';
import { describeValueProblem, findValueProblem, valueProblemCode } from './value-limits';

/**
 * Most alias expansions one YAML document may make.
 *
 * A few anchors nesting aliases to each other ("billion laughs") expand exponentially; yaml
 * counts expansions and stops past this number. A workflow has no honest need for many.
 */
export const MAX_YAML_ALIASES = 100;

/** Where a syntax error is, 1-based. */
interface Location {
  line: number;
  column: number;
}

function syntaxError(
  fileName: string | undefined,
  format: 'JSON' | 'YAML',
  message: string,
  at?: Location,
): EngineError {
  const where = `${fileName ?? 'workflow'}${at ? `:${at.line}:${at.column}` : ''}`;
  return new EngineError('INVALID_WORKFLOW', `${where}: invalid ${format}: ${message}`, {
    details: { fileName, format, line: at?.line, column: at?.column },
  });
}

function locate(text: string, offset: number): Location {
  let line = 1;
  let lineStart = 0;
  const end = Math.min(offset, text.length);
  for (let i = 0; i < end; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  // Columns count code points, so an emoji before the error counts as one column.
  return { line, column: [...text.slice(lineStart, end)].length + 1 };
}

/**
 * Finds the first JSON syntax error's offset and a message; with `duplicates`, a key repeated in
 * one object is an error too (at the repeat).
 *
 * Node 20's JSON.parse messages give a position only for some errors ("Unexpected token 'x', …
 * is not valid JSON" has none), so on failure this small scanner walks the text again to say
 * where. JSON.parse also keeps the last of two equal keys without a word, so a parsed file is
 * scanned once more for those (YAML refuses them too).
 */
function findJsonError(text: string, duplicates = false): { offset: number; message: string } | undefined {
  let i = 0;
  const fail = (message: string): never => {
    throw { offset: i, message };
  };
  const ws = (): void => {
    while (i < text.length && ' \t\n\r'.includes(text.charAt(i))) i++;
  };
  const describe = (): string =>
    i >= text.length ? 'end of input' : JSON.stringify(String.fromCodePoint(text.codePointAt(i) ?? 0));
  const literal = (word: string): void => {
    if (text.startsWith(word, i)) i += word.length;
    else fail(`unexpected ${describe()}`);
  };
  const string = (): void => {
    i++;
    for (;;) {
      if (i >= text.length) fail('unterminated string');
      const c = text.charCodeAt(i);
      if (c === 34) {
        i++;
        return;
      }
      if (c < 0x20) fail('control character in string (escape it)');
      if (c === 92) {
        const e = text.charAt(i + 1);
        if ('"\\/bfnrt'.includes(e) && e !== '') i += 2;
        else if (e === 'u' && /^[0-9a-fA-F]{4}$/u.test(text.slice(i + 2, i + 6))) i += 6;
        else fail('bad escape in string');
      } else i++;
    }
  };
  const number = (): void => {
    const m = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/u.exec(text.slice(i, i + 400));
    if (!m) fail(`unexpected ${describe()}`);
    else i += m[0].length;
  };
  const value = (): void => {
    ws();
    const c = text.charAt(i);
    if (c === '{') {
      i++;
      ws();
      if (text.charAt(i) === '}') {
        i++;
        return;
      }
      const keys = duplicates ? new Set<string>() : undefined;
      for (;;) {
        ws();
        if (text.charAt(i) !== '"') fail(`expected a double-quoted property name, found ${describe()}`);
        const keyStart = i;
        string();
        if (keys !== undefined) {
          const key = JSON.parse(text.slice(keyStart, i)) as string;
          if (keys.has(key)) {
            i = keyStart;
            fail(`duplicate key ${JSON.stringify(key)} in an object (keys must be unique)`);
          }
          keys.add(key);
        }
        ws();
        if (text.charAt(i) !== ':') fail(`expected ":" after the property name, found ${describe()}`);
        i++;
        value();
        ws();
        if (text.charAt(i) === ',') {
          i++;
          continue;
        }
        if (text.charAt(i) === '}') {
          i++;
          return;
        }
        fail(`expected "," or "}" after a property value, found ${describe()}`);
      }
    }
    if (c === '[') {
      i++;
      ws();
      if (text.charAt(i) === ']') {
        i++;
        return;
      }
      for (;;) {
        value();
        ws();
        if (text.charAt(i) === ',') {
          i++;
          continue;
        }
        if (text.charAt(i) === ']') {
          i++;
          return;
        }
        fail(`expected "," or "]" after an array item, found ${describe()}`);
      }
    }
    if (c === '"') return string();
    if (c === 't') return literal('true');
    if (c === 'f') return literal('false');
    if (c === 'n') return literal('null');
    if (c === '-' || (c >= '0' && c <= '9')) return number();
    fail(`unexpected ${describe()}`);
  };
  try {
    value();
    ws();
    if (i < text.length) fail(`unexpected ${describe()} after the JSON value`);
    return undefined;
  } catch (err) {
    if (typeof err === 'object' && err !== null && 'offset' in err)
      return err as { offset: number; message: string };
    return undefined; // e.g. a stack overflow on absurd nesting: fall back to JSON.parse's message
  }
}

function parseJson(text: string, fileName: string | undefined): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (err) {
    const found = findJsonError(text);
    if (found) throw syntaxError(fileName, 'JSON', found.message, locate(text, found.offset));
    throw syntaxError(fileName, 'JSON', err instanceof Error ? err.message : String(err));
  }
  const duplicate = findJsonError(text, true);
  if (duplicate) throw syntaxError(fileName, 'JSON', duplicate.message, locate(text, duplicate.offset));
  return value;
}

function parseYaml(text: string, fileName: string | undefined): unknown {
  const doc = parseDocument(text, {
    prettyErrors: true,
    uniqueKeys: true,
    // `!!binary` and `!!timestamp` would become a Buffer and a Date: not JSON, not the DSL.
    resolveKnownTags: false,
  });
  const first = doc.errors[0] ?? doc.warnings[0];
  if (first) {
    // prettyErrors appends " at line L, column C:" and a code excerpt; the location is given apart.
    const message = (first.message.split('\n')[0] ?? first.message).replace(
      / at line \d+, column \d+:?$/u,
      '',
    );
    const pos = first.linePos?.[0];
    throw syntaxError(fileName, 'YAML', message, pos ? { line: pos.line, column: pos.col } : undefined);
  }
  try {
    return doc.toJS({ maxAliasCount: MAX_YAML_ALIASES }) as unknown;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    throw syntaxError(
      fileName,
      'YAML',
      /alias/iu.test(message)
        ? `too many alias expansions (more than ${MAX_YAML_ALIASES}): ${message}`
        : message,
    );
  }
}

/**
 * Parses a workflow file's text into plain data (not yet validated: see `validateWorkflow`).
 *
 * The format follows the file name (`.json`; `.yaml` / `.yml`; case-insensitive); without one
 * that tells, text whose first non-space character is `{` is JSON, anything else YAML. A leading
 * byte-order mark is ignored. YAML must be one document with unique keys, no custom tags, and
 * at most {@link MAX_YAML_ALIASES} alias expansions.
 *
 * @throws EngineError `INVALID_WORKFLOW` for a syntax error, its message starting
 *   `file:line:column:` and `details` holding `{ fileName, format, line, column }`.
 */
export function parseWorkflowText(text: string, fileName?: string): unknown {
  const value = parseText(text, fileName);
  const nesting = findValueProblem(value);
  if (nesting) {
    throw new EngineError('INVALID_WORKFLOW', `${fileName ?? 'workflow'}: ${describeValueProblem('the file', nesting)}`, {
      details: [{ code: valueProblemCode(nesting), message: describeValueProblem('the file', nesting), path: nesting.path }],
    });
  }
  return value;
}

function parseText(text: string, fileName?: string): unknown {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const lower = fileName?.toLowerCase() ?? '';
  if (lower.endsWith('.json')) return parseJson(body, fileName);
  if (lower.endsWith('.yaml') || lower.endsWith('.yml')) return parseYaml(body, fileName);
  return body.trimStart().startsWith('{') ? parseJson(body, fileName) : parseYaml(body, fileName);
}
