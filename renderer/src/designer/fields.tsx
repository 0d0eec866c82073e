/**
 * Form fields of the properties panel. Each has `data-testid="prop-<name>"` on its input and
 * `prop-<name>-error` on its inline error. Text-like fields write to the store as you type (the
 * panel groups one field's typing into one undo step); fields whose intermediate text may be
 * invalid (ids, numbers, JSON) keep a draft and write only what parses.
 */
import { useEffect, useId, useRef, useState, type KeyboardEvent, type ReactNode } from 'react';
import { isIdentifier, parseExpression, splitTemplate } from '../../../engine/dsl';
import { checkScriptSyntax } from './validation';

/** Why a JSONata expression does not parse, or undefined. */
export function expressionError(src: string): string | undefined {
  if (src.trim() === '') return undefined;
  const r = parseExpression(src);
  if (r.ok) return undefined;
  return r.position === undefined ? r.message : `${r.message} (at character ${r.position})`;
}

/** Why a `{{ … }}` template in a config string does not parse, or undefined. */
export function templateError(text: string): string | undefined {
  for (const part of splitTemplate(text)) {
    if (part.kind !== 'expr') continue;
    const why = expressionError(part.src);
    if (why !== undefined) return `{{${part.src}}} does not parse: ${why}`;
  }
  return undefined;
}

/** A labelled row with an optional hint and error. */
export function Field({ label, name, hint, error, children, required }: { label: string; name: string; hint?: string; error?: string; children: ReactNode; required?: boolean }) {
  return (
    <div className={`rn-field${error !== undefined ? ' invalid' : ''}`} data-field={name}>
      <label className="rn-field-label" htmlFor={`prop-${name}`}>
        {label}
        {required ? <span className="rn-required" title="required"> *</span> : null}
      </label>
      {children}
      {error !== undefined ? (
        <p className="rn-field-error" role="alert" data-testid={`prop-${name}-error`}>
          {error}
        </p>
      ) : hint !== undefined ? (
        <p className="rn-field-hint">{hint}</p>
      ) : null}
    </div>
  );
}

/** A draft of `value` as text that follows outside changes (undo, another selection) while not focused. */
function useDraft(value: string): [string, (t: string) => void, { onFocus(): void; onBlur(): void }] {
  const [text, setText] = useState(value);
  const focused = useRef(false);
  useEffect(() => {
    if (!focused.current) setText(value);
  }, [value]);
  return [
    text,
    setText,
    {
      onFocus: () => {
        focused.current = true;
      },
      onBlur: () => {
        focused.current = false;
        setText(value);
      },
    },
  ];
}

interface BaseProps {
  name: string;
  label: string;
  hint?: string;
  required?: boolean;
  disabled?: boolean;
}

/** A one-line text field; '' means absent. `check` names a problem with the text. */
export function TextField({ value, onChange, check, placeholder, ...base }: BaseProps & { value: string | undefined; onChange(v: string | undefined): void; check?: (v: string) => string | undefined; placeholder?: string }) {
  const error = value !== undefined && check ? check(value) : undefined;
  return (
    <Field {...base} error={error}>
      <input
        id={`prop-${base.name}`}
        data-testid={`prop-${base.name}`}
        type="text"
        value={value ?? ''}
        placeholder={placeholder}
        disabled={base.disabled}
        spellCheck={false}
        onChange={(e) => onChange(e.target.value === '' ? undefined : e.target.value)}
      />
    </Field>
  );
}

/** A multi-line text field. */
export function TextAreaField({ value, onChange, rows = 2, ...base }: BaseProps & { value: string | undefined; onChange(v: string | undefined): void; rows?: number }) {
  return (
    <Field {...base}>
      <textarea id={`prop-${base.name}`} data-testid={`prop-${base.name}`} rows={rows} value={value ?? ''} disabled={base.disabled} onChange={(e) => onChange(e.target.value === '' ? undefined : e.target.value)} />
    </Field>
  );
}

