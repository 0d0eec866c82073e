/**
 * The monitor's stores, built together over the app's API client and UI store: the instance
 * list, the open instance, the Approvals inbox, the Dashboard, notifications and the actor.
 * `App.tsx` builds them once (beside the app's stores, through `MonitorProvider`); tests build
 * fresh ones with a fake client.
 */
import type { StoreApi } from 'zustand/vanilla';
import type { ApiClient } from '../api/client';
import { createActorStore, type ActorState } from './actor-store';
import { createApprovalsStore, type ApprovalsState, type ApprovalsStoreOptions } from './approvals-store';
import { createDashboardStore, type DashboardState } from './dashboard-store';
import {
  createInstanceDetailStore,
  type InstanceDetailState,
  type InstanceDetailStoreOptions,
} from './instance-detail-store';
import {
  createInstanceListStore,
  type InstanceListState,
  type InstanceListStoreOptions,
} from './monitor-list-store';
import { createNoticesStore, type Notice, type NoticesState } from './notices-store';
import type { UiState } from './ui-store';

/** The monitor's stores and the client they call. */
export interface MonitorStores {
  api: ApiClient;
  ui: StoreApi<UiState>;
  actor: StoreApi<ActorState>;
  list: StoreApi<InstanceListState>;
  detail: StoreApi<InstanceDetailState>;
  approvals: StoreApi<ApprovalsState>;
  dashboard: StoreApi<DashboardState>;
  notices: StoreApi<NoticesState>;
}

/** Options of {@link createMonitorStores}. */
export interface MonitorStoresOptions {
  /** Where the actor's name is kept (default: none). */
  storage?: Pick<Storage, 'getItem' | 'setItem'>;
  list?: Omit<InstanceListStoreOptions, 'actor'>;
  detail?: Omit<InstanceDetailStoreOptions, 'actor'>;
  approvals?: Omit<ApprovalsStoreOptions, 'actor'>;
  /** Shows an OS notification; resolves true when clicked (desktop only). */
  notify?: (notice: Notice) => Promise<boolean>;
}

/** Builds the monitor's stores over `api` and the app's `ui` store. */
export function createMonitorStores(
  api: ApiClient,
  ui: StoreApi<UiState>,
  options: MonitorStoresOptions = {},
): MonitorStores {
  const actorStore = createActorStore(options.storage);
  const actor = (): string => actorStore.getState().actor;
  // Refusals a view shows where they happened are not toasted as well.
  const claimError = (channel: string): void => ui.getState().claimToast(channel);
  const list = createInstanceListStore(api, { ...options.list, actor, claimError });
  const detail = createInstanceDetailStore(api, { ...options.detail, actor, claimError });
  const openNotice = (notice: Notice): void => {
    ui.getState().setView('instances');
    if (notice.instanceId !== undefined) {
      list.getState().open(notice.instanceId);
      return;
    }
    list.getState().open(undefined);
    list.getState().replaceFilter({ status: ['SUSPENDED'] });
  };
  return {
    api,
    ui,
    actor: actorStore,
    list,
    detail,
    approvals: createApprovalsStore(api, { ...options.approvals, actor, claimError }),
    dashboard: createDashboardStore(api),
    notices: createNoticesStore({ open: openNotice, ...(options.notify ? { notify: options.notify } : {}) }),
  };
}

/**
 * Wires the live parts: event batches into every store, reloads on resync, the detail following
 * the list's open instance, and the first loads. Returns the unsubscriber.
 */
export function connectMonitorStores(stores: MonitorStores): () => void {
  const offEvents = stores.api.onEvent((batch) => {
    stores.list.getState().applyBatch(batch);
    stores.detail.getState().applyBatch(batch);
    stores.approvals.getState().applyBatch(batch);
    stores.notices.getState().applyBatch(batch);
  });
  const offResync = stores.api.onResync(() => {
    void stores.list.getState().load();
    void stores.approvals.getState().load();
    // The Dashboard's figures too: those of a load the host refused (no token yet) are empty, and
    // "reloaded" must not leave them so until its next poll.
    if (stores.dashboard.getState().status !== 'idle') void stores.dashboard.getState().load();
    // An instance that could not be opened (the host was away) is opened again, not refreshed.
    const detail = stores.detail.getState();
    if (detail.id !== undefined && detail.definition === undefined) void detail.open(detail.id);
    else void detail.refresh();
  });
  // The detail shows whatever instance the list has open.
  const offOpen = stores.list.subscribe((s, prev) => {
    if (s.openId !== prev.openId) void stores.detail.getState().open(s.openId);
  });
  void stores.list.getState().load();
  void stores.approvals.getState().load();
  const open = stores.list.getState().openId;
  if (open !== undefined) void stores.detail.getState().open(open);
  return () => {
    offEvents();
    offResync();
    offOpen();
  };
}
