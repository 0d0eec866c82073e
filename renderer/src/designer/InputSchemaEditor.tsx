/**
 * The workflow's input variables as a list (name, type, required; a string's least length and
 * pattern) over its `inputSchema`, with the raw JSON Schema one click away for everything else
 * (nested shapes, enums, …).
 *
 * Test ids: `input-field-<i>-name`, `input-field-<i>-type`, `input-field-<i>-required`,
 * `input-field-<i>-minLength`, `input-field-<i>-pattern` (`input-field-<i>-pattern-error` when
 * it does not compile), `input-field-<i>-remove`, `input-field-add`, and `prop-inputSchema` for
 * the JSON.
 */
import { useEffect, useState } from 'react';
import { JsonField } from './fields';
import { FIELD_TYPES, freshFieldName, readFields, writeFields, type InputField } from './input-schema-form';

const NAME = /^[A-Za-z_$][\w$]*$/u;

function NameInput({ index, value, taken, disabled, onCommit }: { index: number; value: string; taken: ReadonlySet<string>; disabled: boolean; onCommit(name: string): void }) {
  const [text, setText] = useState(value);
  useEffect(() => setText(value), [value]);
  const error = text === value ? undefined : !NAME.test(text) ? 'letters, digits, _ or $' : taken.has(text) ? 'taken' : undefined;
  const commit = (): void => {
    if (text !== value && error === undefined) onCommit(text);
    else setText(value);
  };
  return (
    <input
      type="text"
      className={error !== undefined ? 'invalid' : undefined}
      aria-label="Field name"
      title={error}
      data-testid={`input-field-${index}-name`}
      value={text}
      disabled={disabled}
      spellCheck={false}
      onChange={(e) => setText(e.target.value)}
      onBlur={commit}
      onKeyDown={(e) => {
        if (e.key === 'Enter') commit();
      }}
    />
  );
}

/** Why `pattern` is not a regular expression (as the engine reads it: Unicode mode), or undefined. */
function patternError(pattern: string): string | undefined {
  if (pattern === '') return undefined;
  try {
    new RegExp(pattern, 'u');
    return undefined;
  } catch (e) {
    return e instanceof Error ? e.message.replace(/^Invalid regular expression: /u, '') : 'not a regular expression';
  }
}

/** A string field's `minLength` and `pattern`, committed on Enter or when the field is left. */
function StringRules({ index, field, disabled, onCommit }: { index: number; field: InputField; disabled: boolean; onCommit(patch: Pick<InputField, 'minLength' | 'pattern'>): void }) {
  const [min, setMin] = useState(field.minLength === undefined ? '' : String(field.minLength));
  const [pattern, setPattern] = useState(field.pattern ?? '');
  useEffect(() => setMin(field.minLength === undefined ? '' : String(field.minLength)), [field.minLength]);
  useEffect(() => setPattern(field.pattern ?? ''), [field.pattern]);
  const minError = min.trim() === '' || /^\d{1,9}$/u.test(min.trim()) ? undefined : 'a whole number ≥ 0';
  const regexError = patternError(pattern);
  const commitMin = (): void => {
    if (minError !== undefined) return;
    const next = min.trim() === '' ? undefined : Number(min.trim());
    if (next !== field.minLength) onCommit({ minLength: next, pattern: field.pattern });
  };
  const commitPattern = (): void => {
    if (regexError !== undefined) return;
    const next = pattern === '' ? undefined : pattern;
    if (next !== field.pattern) onCommit({ minLength: field.minLength, pattern: next });
  };
  return (
    <div className="rn-input-rules">
      <label title="The least number of characters (minLength)">
        min. length
        <input
          type="text"
          inputMode="numeric"
          className={minError !== undefined ? 'invalid' : undefined}
          aria-invalid={minError !== undefined}
          title={minError}
          data-testid={`input-field-${index}-minLength`}
          value={min}
          disabled={disabled}
          placeholder="0"
          onChange={(e) => setMin(e.target.value)}
          onBlur={commitMin}
          onKeyDown={(e) => {
            if (e.key === 'Enter') commitMin();
          }}
        />
      </label>
      <label title="A regular expression the text must match (pattern; not anchored unless it says ^…$)">
        pattern
        <input
          type="text"
          className={regexError !== undefined ? 'invalid mono' : 'mono'}
          aria-invalid={regexError !== undefined}
          data-testid={`input-field-${index}-pattern`}
          value={pattern}
          disabled={disabled}
          spellCheck={false}
          placeholder="e.g. ^[A-Z]{3}-\d+$"
          onChange={(e) => setPattern(e.target.value)}
          onBlur={commitPattern}
          onKeyDown={(e) => {
            if (e.key === 'Enter') commitPattern();
          }}
        />
      </label>
      {regexError !== undefined ? (
        <p className="rn-field-error" role="alert" data-testid={`input-field-${index}-pattern-error`}>
          Not a regular expression: {regexError}
        </p>
      ) : minError !== undefined ? (
        <p className="rn-field-error" role="alert">
          Min. length: {minError}
        </p>
      ) : null}
    </div>
  );
}

