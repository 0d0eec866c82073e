/**
 * The properties drawer (`properties-panel`, closed by `close-properties`): for one selected node, its common fields and a form
 * generated from its type's config JSON Schema; for one selected edge, its kind, `when`, label and
 * id; with nothing selected, the workflow's own fields. Several selected: what can be done to them.
 *
 * Field test ids: `prop-<name>` (config fields `prop-config-<key>`, retry `prop-retry-<key>`,
 * compensation `prop-compensate-…`, workflow fields `prop-workflow-…`); errors `prop-<name>-error`.
 * Typing in one field is one undo step (focus opens a batch, blur closes it).
 *
 * The `workflow` and `version` of a node that calls a workflow (`subworkflow`, `map`) are pickers
 * over the deployed workflows (`workflow:list`, the sidebar's store): a select of names (the
 * drawing's own name left out, a call of itself being a cycle) and a select of that workflow's
 * versions, "latest when the node starts" first.
 */
import { useEffect } from 'react';
import { useShallow } from 'zustand/react/shallow';
import type { NodeTypeInfo } from '../../../engine/api/contract';
import { ConcurrencySchema, RetryPolicySchema } from '../../../engine/dsl';
import { PRIORITY_RANGE } from '../../../engine/vocabulary';
import { CALLING_TYPES } from '../../../engine/dsl/validate-calls';
import { cronProblem, parseCron } from '../../../engine/dsl/schedules';
import { useWorkflows } from '../hooks';
import { useDesigner, useDesignerStore } from './context';
import { dslEdgeId } from './convert';
import { CheckboxField, CodeField, CommitField, ExpressionField, JsonField, NumberField, SelectField, TemplateField, TextAreaField, TextField } from './fields';
import { InputSchemaEditor } from './InputSchemaEditor';
import { allowsExtraKeys, configFields, textOrNumber, type FieldSpec } from './schema-form';
import type { FlowEdge, NodeDef, WorkflowMeta } from './types';

type Json = Record<string, unknown>;

