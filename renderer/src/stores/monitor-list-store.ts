/**
 * The monitor's instance list: the filter, the rows loaded so far (server-side keyset pages), the
 * per-status counts under the filter, and the live updates.
 *
 * Live updates are coalesced: events only mark instances as changed (or say that some were
 * created); at most once per `liveIntervalMs` one flush fetches the changed rows that are loaded
 * (by id) and the rows newer than the newest loaded (with fresh counts), and applies both in one
 * state change. A busy engine therefore costs at most two small queries and one render per
 * interval, whatever the event rate.
 *
 * A store creator apart from hooks: tests pass a fake `invoke` and feed batches by hand.
 */
import { createStore, type StoreApi } from 'zustand/vanilla';
import type {
  BulkResult,
  EventBatch,
  Input,
  InstanceListItem,
  InstanceState,
  InstanceStatusValue,
  Result,
  WaitingForValue,
} from '../../../engine/api/contract';
import type { ApiClient } from '../api/client';
import { DEFAULT_SORT, sortedByEngine, type ListSort } from '../monitor/sort';
import type { InstanceTab } from '../routes';
import type { LoadStatus } from './workflows-store';

/** The list's filter (every field narrows; `status: []` means every status). Times are epoch ms. */
export interface MonitorFilter {
  status: InstanceStatusValue[];
  workflow?: string;
  version?: number;
  createdFrom?: number;
  createdTo?: number;
  /** Id, business key, error or suspension text. */
  text?: string;
  waitingFor?: WaitingForValue;
  /** A current node id. */
  node?: string;
  /** Only the child instances of this instance (its `subworkflow` and `map` nodes'). */
  parentId?: number;
  /** Only paused instances (true); absent: paused or not. */
  paused?: boolean;
  /** Only test runs (true); absent: real runs only (as the API lists them). */
  test?: boolean;
}

/** About the table's row height, px: which loaded rows are near the scroll position. */
const ROW_HEIGHT_ESTIMATE = 34;

/** The empty filter. */
export const EMPTY_FILTER: MonitorFilter = { status: [] };

/** What starting an instance needs. */
export interface StartRequest {
  workflow: string;
  version?: number;
  variables?: Record<string, unknown>;
  businessKey?: string;
  /** Higher first when workers claim work (an integer); absent: the workflow's, else 0. */
  priority?: number;
}

/** State and actions of the list store. */
export interface InstanceListState {
  filter: MonitorFilter;
  /**
   * The table's sort. By id (or start time) the engine orders and pages (newest or oldest first);
   * by any other column the table sorts the loaded rows (monitor/sort.ts).
   */
  sort: ListSort;
  /** Loaded rows in the engine's order: newest first, or oldest first when sorted by id ascending. */
  items: InstanceListItem[];
  /** Per-status counts of instances matching the filter but its statuses. */
  counts: Record<string, number>;
  /**
   * Keyset cursor of the next page (the last loaded id: `beforeId` newest first, `afterId` oldest
   * first); null when every matching row is loaded.
   */
  nextBeforeId: number | null;
  status: LoadStatus;
  loadingMore: boolean;
  /** How long the last first-page load took, ms (round trip). */
  lastLoadMs: number | null;
  /** First-page loads completed (a view or test can tell a fresh load from an old one). */
  loads: number;
  /** State changes made by live flushes (tests check the coalescing). */
  liveFlushes: number;
  /** The instance whose detail is open. */
  openId: number | undefined;
  /** The tab shown in the open instance's detail. */
  tab: InstanceTab;
  /** The table's scroll position, kept while a detail is open. */
  scrollTop: number;
  /**
   * Whether the start panel is expanded: undefined until the first load decides (expanded only
   * when there is no instance at all, collapsed otherwise, to leave the room to the table); then
   * what the user last chose, kept while the view comes and goes.
   */
  startOpen: boolean | undefined;
  /** Expands or collapses the start panel. */
  setStartOpen(open: boolean): void;
  /** Changes the filter (merged) and reloads. */
  setFilter(patch: Partial<MonitorFilter>): void;
  /** Sorts the table; reloads when the engine's order changes (id ascending ↔ descending). */
  setSort(sort: ListSort): void;
  /** Replaces the whole filter and reloads. */
  replaceFilter(filter: MonitorFilter): void;
  /** Loads the first page (and counts) under the filter. */
  load(): Promise<void>;
  /** Loads the next page, if any. */
  loadMore(): Promise<void>;
  /** Starts an instance (as the actor); a refusal comes back as data (the start panel shows it, not a toast). */
  start(request: StartRequest): Promise<Result<InstanceState>>;
  /** Counts (`dryRun`) or runs a bulk action over the current filter. */
  bulk(
    action: 'cancel' | 'retry' | 'pause' | 'unpause',
    options: { dryRun: boolean; compensate?: boolean; upToId?: number },
  ): Promise<BulkResult | undefined>;
  /** Notes the instances an event batch touched; a flush follows within `liveIntervalMs`. */
  applyBatch(batch: EventBatch): void;
  /** Applies what is pending now (tests; the timer calls it otherwise). */
  flushLive(): Promise<void>;
  /** Opens instance `id`'s detail on `tab` (default the timeline); undefined closes it. */
  open(id: number | undefined, tab?: InstanceTab): void;
  /** Shows another tab of the open instance. */
  setTab(tab: InstanceTab): void;
  setScrollTop(top: number): void;
}

