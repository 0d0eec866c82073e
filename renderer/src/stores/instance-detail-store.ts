/**
 * The open instance: its detail (`instance:get`), its whole history (`instance:history`, paged and
 * then followed incrementally), the definition of its own workflow version (`workflow:get`), and
 * the actions a person takes on it (resume, retry, cancel, pause, unpause, approve), each sent with the actor and
 * the version the person saw (`expectedVersion`), so a stale action is refused, not applied.
 *
 * Events about the open instance refresh it at most once per `refreshIntervalMs`.
 *
 * A store creator apart from hooks: tests pass a fake `invoke`.
 */
import { createStore, type StoreApi } from 'zustand/vanilla';
import type { ApiError, EventBatch, HistoryEvent, InstanceDetail, Output, Result } from '../../../engine/api/contract';
import type { Workflow } from '../../../engine/dsl/schema';
import type { ApiClient } from '../api/client';
import type { LoadStatus } from './workflows-store';

/** A resume of a SUSPENDED instance (DESIGN.md section 4). */
export interface ResumeRequest {
  action: 'retry' | 'skip' | 'fail';
  /** Replaces the globals first (the diff lands in history). */
  variables?: Record<string, unknown>;
  /** For `skip`: the failed step's result. */
  result?: unknown;
}

/** An event to send to the open instance (`instance:signal`). */
export interface SignalRequest {
  event: string;
  /** The key an `event` node may ask for; absent: none. */
  key?: string;
  /** The event's data (any JSON value); absent: none. */
  data?: unknown;
}

/** State and actions of the detail store. */
export interface InstanceDetailState {
  id: number | undefined;
  detail: InstanceDetail | undefined;
  history: HistoryEvent[];
  /** The definition of the instance's own workflow version. */
  definition: Workflow | undefined;
  status: LoadStatus;
  /** An action is in flight. */
  busy: boolean;
  /** The last refused action's error (shown beside the actions, so not as a toast too). */
  actionError: ApiError | undefined;
  /** Why the instance could not be opened (shown in the view, so not as a toast too). */
  loadError: ApiError | undefined;
  /** Opens instance `id` (undefined closes). */
  open(id: number | undefined): Promise<void>;
  /** Reloads the detail and the new history events. */
  refresh(): Promise<void>;
  applyBatch(batch: EventBatch): void;
  resume(request: ResumeRequest): Promise<boolean>;
  retry(): Promise<boolean>;
  cancel(compensate: boolean): Promise<boolean>;
  /** Pauses the open instance (`instance:pause`): it starts no node until unpaused. */
  pause(): Promise<boolean>;
  /** Unpauses the open instance (`instance:unpause`). */
  unpause(): Promise<boolean>;
  approve(nodeId: string, approved: boolean, data?: unknown, comment?: string): Promise<boolean>;
  /**
   * Sends an event to the open instance; the result comes back as data (the dialog shows it and
   * its refusal, so no toast): which node took it, or null when it is kept for a later one.
   */
  signal(request: SignalRequest): Promise<Result<Output<'instance:signal'>>>;
}

/** Options of {@link createInstanceDetailStore}. */
export interface InstanceDetailStoreOptions {
  /** Least ms between two refreshes caused by events (default 250). */
  refreshIntervalMs?: number;
  actor?: () => string;
  /** Takes back the toast of a refusal shown beside the actions (the UI store's `claimToast`). */
  claimError?: (channel: string) => void;
}

