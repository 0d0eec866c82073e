/**
 * The list's filters: workflow, version, created time range (presets or from/to), text (id,
 * business key, error), what it waits for, current node; and the per-status counts above the
 * table, which are also the status filter (click to toggle).
 *
 * Test ids: `filter-workflow`, `filter-version`, `filter-range-<15m|1h|24h|7d|any>`,
 * `filter-from`, `filter-to`, `filter-text`, `filter-waiting`, `filter-node`, `filter-clear`,
 * `filter-parent` (the parent filter's chip, shown while set; `data-parent`), `filter-parent-open`,
 * `filter-parent-clear`,
 * `status-chips`, `status-chip-all`, `status-chip-<STATUS>` (with `data-count`, `aria-pressed`),
 * `filter-paused` (the Paused chip beside them, `aria-pressed`; kept in the address as `?paused`),
 * `filter-test` (only test runs), `delete-test-runs`, `test-runs-deleted`.
 */
import { useEffect, useState } from 'react';
import {
  INSTANCE_STATUS_VALUES,
  WAITING_FOR_VALUES,
  type InstanceStatusValue,
  type WaitingForValue,
} from '../../../engine/api/contract';
import { useStores, useWorkflows } from '../hooks';
import { formatRoute } from '../routes';
import { EMPTY_FILTER, isFiltered } from '../stores/monitor-list-store';
import { formatCount } from './format';
import { useList, useStatusCounts } from './hooks';

const RANGES: { key: string; label: string; ms: number | undefined }[] = [
  { key: '15m', label: '15 min', ms: 15 * 60_000 },
  { key: '1h', label: '1 h', ms: 3_600_000 },
  { key: '24h', label: '24 h', ms: 86_400_000 },
  { key: '7d', label: '7 d', ms: 7 * 86_400_000 },
  { key: 'any', label: 'any time', ms: undefined },
];

const WAITING_LABELS: Record<WaitingForValue, string> = {
  timer: 'a timer',
  approval: 'an approval',
  retry: 'a retry',
  person: 'a person (suspended)',
  event: 'an event',
  children: 'child instances',
  concurrency: 'a concurrency slot',
};

/** `datetime-local` value of an epoch-ms time (local), or ''. */
function toLocalInput(ms: number | undefined): string {
  if (ms === undefined) return '';
  const d = new Date(ms - new Date(ms).getTimezoneOffset() * 60_000);
  return d.toISOString().slice(0, 16);
}

/** Epoch ms of a `datetime-local` value, or undefined. */
function fromLocalInput(value: string): number | undefined {
  if (value === '') return undefined;
  const t = new Date(value).getTime();
  return Number.isFinite(t) ? t : undefined;
}

/** A text input that reports its value after the person stops typing. */
function DebouncedInput({
  value,
  onChange,
  testId,
  placeholder,
  delayMs = 300,
}: {
  value: string;
  onChange: (v: string) => void;
  testId: string;
  placeholder: string;
  delayMs?: number;
}) {
  const [text, setText] = useState(value);
  useEffect(() => setText(value), [value]);
  useEffect(() => {
    if (text === value) return;
    const t = setTimeout(() => onChange(text), delayMs);
    return () => clearTimeout(t);
  }, [text, value, onChange, delayMs]);
  return (
    <input
      type="search"
      data-testid={testId}
      value={text}
      placeholder={placeholder}
      onChange={(e) => setText(e.target.value)}
      onKeyDown={(e) => e.key === 'Enter' && onChange(text)}
    />
  );
}