/** Options of {@link createInstanceListStore}. */
export interface InstanceListStoreOptions {
  /** Rows per page (default 200). */
  pageSize?: number;
  /** Least ms between two live flushes (default 400: at most a few renders a second). */
  liveIntervalMs?: number;
  /** The actor sent with actions (default "you"). */
  actor?: () => string;
  /** Time source for load timings (default performance.now). */
  now?: () => number;
  /** Takes back the toast of a refusal the caller shows itself (the UI store's `claimToast`). */
  claimError?: (channel: string) => void;
}

/** The request fields of a filter (empty ones left out). */
export function filterRequest(
  filter: MonitorFilter,
): Omit<Input<'instance:list'> & object, 'limit' | 'withCounts' | 'beforeId' | 'afterId' | 'ids'> {
  const out: Record<string, unknown> = {};
  if (filter.status.length > 0) out.status = [...filter.status];
  if (filter.workflow) out.workflow = filter.workflow;
  if (filter.version !== undefined) out.version = filter.version;
  if (filter.createdFrom !== undefined) out.createdFrom = filter.createdFrom;
  if (filter.createdTo !== undefined) out.createdTo = filter.createdTo;
  if (filter.text !== undefined && filter.text.trim() !== '') out.text = filter.text.trim();
  if (filter.waitingFor !== undefined) out.waitingFor = filter.waitingFor;
  if (filter.node !== undefined && filter.node !== '') out.node = filter.node;
  if (filter.parentId !== undefined) out.parentId = filter.parentId;
  if (filter.paused !== undefined) out.paused = filter.paused;
  if (filter.test === true) out.test = true;
  return out;
}

/** Whether a filter narrows anything. */
export function isFiltered(filter: MonitorFilter): boolean {
  return Object.keys(filterRequest(filter)).length > 0;
}

/** Whether `sort` pages the engine's rows oldest first. */
function ascending(sort: ListSort): boolean {
  return sortedByEngine(sort.column) && sort.direction === 'ascending';
}