/** The input variables editor. */
export function InputSchemaEditor({ schema, disabled, onChange }: { schema: unknown; disabled: boolean; onChange(next: Record<string, unknown> | undefined): void }) {
  const fields = readFields(schema);
  const set = (next: InputField[], renamed?: Map<number, string>): void => onChange(writeFields(schema, next, renamed));
  return (
    <div className="rn-input-schema">
      {fields ? (
        <>
          {fields.length === 0 ? <p className="rn-field-hint">No input: instances start with no variables checked.</p> : null}
          {fields.map((f, i) => {
            const taken = new Set(fields.filter((_, j) => j !== i).map((x) => x.name));
            return (
              <div className="rn-input-row" key={`${i}-${f.name}`}>
                <NameInput
                  index={i}
                  value={f.name}
                  taken={taken}
                  disabled={disabled}
                  onCommit={(name) =>
                    set(
                      fields.map((x, j) => (j === i ? { ...x, name } : x)),
                      new Map([[i, f.name]]),
                    )
                  }
                />
                <select aria-label="Field type" data-testid={`input-field-${i}-type`} value={f.type} disabled={disabled} onChange={(e) => set(fields.map((x, j) => (j === i ? { ...x, type: e.target.value } : x)))}>
                  <option value="">any</option>
                  {FIELD_TYPES.map((t) => (
                    <option key={t} value={t}>
                      {t}
                    </option>
                  ))}
                </select>
                <label className="rn-input-required" title="Required">
                  <input type="checkbox" data-testid={`input-field-${i}-required`} checked={f.required} disabled={disabled} onChange={(e) => set(fields.map((x, j) => (j === i ? { ...x, required: e.target.checked } : x)))} />
                  req.
                </label>
                <button type="button" className="icon rn-input-remove" aria-label={`Remove ${f.name}`} data-testid={`input-field-${i}-remove`} disabled={disabled} onClick={() => set(fields.filter((_, j) => j !== i))}>
                  ×
                </button>
                {f.type === 'string' ? <StringRules index={i} field={f} disabled={disabled} onCommit={(patch) => set(fields.map((x, j) => (j === i ? { ...x, ...patch } : x)))} /> : null}
              </div>
            );
          })}
          <button type="button" data-testid="input-field-add" disabled={disabled} onClick={() => set([...fields, { name: freshFieldName(fields), type: 'string', required: true }])}>
            + Add a variable
          </button>
        </>
      ) : (
        <p className="rn-field-hint">This schema is edited as JSON below.</p>
      )}
      <details className="rn-details" open={!fields}>
        <summary>Input schema as JSON</summary>
        <JsonField name="inputSchema" label="Input schema (JSON Schema)" hint="Checks the variables an instance starts with" expectObject rows={6} value={schema} disabled={disabled} onChange={(v) => onChange(v as Record<string, unknown> | undefined)} />
      </details>
    </div>
  );
}
