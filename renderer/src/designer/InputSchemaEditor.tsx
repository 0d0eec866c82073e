/**
 * The workflow's input variables as a list (name, type, required) over its `inputSchema`, with
 * the raw JSON Schema one click away for everything else (patterns, nested shapes).
 *
 * Test ids: `input-field-<i>-name`, `input-field-<i>-type`, `input-field-<i>-required`,
 * `input-field-<i>-remove`, `input-field-add`, and `prop-inputSchema` for the JSON.
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