/** A list store over `api`. */
export function createInstanceListStore(
  api: Pick<ApiClient, 'invoke'>,
  options: InstanceListStoreOptions = {},
): StoreApi<InstanceListState> {
  const pageSize = options.pageSize ?? 200;
  const liveIntervalMs = options.liveIntervalMs ?? 400;
  const actor = options.actor ?? (() => 'you');
  const clock = options.now ?? (() => (typeof performance === 'undefined' ? Date.now() : performance.now()));
  let loadSeq = 0;
  let pendingIds = new Set<number>();
  let pendingCreated = false;
  let liveTimer: ReturnType<typeof setTimeout> | undefined;
  let lastFlushAt = Number.NEGATIVE_INFINITY;
  let flushing: Promise<void> | undefined;

  return createStore<InstanceListState>()((set, get) => {
    const scheduleFlush = (): void => {
      if (liveTimer !== undefined) return;
      const wait = Math.max(0, Math.min(liveIntervalMs, lastFlushAt + liveIntervalMs - Date.now()));
      liveTimer = setTimeout(() => {
        liveTimer = undefined;
        void get().flushLive();
      }, wait);
    };

    return {
      filter: EMPTY_FILTER,
      sort: DEFAULT_SORT,
      items: [],
      counts: {},
      nextBeforeId: null,
      status: 'idle',
      loadingMore: false,
      lastLoadMs: null,
      loads: 0,
      liveFlushes: 0,
      openId: undefined,
      tab: 'timeline',
      scrollTop: 0,
      startOpen: undefined,

      setStartOpen: (open) => set({ startOpen: open }),

      setFilter(patch) {
        set((s) => ({ filter: { ...s.filter, ...patch }, scrollTop: 0 }));
        void get().load();
      },

      setSort(sort) {
        const wasAscending = ascending(get().sort);
        set({ sort, scrollTop: 0 });
        if (ascending(sort) !== wasAscending) void get().load();
      },

      replaceFilter(filter) {
        set({ filter, scrollTop: 0 });
        void get().load();
      },

      async load() {
        const seq = ++loadSeq;
        // Whatever was pending is covered by this load.
        pendingIds = new Set();
        pendingCreated = false;
        set({ status: 'loading' });
        const t0 = clock();
        const r = await api.invoke('instance:list', {
          ...filterRequest(get().filter),
          ...(ascending(get().sort) ? { afterId: 0 } : {}),
          limit: pageSize,
          withCounts: true,
        });
        if (seq !== loadSeq) return;
        if (!r.ok) {
          set({ status: 'error' });
          return;
        }
        set((s) => ({
          items: r.value.items,
          counts: r.value.counts ?? {},
          nextBeforeId: r.value.nextBeforeId,
          status: 'ready',
          lastLoadMs: Math.round(clock() - t0),
          loadingMore: false,
          loads: s.loads + 1,
          startOpen: s.startOpen ?? (r.value.items.length === 0 && !isFiltered(s.filter)),
        }));
      },

      async loadMore() {
        const { nextBeforeId, loadingMore, status } = get();
        if (nextBeforeId === null || loadingMore || status !== 'ready') return;
        const seq = loadSeq;
        set({ loadingMore: true });
        const r = await api.invoke('instance:list', {
          ...filterRequest(get().filter),
          ...(ascending(get().sort) ? { afterId: nextBeforeId } : { beforeId: nextBeforeId }),
          limit: pageSize,
          withCounts: false,
        });
        if (seq !== loadSeq) return;
        if (!r.ok) {
          set({ loadingMore: false });
          return;
        }
        set((s) => {
          const known = new Set(s.items.map((i) => i.id));
          return {
            items: [...s.items, ...r.value.items.filter((i) => !known.has(i.id))],
            nextBeforeId: r.value.nextBeforeId,
            loadingMore: false,
          };
        });
      },

      async start(request) {
        const r = await api.invoke('instance:start', {
          workflow: request.workflow,
          ...(request.version === undefined ? {} : { version: request.version }),
          ...(request.variables === undefined ? {} : { variables: request.variables }),
          ...(request.businessKey ? { businessKey: request.businessKey } : {}),
          ...(request.priority === undefined ? {} : { priority: request.priority }),
          actor: actor(),
        });
        if (!r.ok) {
          options.claimError?.('instance:start');
          return r;
        }
        pendingCreated = true;
        scheduleFlush();
        return r;
      },

      async bulk(action, opts) {
        const r = await api.invoke('instance:bulk', {
          action,
          filter: filterRequest(get().filter),
          dryRun: opts.dryRun,
          ...(opts.upToId === undefined ? {} : { upToId: opts.upToId }),
          compensate: opts.compensate ?? false,
          actor: actor(),
        });
        if (!r.ok) return undefined;
        if (!opts.dryRun) void get().load();
        return r.value;
      },

      applyBatch(batch) {
        let touched = false;
        for (const e of batch.events) {
          if (e.type === 'instance.created') {
            pendingCreated = true;
            touched = true;
          } else if (
            e.type === 'instance.changed' ||
            e.type === 'instance.finished' ||
            e.type === 'node.changed' ||
            e.type === 'approval.requested'
          ) {
            pendingIds.add(e.instanceId);
            touched = true;
          } else if (e.type === 'store.changed') {
            // Another process changed the file (no per-instance events reach us): refresh the
            // loaded rows around the scroll position (by id) and the head with its counts.
            const { items, scrollTop } = get();
            const first = Math.max(0, Math.floor(scrollTop / ROW_HEIGHT_ESTIMATE) - 100);
            for (const i of items.slice(first, first + 400)) pendingIds.add(i.id);
            pendingCreated = true;
            touched = true;
          }
        }
        if (touched) scheduleFlush();
      },

      flushLive() {
        // One flush at a time; what arrives meanwhile waits for the next.
        if (flushing) return flushing;
        flushing = (async () => {
          lastFlushAt = Date.now();
          const s = get();
          if (s.status !== 'ready') {
            pendingIds = new Set();
            pendingCreated = false;
            return;
          }
          const loaded = new Set(s.items.map((i) => i.id));
          const ids = [...pendingIds].filter((id) => loaded.has(id)).slice(0, 1000);
          const created = pendingCreated || [...pendingIds].some((id) => !loaded.has(id));
          pendingIds = new Set();
          pendingCreated = false;
          if (ids.length === 0 && !created) return;
          if (s.items.length === 0) {
            await get().load();
            return;
          }
          const seq = loadSeq;
          const oldestFirst = ascending(s.sort);
          const newest = s.items.reduce((m, i) => Math.max(m, i.id), 0);
          const headLimit = pageSize;
          const [head, rows] = await Promise.all([
            api.invoke('instance:list', {
              ...filterRequest(s.filter),
              afterId: newest,
              limit: headLimit,
              withCounts: true,
            }),
            ids.length > 0
              ? api.invoke('instance:list', { ids, limit: Math.max(1, ids.length), withCounts: false })
              : Promise.resolve(undefined),
          ]);
          if (seq !== loadSeq) return;
          if (head.ok && head.value.items.length >= headLimit && !(oldestFirst && s.nextBeforeId !== null)) {
            // More arrived than a page: start again from the top.
            await get().load();
            return;
          }
          const fresh = new Map<number, InstanceListItem>();
          if (rows?.ok) for (const row of rows.value.items) fresh.set(row.id, row);
          set((cur) => {
            const known = new Set(cur.items.map((i) => i.id));
            // Newer rows arrive oldest first. Newest first, they go on top; oldest first, at the
            // end, once the end is loaded (before that, paging brings them in their place).
            const newer = head.ok ? head.value.items.filter((i) => !known.has(i.id)) : [];
            const kept = cur.items.map((i) => fresh.get(i.id) ?? i);
            const items = !oldestFirst
              ? [...newer.reverse(), ...kept]
              : cur.nextBeforeId === null
                ? [...kept, ...newer]
                : kept;
            return {
              items,
              counts: head.ok ? (head.value.counts ?? cur.counts) : cur.counts,
              liveFlushes: cur.liveFlushes + 1,
            };
          });
        })().finally(() => {
          flushing = undefined;
        });
        return flushing;
      },

      open: (id, tab = 'timeline') => set({ openId: id, tab }),
      setTab: (tab) => set({ tab }),
      setScrollTop: (top) => set({ scrollTop: top }),
    };
  });
}
