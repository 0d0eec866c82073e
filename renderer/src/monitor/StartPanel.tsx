/**
 * Start an instance: the selected workflow (sidebar), a version (latest by default), a business
 * key and the input variables as JSON. The workflow's `inputSchema` is shown as a hint (required
 * fields, a template the schema accepts where its constraints give a value, naming the fields the
 * person must fill in); the engine checks the variables against it and a refusal names
 * the failing fields beside the editor (and as a toast).
 *
 * It folds to one line (`start-toggle`, with `aria-expanded`): folded by default once instances
 * exist, so the table gets the room (the list store keeps the choice).
 *
 * Test ids: `start-panel` (`data-open`), `start-toggle`, `selected-workflow`, `start-version`,
 * `start-business-key`, `start-vars`, `start-template`, `start-schema-hint`, `start-instance`,
 * `start-template-todo` (the fields the template could not derive), `start-vars-error`, `start-result`.
 */
import { useEffect, useState } from 'react';
import { PRIORITY_RANGE } from '../../../engine/vocabulary';
import { useStores, useWorkflows } from '../hooks';
import { inputTemplate, type InputTemplate } from '../input-template';
import { parseVariables } from '../variables';
import { useList } from './hooks';

interface SchemaInfo {
  required: string[];
  properties: Record<string, { type?: string }>;
}

function schemaInfo(schema: unknown): SchemaInfo | undefined {
  if (typeof schema !== 'object' || schema === null) return undefined;
  const s = schema as { required?: unknown; properties?: unknown };
  const properties =
    typeof s.properties === 'object' && s.properties !== null
      ? (s.properties as Record<string, { type?: string }>)
      : {};
  const required = Array.isArray(s.required)
    ? s.required.filter((r): r is string => typeof r === 'string')
    : [];
  return { required, properties };
}

/**
 * The variables text "fill template" gives: every property the schema's constraints let it derive
 * (input-template.ts), required ones first, and the fields the person must still fill in.
 */
function template(schema: unknown, info: SchemaInfo): { text: string; toFill: InputTemplate['toFill'] } {
  const t = inputTemplate(schema);
  const value = (typeof t.value === 'object' && t.value !== null && !Array.isArray(t.value) ? t.value : {}) as Record<string, unknown>;
  const ordered: Record<string, unknown> = {};
  for (const k of [...info.required, ...Object.keys(value)])
    if (Object.hasOwn(value, k)) ordered[k] = value[k];
  return { text: JSON.stringify(ordered, null, 2), toFill: t.toFill };
}