/** A detail store over `api`. */
export function createInstanceDetailStore(
  api: Pick<ApiClient, 'invoke'>,
  options: InstanceDetailStoreOptions = {},
): StoreApi<InstanceDetailState> {
  const actor = options.actor ?? (() => 'you');
  const interval = options.refreshIntervalMs ?? 250;
  const definitions = new Map<string, Workflow>();
  let openSeq = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let refreshing: Promise<void> | undefined;
  let again = false;

  return createStore<InstanceDetailState>()((set, get) => {
    const loadHistory = async (id: number, afterId: number): Promise<HistoryEvent[] | undefined> => {
      const out: HistoryEvent[] = [];
      let cursor = afterId;
      for (let page = 0; page < 50; page++) {
        const r = await api.invoke('instance:history', { id, afterId: cursor, limit: 1000 });
        if (!r.ok) return undefined;
        out.push(...r.value.events);
        if (r.value.nextAfterId === null) break;
        cursor = r.value.nextAfterId;
      }
      return out;
    };

    const definitionOf = async (workflow: string, version: number): Promise<Workflow | undefined> => {
      const key = `${workflow}\u0000${version}`;
      const known = definitions.get(key);
      if (known) return known;
      const r = await api.invoke('workflow:get', { name: workflow, version });
      if (!r.ok) return undefined;
      definitions.set(key, r.value.definition);
      return r.value.definition;
    };

    /** Runs an action; on success refreshes at once. */
    const act = async (
      channel: string,
      run: (expectedVersion: number | undefined) => Promise<{ ok: boolean; error?: ApiError }>,
    ): Promise<boolean> => {
      const id = get().id;
      if (id === undefined) return false;
      set({ busy: true, actionError: undefined });
      const r = await run(get().detail?.version);
      if (!r.ok) options.claimError?.(channel);
      set({ busy: false, actionError: r.ok ? undefined : r.error });
      await get().refresh();
      return r.ok;
    };

    const refreshNow = async (): Promise<void> => {
      const id = get().id;
      if (id === undefined) return;
      const seq = openSeq;
      const last = get().history[get().history.length - 1]?.id ?? 0;
      const [d, h] = await Promise.all([api.invoke('instance:get', { id }), loadHistory(id, last)]);
      if (seq !== openSeq || !d.ok) return;
      set((s) => {
        const known = new Set(s.history.map((e) => e.id));
        return {
          detail: d.value,
          history: [...s.history, ...(h ?? []).filter((e) => !known.has(e.id))],
          status: 'ready',
        };
      });
    };

    return {
      id: undefined,
      detail: undefined,
      history: [],
      definition: undefined,
      status: 'idle',
      busy: false,
      actionError: undefined,
      loadError: undefined,

      async open(id) {
        const seq = ++openSeq;
        if (timer !== undefined) clearTimeout(timer);
        timer = undefined;
        set({
          id,
          detail: undefined,
          history: [],
          definition: undefined,
          status: id === undefined ? 'idle' : 'loading',
          actionError: undefined,
          loadError: undefined,
          busy: false,
        });
        if (id === undefined) return;
        // The instance first: when it cannot be opened, the view says why in place (its toast is
        // taken back), and no history call adds a second toast of the same failure.
        const d = await api.invoke('instance:get', { id });
        if (!d.ok) options.claimError?.('instance:get');
        if (seq !== openSeq) return;
        if (!d.ok) {
          set({ status: 'error', loadError: d.error });
          return;
        }
        const h = await loadHistory(id, 0);
        if (seq !== openSeq) return;
        const definition = await definitionOf(d.value.workflow, d.value.workflowVersion);
        if (seq !== openSeq) return;
        set({ detail: d.value, history: h ?? [], definition, status: 'ready' });
      },

      refresh() {
        // One refresh at a time; a request meanwhile runs once more after it.
        if (refreshing) {
          again = true;
          return refreshing;
        }
        refreshing = (async () => {
          do {
            again = false;
            await refreshNow();
          } while (again);
        })().finally(() => {
          refreshing = undefined;
        });
        return refreshing;
      },

      applyBatch(batch) {
        const id = get().id;
        if (id === undefined || timer !== undefined) return;
        if (!batch.events.some((e) => e.type === 'store.changed' || ('instanceId' in e && e.instanceId === id))) return;
        timer = setTimeout(() => {
          timer = undefined;
          void get().refresh();
        }, interval);
      },

      resume: (request) =>
        act('instance:resume', (expectedVersion) =>
          api.invoke('instance:resume', {
            id: get().id ?? 0,
            action: request.action,
            ...(request.variables === undefined ? {} : { variables: request.variables }),
            ...(request.result === undefined ? {} : { result: request.result }),
            ...(expectedVersion === undefined ? {} : { expectedVersion }),
            actor: actor(),
          }),
        ),

      retry: () =>
        act('instance:retry', (expectedVersion) =>
          api.invoke('instance:retry', {
            id: get().id ?? 0,
            ...(expectedVersion === undefined ? {} : { expectedVersion }),
            actor: actor(),
          }),
        ),

      cancel: (compensate) =>
        act('instance:cancel', (expectedVersion) =>
          api.invoke('instance:cancel', {
            id: get().id ?? 0,
            compensate,
            ...(expectedVersion === undefined ? {} : { expectedVersion }),
            actor: actor(),
          }),
        ),

      // No expectedVersion: the channels take none, and pausing twice is refused as INVALID_STATE.
      pause: () => act('instance:pause', () => api.invoke('instance:pause', { id: get().id ?? 0, actor: actor() })),

      unpause: () => act('instance:unpause', () => api.invoke('instance:unpause', { id: get().id ?? 0, actor: actor() })),

      async signal(request) {
        const id = get().id ?? 0;
        set({ busy: true });
        const r = await api.invoke('instance:signal', {
          id,
          event: request.event,
          ...(request.key === undefined ? {} : { key: request.key }),
          ...(request.data === undefined ? {} : { data: request.data }),
          actor: actor(),
        });
        if (!r.ok) options.claimError?.('instance:signal');
        set({ busy: false });
        await get().refresh();
        return r;
      },

      approve: (nodeId, approved, data, comment) =>
        act('instance:approve', () =>
          api.invoke('instance:approve', {
            id: get().id ?? 0,
            nodeId,
            approved,
            ...(data === undefined ? {} : { data }),
            ...(comment ? { comment } : {}),
            actor: actor(),
          }),
        ),
    };
  });
}