/** The filter row. */
export function FilterBar() {
  const filter = useList((s) => s.filter);
  const setFilter = useList((s) => s.setFilter);
  const replaceFilter = useList((s) => s.replaceFilter);
  const open = useList((s) => s.open);
  const workflows = useWorkflows((s) => s.items);
  const latest = workflows.find((w) => w.name === filter.workflow)?.latestVersion ?? 0;
  const [range, setRange] = useState('any');
  return (
    <div className="filter-bar" role="search" aria-label="Filter instances">
      <label className="inline-field">
        workflow
        <select
          data-testid="filter-workflow"
          value={filter.workflow ?? ''}
          title={filter.workflow ?? 'every workflow'}
          onChange={(e) =>
            setFilter({ workflow: e.target.value || undefined, version: undefined, node: undefined })
          }
        >
          <option value="">all</option>
          {workflows.map((w) => (
            <option key={w.name} value={w.name}>
              {w.name}
            </option>
          ))}
        </select>
      </label>
      <label className="inline-field">
        version
        <select
          data-testid="filter-version"
          value={filter.version ?? ''}
          disabled={filter.workflow === undefined}
          onChange={(e) => setFilter({ version: e.target.value === '' ? undefined : Number(e.target.value) })}
        >
          <option value="">all</option>
          {Array.from({ length: latest }, (_, i) => latest - i).map((v) => (
            <option key={v} value={v}>
              v{v}
            </option>
          ))}
        </select>
      </label>
      <div className="inline-field range-field" role="group" aria-label="Created">
        <span className="range-label">created</span>
        {RANGES.map((r) => (
          <button
            key={r.key}
            type="button"
            className={range === r.key ? 'seg active' : 'seg'}
            data-testid={`filter-range-${r.key}`}
            aria-pressed={range === r.key}
            onClick={() => {
              setRange(r.key);
              setFilter({
                createdFrom: r.ms === undefined ? undefined : Date.now() - r.ms,
                createdTo: undefined,
              });
            }}
          >
            {r.label}
          </button>
        ))}
        <input
          type="datetime-local"
          data-testid="filter-from"
          aria-label="Created from"
          value={toLocalInput(filter.createdFrom)}
          onChange={(e) => {
            setRange('custom');
            setFilter({ createdFrom: fromLocalInput(e.target.value) });
          }}
        />
        –
        <input
          type="datetime-local"
          data-testid="filter-to"
          aria-label="Created to"
          value={toLocalInput(filter.createdTo)}
          onChange={(e) => {
            setRange('custom');
            const t = fromLocalInput(e.target.value);
            setFilter({ createdTo: t === undefined ? undefined : t + 59_999 });
          }}
        />
      </div>
      <label className="inline-field grow">
        search
        <DebouncedInput
          testId="filter-text"
          value={filter.text ?? ''}
          placeholder="id, business key or error text"
          onChange={(text) => setFilter({ text: text || undefined })}
        />
      </label>
      <label className="inline-field">
        waiting for
        <select
          data-testid="filter-waiting"
          value={filter.waitingFor ?? ''}
          onChange={(e) =>
            setFilter({ waitingFor: (e.target.value || undefined) as WaitingForValue | undefined })
          }
        >
          <option value="">anything</option>
          {WAITING_FOR_VALUES.map((w) => (
            <option key={w} value={w}>
              {WAITING_LABELS[w]}
            </option>
          ))}
        </select>
      </label>
      <label className="inline-field">
        at node
        <DebouncedInput
          testId="filter-node"
          value={filter.node ?? ''}
          placeholder="node id"
          onChange={(node) => setFilter({ node: node || undefined })}
        />
      </label>
      {filter.parentId !== undefined ? (
        <span className="chip active parent-chip" data-testid="filter-parent" data-parent={filter.parentId}>
          children of{' '}
          <a
            href={formatRoute({ view: 'instances', instance: filter.parentId, parent: filter.parentId })}
            data-testid="filter-parent-open"
            title="Open the parent instance"
            onClick={(e) => {
              e.preventDefault();
              if (filter.parentId !== undefined) open(filter.parentId);
            }}
          >
            #{filter.parentId}
          </a>
          <button
            type="button"
            className="chip-x"
            aria-label="Show every instance, not only these children"
            data-testid="filter-parent-clear"
            onClick={() => setFilter({ parentId: undefined })}
          >
            ×
          </button>
        </span>
      ) : null}
      <button
        type="button"
        data-testid="filter-clear"
        disabled={!isFiltered(filter)}
        onClick={() => {
          setRange('any');
          replaceFilter(EMPTY_FILTER);
        }}
      >
        Clear
      </button>
    </div>
  );
}

/**
 * Per-status counts under the filter; clicking a chip toggles that status in the filter. Beside
 * them, the Paused chip: only paused instances (pausing keeps the status, so it is no status chip).
 *
 * Where the line has no room for every word (below 1400 px of it: a 1440 px window with the
 * sidebar), a status chip not selected draws its coloured dot and count only: its word stays in
 * its accessible name (visually hidden, not removed) and in its title, so the chips and the bulk
 * actions keep one line and the table those rows.
 */