/** See the module comment. Folded, it is one line for the view's title row. */
export function StartPanel() {
  const { api } = useStores();
  const selected = useWorkflows((s) => s.selected);
  const start = useList((s) => s.start);
  const open = useList((s) => s.startOpen ?? false);
  const setOpen = useList((s) => s.setStartOpen);
  const [versions, setVersions] = useState<number[]>([]);
  const [version, setVersion] = useState<number | undefined>(undefined);
  const [schema, setSchema] = useState<SchemaInfo | undefined>(undefined);
  const [rawSchema, setRawSchema] = useState<unknown>(undefined);
  const [toFill, setToFill] = useState<InputTemplate['toFill']>([]);
  const [vars, setVars] = useState('{}');
  const [businessKey, setBusinessKey] = useState('');
  const [priority, setPriority] = useState('');
  const [error, setError] = useState<string | undefined>(undefined);
  const [started, setStarted] = useState<number | undefined>(undefined);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    let live = true;
    setVersions([]);
    setVersion(undefined);
    setSchema(undefined);
    if (selected === undefined) return;
    void api.invoke('workflow:versions', { name: selected }).then((r) => {
      if (live && r.ok) setVersions(r.value.map((v) => v.version));
    });
    return () => {
      live = false;
    };
  }, [api, selected]);

  useEffect(() => {
    let live = true;
    if (selected === undefined) return;
    void api
      .invoke('workflow:get', version === undefined ? { name: selected } : { name: selected, version })
      .then((r) => {
        if (!live || !r.ok) return;
        setSchema(schemaInfo(r.value.definition.inputSchema));
        setRawSchema(r.value.definition.inputSchema);
        setToFill([]);
      });
    return () => {
      live = false;
    };
  }, [api, selected, version]);

  const onStart = async (): Promise<void> => {
    if (selected === undefined) return;
    const parsed = parseVariables(vars);
    if (!parsed.ok) {
      setError(parsed.message);
      return;
    }
    const p = priority.trim();
    if (p !== '' && !(/^[-+]?\d+$/.test(p) && Number(p) >= PRIORITY_RANGE.min && Number(p) <= PRIORITY_RANGE.max)) {
      setError(`priority: an integer from ${PRIORITY_RANGE.min} to ${PRIORITY_RANGE.max}`);
      return;
    }
    setError(undefined);
    setBusy(true);
    try {
      const r = await start({
        workflow: selected,
        ...(version === undefined ? {} : { version }),
        ...(parsed.value === undefined ? {} : { variables: parsed.value }),
        ...(businessKey.trim() ? { businessKey: businessKey.trim() } : {}),
        ...(p === '' ? {} : { priority: Number(p) }),
      });
      if (r.ok) setStarted(r.value.id);
      else setError(`${r.error.code}: ${r.error.message}`);
    } finally {
      setBusy(false);
    }
  };

  const required = schema?.required ?? [];
  const toggle = (
    <button
      type="button"
      className="start-toggle"
      data-testid="start-toggle"
      aria-expanded={open}
      title={open ? 'Fold the start panel' : 'Start an instance: version, business key, variables'}
      onClick={() => setOpen(!open)}
    >
      <span aria-hidden="true">{open ? '▾' : '▸'}</span> Start
    </button>
  );
  if (!open)
    return (
      <section className="monitor-start folded" aria-label="Start an instance" data-testid="start-panel" data-open="false">
        {toggle}
        <strong className="start-title" data-testid="selected-workflow">
          {selected ?? 'no workflow selected'}
        </strong>
        {started !== undefined ? (
          <span className="muted" data-testid="start-result">
            started #{started}
          </span>
        ) : null}
      </section>
    );
  return (
    <section className="start-panel monitor-start" aria-label="Start an instance" data-testid="start-panel" data-open="true">
      <div className="start-row">
        {toggle}
        <label htmlFor="start-vars" className="start-title">
          <strong data-testid="selected-workflow">{selected ?? 'no workflow selected'}</strong>
        </label>
        <label className="inline-field">
          version
          <select
            data-testid="start-version"
            value={version ?? ''}
            onChange={(e) => setVersion(e.target.value === '' ? undefined : Number(e.target.value))}
            disabled={versions.length === 0}
          >
            <option value="">latest{versions[0] !== undefined ? ` (v${versions[0]})` : ''}</option>
            {versions.map((v) => (
              <option key={v} value={v}>
                v{v}
              </option>
            ))}
          </select>
        </label>
        <label className="inline-field">
          business key
          <input
            data-testid="start-business-key"
            value={businessKey}
            maxLength={200}
            placeholder="optional"
            onChange={(e) => setBusinessKey(e.target.value)}
          />
        </label>
        <label className="inline-field" title="Higher first when workers claim work; empty: the workflow's, else 0">
          priority
          <input data-testid="start-priority" size={6} inputMode="numeric" value={priority} placeholder="0" onChange={(e) => setPriority(e.target.value)} />
        </label>
        <span className="spacer" />
        {started !== undefined ? (
          <span className="muted" data-testid="start-result">
            started #{started}
          </span>
        ) : null}
        <button
          type="button"
          className="primary"
          data-testid="start-instance"
          disabled={selected === undefined || busy}
          onClick={() => void onStart()}
        >
          Start
        </button>
      </div>
      <div className="start-editor">
        <textarea
          id="start-vars"
          data-testid="start-vars"
          spellCheck={false}
          rows={3}
          value={vars}
          onChange={(e) => setVars(e.target.value)}
          aria-label="Input variables (JSON)"
          aria-describedby={toFill.length > 0 ? 'start-template-todo' : undefined}
        />
        {schema && Object.keys(schema.properties).length > 0 ? (
          <div className="schema-hint" data-testid="start-schema-hint">
            <span className="muted">inputSchema:</span>{' '}
            {Object.keys(schema.properties).map((k) => (
              <code
                key={k}
                className={required.includes(k) ? 'required' : ''}
                title={required.includes(k) ? 'required' : 'optional'}
              >
                {k}
                {required.includes(k) ? '*' : ''}
                <span className="muted">: {schema.properties[k]?.type ?? 'any'}</span>
              </code>
            ))}
            <button
              type="button"
              className="link"
              data-testid="start-template"
              onClick={() => {
                const t = template(rawSchema, schema);
                setVars(t.text);
                setToFill(t.toFill);
              }}
            >
              fill template
            </button>
          </div>
        ) : null}
      </div>
      {toFill.length > 0 ? (
        <p className="start-template-todo" id="start-template-todo" data-testid="start-template-todo">
          Fill in before starting:{' '}
          {toFill.map((f, i) => (
            <span key={f.path}>
              {i > 0 ? '; ' : ''}
              <code>{f.path}</code> {f.why}
            </span>
          ))}
        </p>
      ) : null}
      {error !== undefined ? (
        <p className="field-error" role="alert" data-testid="start-vars-error">
          {error}
        </p>
      ) : null}
    </section>
  );
}