function isRecord(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `obj` with `key` set to `value`, or removed when `value` is undefined; the same object if unchanged. */
function withKey<T extends object>(obj: T, key: string, value: unknown): T {
  const current = (obj as Json)[key];
  if (current === value) return obj;
  const out = { ...obj } as Json;
  if (value === undefined) delete out[key];
  else out[key] = value;
  return out as T;
}

/** Sets `key` inside the nested object `holder[field]`, removing the nested object when it empties. */
function withNested<T extends object>(obj: T, field: string, key: string, value: unknown): T {
  const nested = isRecord((obj as Json)[field]) ? ((obj as Json)[field] as Json) : {};
  const next = withKey(nested, key, value);
  if (next === nested && (obj as Json)[field] !== undefined) return obj;
  return withKey(obj, field, Object.keys(next).length === 0 ? undefined : next);
}

type RetryKey = keyof typeof RetryPolicySchema.shape;

/** A retry field's bounds, read from the schema the engine validates with, so the two cannot drift. */
function retryBounds(key: RetryKey): { integer: boolean; min?: number; max?: number } {
  const n = RetryPolicySchema.shape[key].unwrap();
  const finite = (v: number | null): number | undefined => (v === null || !Number.isFinite(v) ? undefined : v);
  return { integer: n.isInt, min: finite(n.minValue), max: finite(n.maxValue) };
}

const RETRY_LABELS: Array<{ key: RetryKey; label: string; hint?: string }> = [
  { key: 'maxAttempts', label: 'Max attempts', hint: 'Every attempt, the first included (1 = no retry)' },
  { key: 'initialIntervalMs', label: 'First delay (ms)' },
  { key: 'backoffCoefficient', label: 'Backoff ×', hint: 'Any number ≥ 1; the max delay caps the delay' },
  { key: 'maxIntervalMs', label: 'Max delay (ms)' },
  { key: 'jitter', label: 'Jitter (0–1)' },
];
const RETRY_FIELDS = RETRY_LABELS.map((f) => ({ ...f, ...retryBounds(f.key) }));

function RetryFields({ prefix, value, onChange, disabled }: { prefix: string; value: unknown; onChange(key: string, v: number | undefined): void; disabled: boolean }) {
  const retry = isRecord(value) ? value : {};
  return (
    <div className="rn-grid2">
      {RETRY_FIELDS.map((f) => (
        <NumberField
          key={f.key}
          name={`${prefix}-${f.key}`}
          label={f.label}
          hint={f.hint}
          integer={f.integer}
          min={f.min}
          max={f.max}
          value={retry[f.key]}
          disabled={disabled}
          onChange={(v) => onChange(f.key, v)}
        />
      ))}
    </div>
  );
}

/** The called workflow's name: a select of the deployed workflows (see the module comment). */
function WorkflowPicker({ common, value, onChange }: { common: { name: string; label: string; hint?: string; required: boolean; disabled: boolean }; value: unknown; onChange(v: unknown): void }) {
  const items = useWorkflows((s) => s.items);
  const own = useDesigner((s) => s.meta.name);
  if (value !== undefined && typeof value !== 'string') return <JsonField {...common} value={value} onChange={onChange} rows={2} />;
  const options = [{ value: '', label: items.length === 0 ? '(no workflow deployed yet)' : '(choose a workflow)' }, ...items.filter((w) => w.name !== own).map((w) => ({ value: w.name, label: w.name }))];
  // A name from an imported file (or a workflow deleted since) stays shown, marked: the host's
  // validation names it UNKNOWN_WORKFLOW (or WORKFLOW_CYCLE for the drawing's own name).
  if (value !== undefined && !options.some((o) => o.value === value)) options.push({ value, label: `${value} (${value === own ? 'this workflow' : 'not deployed'})` });
  return <SelectField {...common} value={value} onChange={onChange} options={options} />;
}

/** The called workflow's version: latest (absent) or one of the chosen workflow's versions. */
function VersionPicker({ common, workflow, value, onChange }: { common: { name: string; label: string; hint?: string; required: boolean; disabled: boolean }; workflow: unknown; value: unknown; onChange(v: unknown): void }) {
  const latest = useWorkflows((s) => s.items.find((w) => w.name === workflow)?.latestVersion ?? 0);
  if (value !== undefined && typeof value !== 'number') return <JsonField {...common} value={value} onChange={onChange} rows={2} />;
  const options = [{ value: '', label: 'latest when the node starts' }, ...Array.from({ length: latest }, (_, i) => latest - i).map((v) => ({ value: String(v), label: `v${v}` }))];
  return <SelectField {...common} value={value === undefined ? undefined : String(value)} onChange={(v) => onChange(v === undefined ? undefined : Number(v))} options={options} />;
}

function ConfigField({ spec, value, onChange, onReplace, templates, disabled, prefix, type, config }: { spec: FieldSpec; value: unknown; onChange(v: unknown): void; onReplace(next: Json): void; templates: boolean; disabled: boolean; prefix: string; type: string | undefined; config: Json }) {
  const name = `${prefix}-${spec.name}`;
  const label = spec.name;
  const common = { name, label, hint: spec.description, required: spec.required, disabled };
  if (type !== undefined && CALLING_TYPES.has(type)) {
    // Another workflow's versions are not this one's: a pinned version goes with the old name.
    if (spec.name === 'workflow') return <WorkflowPicker common={common} value={value} onChange={(v) => onReplace(withKey(withKey(config, 'version', undefined), 'workflow', v))} />;
    if (spec.name === 'version') return <VersionPicker common={common} workflow={config['workflow']} value={value} onChange={onChange} />;
  }
  switch (spec.kind) {
    case 'code':
      return <CodeField {...common} value={typeof value === 'string' ? value : undefined} onChange={onChange} />;
    case 'enum':
      return (
        <SelectField
          {...common}
          value={typeof value === 'string' ? value : undefined}
          onChange={onChange}
          options={[{ value: '', label: spec.default !== undefined ? `(default: ${String(spec.default)})` : '(none)' }, ...(spec.enumValues ?? []).map((v) => ({ value: v, label: v }))]}
        />
      );
    case 'integer':
    case 'number':
      // A template ("{{ n }}") is a string where a number goes: keep it editable as text.
      if (typeof value === 'string') return <TemplateField {...common} templates={templates} value={value} onChange={onChange} />;
      return <NumberField {...common} integer={spec.kind === 'integer'} min={spec.minimum} max={spec.maximum} value={value} onChange={onChange} />;
    case 'boolean':
      return <CheckboxField {...common} value={typeof value === 'boolean' ? value : undefined} onChange={onChange} />;
    case 'text-or-number':
      return <TextField {...common} value={value === undefined ? undefined : String(value)} onChange={(t) => onChange(t === undefined ? undefined : textOrNumber(t))} />;
    case 'text':
      if (value !== undefined && typeof value !== 'string') return <JsonField {...common} value={value} onChange={onChange} rows={2} />;
      return <TemplateField {...common} templates={templates} value={value} onChange={onChange} />;
    case 'json':
      return <JsonField {...common} value={value} onChange={onChange} rows={3} />;
  }
}

function ConfigForm({ info, config, onChange, disabled, prefix }: { info: NodeTypeInfo | undefined; config: unknown; onChange(next: Json | undefined): void; disabled: boolean; prefix: string }) {
  const fields = configFields(info?.configJsonSchema);
  const cfg = isRecord(config) ? config : {};
  const known = new Set(fields.map((f) => f.name));
  const extra = Object.keys(cfg).filter((k) => !known.has(k));
  const templates = info?.templates ?? info?.type !== 'script';
  const set = (key: string, v: unknown): void => {
    const next = withKey(cfg, key, v);
    if (next !== cfg) onChange(Object.keys(next).length === 0 ? undefined : next);
  };
  return (
    <>
      {fields.map((spec) => (
        <ConfigField key={spec.name} spec={spec} prefix={prefix} type={info?.type} config={cfg} onReplace={(next) => next !== cfg && onChange(Object.keys(next).length === 0 ? undefined : next)} value={cfg[spec.name]} templates={templates} disabled={disabled} onChange={(v) => set(spec.name, v)} />
      ))}
      {fields.length === 0 || extra.length > 0 || allowsExtraKeys(info?.configJsonSchema) ? (
        <details className="rn-details" open={fields.length === 0 || extra.length > 0}>
          <summary>All of config as JSON{extra.length > 0 ? ` (also ${extra.join(', ')})` : ''}</summary>
          <JsonField name={`${prefix}-json`} label="config" expectObject disabled={disabled} value={config} onChange={(v) => onChange(isRecord(v) ? v : undefined)} rows={5} />
        </details>
      ) : null}
    </>
  );
}

function NodeProperties({ id }: { id: string }) {
  const store = useDesignerStore();
  // The data, not the node: a drag moves the node every frame, and the form need not follow.
  const data = useDesigner((s) => s.nodes.find((n) => n.id === id)?.data);
  const types = useDesigner((s) => s.types);
  const typeInfo = useDesigner((s) => s.typeInfo);
  const readOnly = useDesigner((s) => s.readOnly);
  if (!data) return null;
  const def = data.def;
  const info = typeInfo.get(def.type);
  const update = (fn: (d: NodeDef) => NodeDef): void => store.getState().updateNode(id, fn);
  const set = (key: string, v: unknown): void => update((d) => withKey(d, key, v));
  const compensate = isRecord(def.compensate) ? def.compensate : undefined;
  const compInfo = compensate && typeof compensate['type'] === 'string' ? typeInfo.get(compensate['type']) : undefined;
  const typeOptions = types.map((t) => ({ value: t.type, label: `${t.title} (${t.type})` }));
  return (
    <>
      <header className="rn-props-head">
        <span className="rn-props-kind">{info?.title ?? def.type}</span>
        <h2>{typeof def.name === 'string' && def.name !== '' ? def.name : id}</h2>
        {info ? <p className="muted rn-small">{info.description}</p> : null}
      </header>
      <section className="rn-props-section">
        <CommitField name="id" label="Id" hint="Renaming updates every edge" value={id} disabled={readOnly} commit={(v) => store.getState().renameNode(id, v)} />
        <TextField name="name" label="Name" value={typeof def.name === 'string' ? def.name : undefined} disabled={readOnly} onChange={(v) => set('name', v)} />
        <SelectField name="type" label="Type" value={def.type} disabled={readOnly} options={typeOptions} onChange={(v) => v !== undefined && set('type', v)} />
        <TextAreaField name="description" label="Description" value={typeof def.description === 'string' ? def.description : undefined} disabled={readOnly} onChange={(v) => set('description', v)} />
      </section>
      <section className="rn-props-section">
        <h3>Config</h3>
        <ConfigForm info={info} config={def.config} prefix="config" disabled={readOnly} onChange={(v) => set('config', v)} />
      </section>
      <section className="rn-props-section">
        <h3>Data</h3>
        <ExpressionField name="input" label="Input (JSONata)" hint="What the step receives; default: a copy of all variables" placeholder="e.g. { 'id': deviceId }" value={def.input} disabled={readOnly} onChange={(v) => set('input', v)} />
        <ExpressionField
          name="output"
          label="Output"
          identifierOk
          hint="A variable name for the result, or JSONata over $result merged into the variables"
          placeholder="e.g. device  or  { 'device': $result.body }"
          value={def.output}
          disabled={readOnly}
          onChange={(v) => set('output', v)}
        />
      </section>
      <section className="rn-props-section">
        <h3>Reliability</h3>
        <RetryFields prefix="retry" value={def.retry} disabled={readOnly} onChange={(k, v) => update((d) => withNested(d, 'retry', k, v))} />
        <div className="rn-grid2">
          <NumberField name="timeoutMs" label="Timeout (ms)" integer min={1} max={2_592_000_000} value={def.timeoutMs} disabled={readOnly} onChange={(v) => set('timeoutMs', v)} />
          <SelectField
            name="join"
            label="Join"
            value={def.join}
            disabled={readOnly}
            onChange={(v) => set('join', v)}
            options={[
              { value: '', label: 'any (default)' },
              { value: 'any', label: 'any' },
              { value: 'all', label: 'all' },
            ]}
          />
        </div>
        <SelectField
          name="onFailure"
          label="When retries run out"
          value={def.onFailure}
          disabled={readOnly}
          onChange={(v) => set('onFailure', v)}
          options={[
            { value: '', label: "the workflow's default" },
            { value: 'fail', label: 'fail the instance' },
            { value: 'suspend', label: 'suspend for a person' },
          ]}
        />
      </section>
      <section className="rn-props-section">
        <h3>Compensation</h3>
        <CheckboxField
          name="compensate"
          label="Undo this step when the instance fails"
          value={compensate !== undefined}
          disabled={readOnly}
          onChange={(on) => set('compensate', on ? { type: def.type } : undefined)}
        />
        {compensate ? (
          <>
            <SelectField
              name="compensate-type"
              label="Compensation type"
              value={typeof compensate['type'] === 'string' ? compensate['type'] : undefined}
              disabled={readOnly}
              options={typeOptions}
              onChange={(v) => v !== undefined && update((d) => withNested(d, 'compensate', 'type', v))}
            />
            <TextField name="compensate-name" label="Name" value={typeof compensate['name'] === 'string' ? compensate['name'] : undefined} disabled={readOnly} onChange={(v) => update((d) => withNested(d, 'compensate', 'name', v))} />
            <ConfigForm info={compInfo} config={compensate['config']} prefix="compensate-config" disabled={readOnly} onChange={(v) => update((d) => withNested(d, 'compensate', 'config', v))} />
            <ExpressionField name="compensate-input" label="Input (JSONata)" value={typeof compensate['input'] === 'string' ? compensate['input'] : undefined} disabled={readOnly} onChange={(v) => update((d) => withNested(d, 'compensate', 'input', v))} />
            <RetryFields
              prefix="compensate-retry"
              value={compensate['retry']}
              disabled={readOnly}
              onChange={(k, v) =>
                update((d) => {
                  const comp = isRecord(d.compensate) ? d.compensate : {};
                  return withKey(d, 'compensate', withNested(comp, 'retry', k, v));
                })
              }
            />
            <NumberField
              name="compensate-timeoutMs"
              label="Timeout (ms)"
              integer
              min={1}
              max={86_400_000}
              value={compensate['timeoutMs']}
              disabled={readOnly}
              onChange={(v) => update((d) => withNested(d, 'compensate', 'timeoutMs', v))}
            />
          </>
        ) : null}
      </section>
    </>
  );
}

function EdgeProperties({ edge }: { edge: FlowEdge }) {
  const store = useDesignerStore();
  const readOnly = useDesigner((s) => s.readOnly);
  const data = edge.data ?? {};
  const update = (key: keyof typeof data, v: unknown): void => store.getState().updateEdge(edge.id, (d) => withKey(d, key, v));
  return (
    <>
      <header className="rn-props-head">
        <span className="rn-props-kind">{data.on === 'error' ? 'Error edge' : 'Edge'}</span>
        <h2>
          {edge.source} → {edge.target}
        </h2>
        <p className="muted rn-small">
          Id <code>{dslEdgeId(edge)}</code>
        </p>
      </header>
      <section className="rn-props-section">
        <SelectField
          name="kind"
          label="Kind"
          value={data.on === 'error' ? 'error' : 'success'}
          disabled={readOnly}
          onChange={(v) => update('on', v === 'error' ? 'error' : undefined)}
          options={[
            { value: 'success', label: 'normal: taken when the step completes' },
            { value: 'error', label: 'error: taken when the step fails after its retries' },
          ]}
        />
        <ExpressionField
          name="when"
          label="When (JSONata)"
          hint={data.on === 'error' ? 'Sees the failure as $error; empty: always' : 'Must yield true or false; empty: always'}
          placeholder="e.g. device.version != targetVersion"
          value={data.when}
          disabled={readOnly}
          onChange={(v) => update('when', v)}
        />
        <TextField name="label" label="Label" value={data.label} disabled={readOnly} onChange={(v) => update('label', v)} />
        <TextField name="edge-id" label="Id (optional)" hint="Default: from->to" value={data.id} disabled={readOnly} onChange={(v) => update('id', v)} />
      </section>
      <section className="rn-props-section">
        <button type="button" className="danger" data-testid="prop-delete-edge" disabled={readOnly} onClick={() => store.getState().deleteSelection()}>
          Delete edge
        </button>
      </section>
    </>
  );
}

/**
 * The workflow's concurrency limit (and key) and its instances' default priority. Clearing the
 * limit drops the key with it: a key alone is no setting.
 */
function FlowControlSection() {
  const store = useDesignerStore();
  const meta = useDesigner((s) => s.meta);
  const readOnly = useDesigner((s) => s.readOnly);
  const update = (fn: (m: WorkflowMeta) => WorkflowMeta): void => store.getState().updateMeta(fn);
  const limit = meta.concurrency?.limit;
  const limitBounds = ConcurrencySchema.shape.limit;
  return (
    <section className="rn-props-section">
      <h3>Flow control</h3>
      <div className="rn-grid2">
        <NumberField
          name="concurrency-limit"
          label="Concurrency limit"
          hint="At most this many in progress at once; empty: no limit"
          integer
          min={limitBounds.minValue ?? 1}
          max={limitBounds.maxValue ?? undefined}
          value={limit}
          disabled={readOnly}
          onChange={(v) => update((m) => withKey(m, 'concurrency', v === undefined ? undefined : { ...m.concurrency, limit: v }))}
        />
        <NumberField
          name="priority"
          label="Priority"
          hint="Higher first when workers claim work; default 0"
          integer
          min={PRIORITY_RANGE.min}
          max={PRIORITY_RANGE.max}
          value={meta.priority}
          disabled={readOnly}
          onChange={(v) => update((m) => withKey(m, 'priority', v))}
        />
      </div>
      <ExpressionField
        name="concurrency-key"
        label="Concurrency key (JSONata)"
        hint={limit === undefined ? 'Set a limit first' : 'A limit per value of this, over the start variables; empty: one limit'}
        placeholder="e.g. tenant"
        identifierOk
        value={meta.concurrency?.key}
        disabled={readOnly || limit === undefined}
        onChange={(v) => update((m) => (m.concurrency === undefined ? m : withKey(m, 'concurrency', withKey(m.concurrency, 'key', v))))}
      />
    </section>
  );
}

/** A schedule as the designer edits it: the DSL's fields, any of them possibly missing while typed. */
type ScheduleDraft = Record<string, unknown> & { id?: string; cron?: string; timezone?: string };

/** `t` as `YYYY-MM-DD hh:mm:ss ZONE` in time zone `tz` (default UTC). */
function zoned(t: number, tz: string | undefined): string {
  return new Intl.DateTimeFormat('sv-SE', { timeZone: tz ?? 'UTC', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', timeZoneName: 'short' }).format(t);
}

/** The next five due times of a schedule as text, or undefined when its cron or zone does not parse. */
function upcoming(s: ScheduleDraft): string[] | undefined {
  if (typeof s.cron !== 'string' || cronProblem(s.cron, s.timezone) !== undefined) return undefined;
  return parseCron(s.cron, s.timezone).next(5, Date.now()).map((t) => zoned(t, s.timezone));
}

/**
 * The workflow's schedules (cron starts): per schedule its id, cron expression (a problem shown at
 * the field, else the next five due times in its zone), time zone, overlap, catch-up and whether
 * it is deployed paused. Test ids `prop-schedule-<i>-<field>`, `schedule-<i>-upcoming`.
 */
function SchedulesSection() {
  const store = useDesignerStore();
  const meta = useDesigner((s) => s.meta);
  const readOnly = useDesigner((s) => s.readOnly);
  const list: ScheduleDraft[] = Array.isArray(meta.schedules) ? (meta.schedules as ScheduleDraft[]) : [];
  const write = (next: ScheduleDraft[]): void => store.getState().updateMeta((m) => withKey(m, 'schedules', next.length === 0 ? undefined : next));
  const setAt = (i: number, key: string, v: unknown): void => write(list.map((s, j) => (j === i ? withKey(s, key, v) : s)));
  const add = (): void => {
    const ids = new Set(list.map((s) => s.id));
    let n = list.length + 1;
    while (ids.has(`schedule-${n}`)) n++;
    write([...list, { id: `schedule-${n}`, cron: '0 * * * *' }]);
  };
  return (
    <section className="rn-props-section" data-testid="schedules-section">
      <h3>Schedules</h3>
      {list.length === 0 ? <p className="muted rn-small">No schedule: instances start only when someone starts them.</p> : null}
      {list.map((s, i) => {
        const next = upcoming(s);
        return (
          <div key={i} className="rn-schedule" data-testid={`schedule-${i}`}>
            <div className="rn-grid2">
              <TextField name={`schedule-${i}-id`} label="Id" required value={s.id} disabled={readOnly} onChange={(v) => setAt(i, 'id', v)} />
              <TextField
                name={`schedule-${i}-timezone`}
                label="Time zone"
                placeholder="UTC"
                value={s.timezone}
                disabled={readOnly}
                check={(v) => (typeof s.cron === 'string' && cronProblem(s.cron, v)?.startsWith('unknown time zone') ? cronProblem(s.cron, v) : undefined)}
                onChange={(v) => setAt(i, 'timezone', v)}
              />
            </div>
            <TextField
              name={`schedule-${i}-cron`}
              label="Cron (5 fields, or 6 with seconds first)"
              required
              placeholder="30 2 * * *"
              value={s.cron}
              disabled={readOnly}
              check={(v) => {
                const why = cronProblem(v, s.timezone);
                return why?.startsWith('unknown time zone') ? undefined : why;
              }}
              onChange={(v) => setAt(i, 'cron', v)}
            />
            {next ? (
              <ol className="rn-small muted" data-testid={`schedule-${i}-upcoming`} aria-label="Next due times">
                {next.map((t) => (
                  <li key={t}>{t}</li>
                ))}
              </ol>
            ) : null}
            <div className="rn-grid2">
              <SelectField
                name={`schedule-${i}-overlap`}
                label="While the last one runs"
                value={typeof s.overlap === 'string' ? s.overlap : undefined}
                disabled={readOnly}
                onChange={(v) => setAt(i, 'overlap', v)}
                options={[
                  { value: '', label: 'skip (default)' },
                  { value: 'allow', label: 'allow' },
                  { value: 'cancel-previous', label: 'cancel previous' },
                ]}
              />
              <SelectField
                name={`schedule-${i}-catchUp`}
                label="Missed times"
                value={typeof s.catchUp === 'string' ? s.catchUp : undefined}
                disabled={readOnly}
                onChange={(v) => setAt(i, 'catchUp', v)}
                options={[
                  { value: '', label: 'none (default)' },
                  { value: 'latest', label: 'latest' },
                  { value: 'all', label: 'all (at most 100)' },
                ]}
              />
            </div>
            <div className="rn-inline">
              <CheckboxField name={`schedule-${i}-paused`} label="Deploy paused" value={s.paused === true} disabled={readOnly} onChange={(v) => setAt(i, 'paused', v ? true : undefined)} />
              <button type="button" className="danger" data-testid={`schedule-${i}-remove`} disabled={readOnly} onClick={() => write(list.filter((_, j) => j !== i))}>
                Remove
              </button>
            </div>
          </div>
        );
      })}
      <button type="button" data-testid="schedule-add" disabled={readOnly} onClick={add}>
        Add schedule
      </button>
    </section>
  );
}

function WorkflowProperties({ onRename }: { onRename(): void }) {
  const store = useDesignerStore();
  const meta = useDesigner((s) => s.meta);
  const saved = useDesigner((s) => s.source !== undefined);
  const readOnly = useDesigner((s) => s.readOnly);
  const nodeCount = useDesigner((s) => s.nodes.length);
  const update = (fn: (m: WorkflowMeta) => WorkflowMeta): void => store.getState().updateMeta(fn);
  const set = (key: string, v: unknown): void => update((m) => withKey(m, key, v));
  return (
    <>
      <header className="rn-props-head">
        <span className="rn-props-kind">Workflow</span>
        <h2>{meta.name}</h2>
        <p className="muted rn-small">{nodeCount === 0 ? 'Drag a node type from the palette to start.' : 'Select a node or an edge to edit it.'}</p>
      </header>
      <section className="rn-props-section">
        {saved ? (
          <div className="rn-field">
            <span className="rn-field-label">Name</span>
            <div className="rn-inline">
              <input id="prop-workflow-name" data-testid="prop-workflow-name" type="text" value={meta.name} readOnly />
              <button type="button" data-testid="prop-rename-workflow" disabled={readOnly} onClick={onRename}>
                Rename…
              </button>
            </div>
          </div>
        ) : (
          <TextField name="workflow-name" label="Name" required value={meta.name} disabled={readOnly} onChange={(v) => set('name', v ?? '')} />
        )}
        <TextAreaField name="workflow-description" label="Description" rows={3} value={typeof meta.description === 'string' ? meta.description : undefined} disabled={readOnly} onChange={(v) => set('description', v)} />
        <div className="rn-grid2">
          <NumberField name="deadlineMs" label="Deadline (ms)" integer min={1} max={31_536_000_000} value={meta.deadlineMs} disabled={readOnly} onChange={(v) => set('deadlineMs', v)} />
          <SelectField
            name="workflow-onFailure"
            label="When a step fails"
            value={meta.onFailure}
            disabled={readOnly}
            onChange={(v) => set('onFailure', v)}
            options={[
              { value: '', label: 'fail (default)' },
              { value: 'fail', label: 'fail' },
              { value: 'suspend', label: 'suspend' },
            ]}
          />
        </div>
      </section>
      <FlowControlSection />
      <SchedulesSection />
      <section className="rn-props-section">
        <h3>Default retry of every step</h3>
        <RetryFields prefix="workflow-retry" value={meta.retry} disabled={readOnly} onChange={(k, v) => update((m) => withNested(m, 'retry', k, v))} />
      </section>
      <section className="rn-props-section">
        <h3>Input variables</h3>
        <InputSchemaEditor schema={meta.inputSchema} disabled={readOnly} onChange={(v) => set('inputSchema', v)} />
      </section>
    </>
  );
}

/** Width of the properties drawer, px (the canvas fits and centres in what it leaves). */
export const PANEL_WIDTH = 320;

/**
 * The properties drawer over the canvas's right side: shown while something is selected, or
 * when the workflow's settings are asked for (`showWorkflow`).
 */
export function PropertiesPanel({ onRename, onClose, showWorkflow }: { onRename(): void; onClose(): void; showWorkflow: boolean }) {
  const store = useDesignerStore();
  const selected = useDesigner(useShallow((s) => s.nodes.filter((n) => n.selected).map((n) => n.id)));
  const selectedEdges = useDesigner(useShallow((s) => s.edges.filter((e) => e.selected)));
  const readOnly = useDesigner((s) => s.readOnly);
  const onlyNode = selected.length === 1 && selectedEdges.length === 0 ? selected[0] : undefined;
  const onlyEdge = selected.length === 0 && selectedEdges.length === 1 ? selectedEdges[0] : undefined;
  const many = selected.length + selectedEdges.length > 1;
  const { editStart, editEnd } = store.getState();
  // Whatever the panel shows next, an edit session open for this one ends with it.
  useEffect(() => editEnd, [editEnd, onlyNode, onlyEdge?.id, many]);
  if (onlyNode === undefined && onlyEdge === undefined && !many && !showWorkflow) return null;
  return (
    <aside className="rn-props" data-testid="properties-panel" aria-label="Properties" onFocus={editStart} onBlur={editEnd} data-selection={onlyNode !== undefined ? 'node' : onlyEdge !== undefined ? 'edge' : many ? 'many' : 'workflow'} data-node={onlyNode}>
      <button type="button" className="rn-props-close" aria-label="Close the properties" title="Close (clears the selection)" data-testid="close-properties" onClick={onClose}>
        ×
      </button>
      {onlyNode !== undefined ? <NodeProperties key={onlyNode} id={onlyNode} /> : null}
      {onlyEdge !== undefined ? <EdgeProperties key={onlyEdge.id} edge={onlyEdge} /> : null}
      {many ? (
        <>
          <header className="rn-props-head">
            <span className="rn-props-kind">Selection</span>
            <h2>
              {selected.length} node{selected.length === 1 ? '' : 's'}, {selectedEdges.length} edge{selectedEdges.length === 1 ? '' : 's'}
            </h2>
          </header>
          <section className="rn-props-section rn-inline">
            <button type="button" data-testid="prop-duplicate-selection" disabled={readOnly || selected.length === 0} onClick={() => store.getState().duplicateSelection()}>
              Duplicate
            </button>
            <button type="button" className="danger" data-testid="prop-delete-selection" disabled={readOnly} onClick={() => store.getState().deleteSelection()}>
              Delete
            </button>
          </section>
        </>
      ) : null}
      {onlyNode === undefined && onlyEdge === undefined && !many ? <WorkflowProperties onRename={onRename} /> : null}
    </aside>
  );
}