/** A JSONata expression, parsed as you type (its error inline). `identifierOk`: a bare variable name is fine. */
export function ExpressionField({ value, onChange, identifierOk, placeholder, ...base }: BaseProps & { value: string | undefined; onChange(v: string | undefined): void; identifierOk?: boolean; placeholder?: string }) {
  const error = value === undefined || (identifierOk && isIdentifier(value)) ? undefined : expressionError(value);
  return (
    <Field {...base} error={error}>
      <input
        id={`prop-${base.name}`}
        data-testid={`prop-${base.name}`}
        className="rn-mono"
        type="text"
        value={value ?? ''}
        placeholder={placeholder}
        disabled={base.disabled}
        spellCheck={false}
        onChange={(e) => onChange(e.target.value === '' ? undefined : e.target.value)}
      />
    </Field>
  );
}

/** A text field whose `{{ … }}` templates are checked as you type. */
export function TemplateField({ value, onChange, templates, ...base }: BaseProps & { value: string | undefined; onChange(v: string | undefined): void; templates: boolean }) {
  return <TextField {...base} value={value} onChange={onChange} check={templates ? templateError : undefined} />;
}

/** A number (integers only with `integer`); '' means absent; text that is not a number is not written. */
export function NumberField({ value, onChange, integer, min, max, ...base }: BaseProps & { value: unknown; onChange(v: number | undefined): void; integer?: boolean; min?: number; max?: number }) {
  const shown = value === undefined ? '' : typeof value === 'number' ? String(value) : JSON.stringify(value);
  const [text, setText, focus] = useDraft(shown);
  let error: string | undefined;
  const trimmed = text.trim();
  const n = Number(trimmed);
  if (trimmed !== '') {
    if (!Number.isFinite(n)) error = 'Not a number';
    else if (integer && !Number.isInteger(n)) error = 'Must be a whole number';
    else if (min !== undefined && n < min) error = `Must be at least ${min}`;
    else if (max !== undefined && n > max) error = `Must be at most ${max}`;
  }
  return (
    <Field {...base} error={error}>
      <input
        id={`prop-${base.name}`}
        data-testid={`prop-${base.name}`}
        type="text"
        inputMode="decimal"
        value={text}
        disabled={base.disabled}
        {...focus}
        onChange={(e) => {
          setText(e.target.value);
          const t = e.target.value.trim();
          if (t === '') onChange(undefined);
          else if (Number.isFinite(Number(t))) onChange(Number(t));
        }}
      />
    </Field>
  );
}

/** A checkbox; unchecked writes `false` unless `absentWhenFalse`. */
export function CheckboxField({ value, onChange, ...base }: BaseProps & { value: boolean | undefined; onChange(v: boolean): void }) {
  return (
    <div className="rn-field rn-check">
      <label>
        <input id={`prop-${base.name}`} data-testid={`prop-${base.name}`} type="checkbox" checked={value ?? false} disabled={base.disabled} onChange={(e) => onChange(e.target.checked)} />
        {base.label}
      </label>
      {base.hint !== undefined ? <p className="rn-field-hint">{base.hint}</p> : null}
    </div>
  );
}

/** A select; the option `''` means absent. */
export function SelectField({ value, onChange, options, ...base }: BaseProps & { value: string | undefined; onChange(v: string | undefined): void; options: Array<{ value: string; label: string }> }) {
  const known = value === undefined || options.some((o) => o.value === value);
  return (
    <Field {...base}>
      <select id={`prop-${base.name}`} data-testid={`prop-${base.name}`} value={value ?? ''} disabled={base.disabled} onChange={(e) => onChange(e.target.value === '' ? undefined : e.target.value)}>
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
        {!known ? <option value={value}>{value}</option> : null}
      </select>
    </Field>
  );
}