export function StatusChips() {
  const counts = useStatusCounts();
  const selected = useList((s) => s.filter.status);
  const paused = useList((s) => s.filter.paused === true);
  const test = useList((s) => s.filter.test === true);
  const setFilter = useList((s) => s.setFilter);
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  const toggle = (status: InstanceStatusValue): void =>
    setFilter({
      status: selected.includes(status) ? selected.filter((s) => s !== status) : [...selected, status],
    });
  return (
    <div className="status-chips" data-testid="status-chips" role="group" aria-label="Status">
      <button
        type="button"
        className={selected.length === 0 ? 'chip active' : 'chip'}
        data-testid="status-chip-all"
        data-count={total}
        aria-pressed={selected.length === 0}
        onClick={() => setFilter({ status: [] })}
      >
        All <span className="chip-count">{formatCount(total)}</span>
      </button>
      {INSTANCE_STATUS_VALUES.map((status) => (
        <button
          key={status}
          type="button"
          className={`chip chip-${status.toLowerCase()}${selected.includes(status) ? ' active' : ''}${(counts[status] ?? 0) === 0 ? ' zero' : ''}`}
          data-testid={`status-chip-${status}`}
          data-count={counts[status] ?? 0}
          aria-pressed={selected.includes(status)}
          title={`${status.toLowerCase()}: ${formatCount(counts[status] ?? 0)}`}
          onClick={() => toggle(status)}
        >
          <span className={`dot dot-${status.toLowerCase()}`} aria-hidden="true" />
          <span className="chip-word">{status.toLowerCase()}</span>{' '}
          <span className="chip-count">{formatCount(counts[status] ?? 0)}</span>
        </button>
      ))}
      <button
        type="button"
        className={paused ? 'chip chip-paused active' : 'chip chip-paused'}
        data-testid="filter-paused"
        aria-pressed={paused}
        title="Only paused instances (they start no node until unpaused)"
        onClick={() => setFilter({ paused: paused ? undefined : true })}
      >
        {/* two bars drawn, not the ⏸ character: fonts without it (Debian's default) showed a box */}
        <svg className="chip-icon" width="10" height="10" viewBox="0 0 10 10" aria-hidden="true">
          <rect x="1.5" y="1" width="2.5" height="8" rx="0.5" fill="currentColor" />
          <rect x="6" y="1" width="2.5" height="8" rx="0.5" fill="currentColor" />
        </svg>{' '}
        paused
      </button>
      <button
        type="button"
        className={test ? 'chip chip-test active' : 'chip chip-test'}
        data-testid="filter-test"
        aria-pressed={test}
        title="Only test runs (started with Test run or runnel run --test: left out of the list and the metrics otherwise)"
        onClick={() => setFilter({ test: test ? undefined : true })}
      >
        test runs
      </button>
      {test ? <DeleteTestRuns /> : null}
    </div>
  );
}

/** Deletes every ended test run in one click, and says what it did (`delete-test-runs`, `test-runs-deleted`). */
function DeleteTestRuns() {
  const { api } = useStores();
  const load = useList((s) => s.load);
  const [busy, setBusy] = useState(false);
  const [said, setSaid] = useState<string | undefined>(undefined);
  const run = async (): Promise<void> => {
    setBusy(true);
    const r = await api.invoke('instance:deleteTestRuns', {});
    setBusy(false);
    if (!r.ok) {
      setSaid(`${r.error.code}: ${r.error.message}`);
      return;
    }
    const { runs, live } = r.value;
    setSaid(
      `Deleted ${runs} test run${runs === 1 ? '' : 's'}${live > 0 ? `; ${live} still live (cancel ${live === 1 ? 'it' : 'them'} first)` : ''}`,
    );
    await load();
  };
  return (
    <>
      <button
        type="button"
        className="chip danger"
        data-testid="delete-test-runs"
        disabled={busy}
        title="Delete every ended test run with everything it owns"
        onClick={() => void run()}
      >
        Delete ended test runs
      </button>
      {said !== undefined ? (
        <span className="muted small" role="status" data-testid="test-runs-deleted">
          {said}
        </span>
      ) : null}
    </>
  );
}
