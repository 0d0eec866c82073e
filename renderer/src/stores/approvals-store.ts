/**
 * The Approvals inbox: every approval waiting for a person (`instance:approvals`), the
 * longest-waiting first, and deciding one (`instance:approve`, as the actor). Reloaded when an
 * approval is requested or an instance in the inbox changes, at most once per `refreshIntervalMs`.
 *
 * A store creator apart from hooks: tests pass a fake `invoke`.
 */
import { createStore, type StoreApi } from 'zustand/vanilla';
import type { ApprovalItem, EventBatch } from '../../../engine/api/contract';
import type { ApiClient } from '../api/client';
import type { LoadStatus } from './workflows-store';

/** State and actions of the approvals store. */
export interface ApprovalsState {
  items: ApprovalItem[];
  /** How many wait in all (the list shows at most 200). */
  total: number;
  status: LoadStatus;
  load(): Promise<void>;
  /** Decides one: true when the engine took it, else the refusal's message (the form shows it). */
  decide(
    item: Pick<ApprovalItem, 'instanceId' | 'nodeId'>,
    approved: boolean,
    data?: unknown,
    comment?: string,
  ): Promise<true | string>;
  applyBatch(batch: EventBatch): void;
}

/** Options of {@link createApprovalsStore}. */
export interface ApprovalsStoreOptions {
  /** Least ms between two reloads caused by events (default 500). */
  refreshIntervalMs?: number;
  actor?: () => string;
  /** Takes back the toast of a refusal the form shows itself (the UI store's `claimToast`). */
  claimError?: (channel: string) => void;
}

/** An approvals store over `api`. */
export function createApprovalsStore(
  api: Pick<ApiClient, 'invoke'>,
  options: ApprovalsStoreOptions = {},
): StoreApi<ApprovalsState> {
  const actor = options.actor ?? (() => 'you');
  let timer: ReturnType<typeof setTimeout> | undefined;
  let seq = 0;
  return createStore<ApprovalsState>()((set, get) => ({
    items: [],
    total: 0,
    status: 'idle',
    async load() {
      const mine = ++seq;
      set((s) => ({ status: s.items.length === 0 && s.status !== 'ready' ? 'loading' : s.status }));
      const r = await api.invoke('instance:approvals', { limit: 200 });
      if (mine !== seq) return;
      if (!r.ok) {
        set({ status: 'error' });
        return;
      }
      set({ items: r.value.items, total: r.value.total, status: 'ready' });
    },
    async decide(item, approved, data, comment) {
      const r = await api.invoke('instance:approve', {
        id: item.instanceId,
        nodeId: item.nodeId,
        approved,
        ...(data === undefined ? {} : { data }),
        ...(comment ? { comment } : {}),
        actor: actor(),
      });
      if (r.ok)
        set((s) => ({
          items: s.items.filter((i) => !(i.instanceId === item.instanceId && i.nodeId === item.nodeId)),
          total: Math.max(0, s.total - 1),
        }));
      void get().load();
      if (r.ok) return true;
      options.claimError?.('instance:approve');
      return `${r.error.code}: ${r.error.message}`;
    },
    applyBatch(batch) {
      if (timer !== undefined) return;
      const inbox = new Set(get().items.map((i) => i.instanceId));
      const relevant = batch.events.some(
        (e) =>
          e.type === 'approval.requested' ||
          e.type === 'store.changed' ||
          ((e.type === 'instance.changed' || e.type === 'instance.finished') && inbox.has(e.instanceId)),
      );
      if (!relevant) return;
      timer = setTimeout(() => {
        timer = undefined;
        void get().load();
      }, options.refreshIntervalMs ?? 500);
    },
  }));
}