/** Any JSON value; '' means absent. Text that does not parse is shown with its error and not written. */
export function JsonField({ value, onChange, rows = 4, expectObject, ...base }: BaseProps & { value: unknown; onChange(v: unknown): void; rows?: number; expectObject?: boolean }) {
  const shown = value === undefined ? '' : JSON.stringify(value, null, 2);
  const [text, setText, focus] = useDraft(shown);
  let error: string | undefined;
  if (text.trim() !== '') {
    try {
      const parsed: unknown = JSON.parse(text);
      if (expectObject && (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))) error = 'Must be a JSON object';
    } catch (e) {
      error = `Not valid JSON: ${e instanceof Error ? e.message : String(e)}`;
    }
  }
  return (
    <Field {...base} error={error}>
      <textarea
        id={`prop-${base.name}`}
        data-testid={`prop-${base.name}`}
        className="rn-mono"
        rows={rows}
        value={text}
        spellCheck={false}
        disabled={base.disabled}
        {...focus}
        onChange={(e) => {
          setText(e.target.value);
          const t = e.target.value;
          if (t.trim() === '') {
            onChange(undefined);
            return;
          }
          try {
            const parsed: unknown = JSON.parse(t);
            if (expectObject && (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))) return;
            onChange(parsed);
          } catch {
            // shown inline; the store keeps the last value that parsed
          }
        }}
      />
    </Field>
  );
}

/** A script editor: monospace, Tab indents, syntax errors inline with line and column. */
export function CodeField({ value, onChange, ...base }: BaseProps & { value: string | undefined; onChange(v: string | undefined): void }) {
  const syntax = value === undefined ? undefined : checkScriptSyntax(value);
  const hintId = useId();
  const onKeyDown = (e: KeyboardEvent<HTMLTextAreaElement>): void => {
    if (e.key !== 'Tab' || e.shiftKey) return;
    e.preventDefault();
    const el = e.currentTarget;
    const { selectionStart: a, selectionEnd: b } = el;
    const next = `${el.value.slice(0, a)}  ${el.value.slice(b)}`;
    onChange(next);
    requestAnimationFrame(() => el.setSelectionRange(a + 2, a + 2));
  };
  const lines = (value ?? '').split('\n').length;
  return (
    <Field {...base} error={syntax ? `Line ${syntax.line}, column ${syntax.column}: ${syntax.message}` : undefined}>
      <div className="rn-code">
        <pre className="rn-code-gutter" aria-hidden="true">
          {Array.from({ length: Math.max(lines, 6) }, (_, i) => `${i + 1}`).join('\n')}
        </pre>
        <textarea
          id={`prop-${base.name}`}
          data-testid={`prop-${base.name}`}
          aria-describedby={hintId}
          className="rn-mono"
          rows={Math.min(Math.max(lines, 6), 18)}
          wrap="off"
          value={value ?? ''}
          spellCheck={false}
          disabled={base.disabled}
          onKeyDown={onKeyDown}
          onChange={(e) => onChange(e.target.value === '' ? undefined : e.target.value)}
        />
      </div>
      <span id={hintId} className="rn-sr-only">
        JavaScript function body; sees input, variables and steps; return the result.
      </span>
    </Field>
  );
}

/**
 * A field written on commit (blur or Enter), for values whose intermediate text is invalid (a
 * node id being renamed). `commit` returns an error to show, or undefined when taken.
 */
export function CommitField({ value, commit, ...base }: BaseProps & { value: string; commit(v: string): string | undefined }) {
  const [text, setText] = useState(value);
  const [error, setError] = useState<string | undefined>(undefined);
  const focused = useRef(false);
  useEffect(() => {
    if (!focused.current) {
      setText(value);
      setError(undefined);
    }
  }, [value]);
  const apply = (): void => {
    const why = text === value ? undefined : commit(text);
    setError(why);
  };
  return (
    <Field {...base} error={error}>
      <input
        id={`prop-${base.name}`}
        data-testid={`prop-${base.name}`}
        type="text"
        value={text}
        disabled={base.disabled}
        spellCheck={false}
        onFocus={() => {
          focused.current = true;
        }}
        onBlur={() => {
          focused.current = false;
          apply();
        }}
        onKeyDown={(e) => {
          if (e.key === 'Enter') apply();
          if (e.key === 'Escape') {
            setText(value);
            setError(undefined);
          }
        }}
        onChange={(e) => setText(e.target.value)}
      />
    </Field>
  );
}
