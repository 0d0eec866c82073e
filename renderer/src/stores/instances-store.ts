/**
 * The Instances view's data: the newest instances (`instance:list`), kept live from the event
 * stream, and starting new ones (`instance:start`).
 *
 * Events patch rows in place (status), so the table changes without a reload; a new instance
 * appears at once as a placeholder row, and a throttled reload then fills in its details. Statuses
 * that arrive by event while a reload is in flight are re-applied over its result, so a reload
 * never shows an older status than the screen already had.
 *
 * A store creator apart from hooks: tests pass a fake `invoke` and feed batches by hand.
 */
import { createStore, type StoreApi } from 'zustand/vanilla';
import type { EventBatch, InstanceState, InstanceSummary } from '../../../engine/api/contract';
import type { ApiClient } from '../api/client';
import type { LoadStatus } from './workflows-store';

/** State and actions of the instances store. */
export interface InstancesState {
  /** Newest first. */
  items: InstanceSummary[];
  status: LoadStatus;
  /**
   * Per-status counts of all instances (from `instance:list`), reloaded (throttled) on every
   * instance event: the one source of the status bar, the status chips of an unnarrowed list and
   * the Dashboard's tiles.
   */
  counts: Record<string, number>;
  /** (Re)loads the newest instances. */
  load(): Promise<void>;
  /** Starts an instance of `workflow`; undefined when the call failed (already a toast). */
  start(workflow: string, variables?: Record<string, unknown>): Promise<InstanceState | undefined>;
  /** Applies an event batch: statuses in place, new rows as placeholders, then a reload. */
  applyBatch(batch: EventBatch): void;
}

/** Options of {@link createInstancesStore}. */
export interface InstancesStoreOptions {
  /** Rows shown (default 100). */
  pageSize?: number;
  /** Delay of the reload that follows new or finished instances, ms (default 300). */
  refreshDelayMs?: number;
  /** Clock for placeholder rows (tests pin it). */
  now?: () => number;
}

/** An instances store over `api`. */
export function createInstancesStore(api: Pick<ApiClient, 'invoke'>, options: InstancesStoreOptions = {}): StoreApi<InstancesState> {
  const pageSize = options.pageSize ?? 100;
  const now = options.now ?? (() => Date.now());
  let refreshTimer: ReturnType<typeof setTimeout> | undefined;
  let loadSeq = 0;
  /** Statuses received by event since the current load began: re-applied over its result. */
  let sinceLoad = new Map<number, string>();

  const patch = (items: InstanceSummary[], statuses: ReadonlyMap<number, string>): InstanceSummary[] =>
    statuses.size === 0 ? items : items.map((row) => (statuses.has(row.id) && statuses.get(row.id) !== row.status ? { ...row, status: statuses.get(row.id) ?? row.status } : row));

  return createStore<InstancesState>()((set, get) => {
    const scheduleRefresh = (): void => {
      if (refreshTimer !== undefined) return;
      refreshTimer = setTimeout(() => {
        refreshTimer = undefined;
        void get().load();
      }, options.refreshDelayMs ?? 300);
    };
    return {
      items: [],
      status: 'idle',
      counts: {},
      async load() {
        const seq = ++loadSeq;
        sinceLoad = new Map();
        set((s) => ({ status: s.items.length === 0 ? 'loading' : s.status }));
        const r = await api.invoke('instance:list', { limit: pageSize });
        if (seq !== loadSeq) return;
        if (!r.ok) {
          set({ status: 'error' });
          return;
        }
        set({ items: patch(r.value.items, sinceLoad), counts: r.value.counts ?? {}, status: 'ready' });
      },
      async start(workflow, variables) {
        const r = await api.invoke('instance:start', variables === undefined ? { workflow } : { workflow, variables });
        if (!r.ok) return undefined;
        const state = r.value;
        // The created event may come before or after this answer: add the row if it is missing.
        if (!get().items.some((row) => row.id === state.id)) {
          set((s) => ({ items: [placeholder(state.id, workflow, 0, state.status, now()), ...s.items].slice(0, pageSize) }));
        }
        scheduleRefresh();
        return state;
      },
      applyBatch(batch) {
        const statuses = new Map<number, string>();
        const created: InstanceSummary[] = [];
        let refresh = false;
        for (const e of batch.events) {
          switch (e.type) {
            case 'instance.created':
              created.push(placeholder(e.instanceId, e.workflow, e.version, 'PENDING', now()));
              refresh = true;
              break;
            case 'instance.changed':
              // A status change moves the counts too (WAITING → SUSPENDED): they are the app's
              // one source of per-status counts (status bar, chips, Dashboard).
              statuses.set(e.instanceId, e.status);
              refresh = true;
              break;
            case 'instance.finished':
              statuses.set(e.instanceId, e.status);
              refresh = true;
              break;
            case 'store.changed':
              // Another process changed the file: reload rows and counts.
              refresh = true;
              break;
            default:
              break;
          }
        }
        for (const [id, status] of statuses) sinceLoad.set(id, status);
        if (statuses.size > 0 || created.length > 0) {
          set((s) => {
            const known = new Set(s.items.map((row) => row.id));
            const fresh = created.filter((row) => !known.has(row.id)).map((row) => (statuses.has(row.id) ? { ...row, status: statuses.get(row.id) ?? row.status } : row));
            const items = [...fresh.reverse(), ...patch(s.items, statuses)].sort((a, b) => b.id - a.id).slice(0, pageSize);
            return { items };
          });
        }
        if (refresh) scheduleRefresh();
      },
    };
  });
}

/** A row for an instance known only from an event, until the next reload fills it in. */
function placeholder(id: number, workflow: string, version: number, status: string, createdAt: number): InstanceSummary {
  return { id, workflow, workflowVersion: version, status, businessKey: null, createdAt, startedAt: null, endedAt: null, version: 0 };
}
