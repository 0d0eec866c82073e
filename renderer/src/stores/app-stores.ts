/**
 * All of the renderer's stores, built together over one API client. `main.tsx` builds them once
 * with the real client; tests build fresh ones with a fake.
 */
import type { StoreApi } from 'zustand/vanilla';
import type { ApiClient } from '../api/client';
import { createInstancesStore, type InstancesState, type InstancesStoreOptions } from './instances-store';
import { createUiStore, type UiState } from './ui-store';
import { createWorkflowsStore, type WorkflowsState, type WorkflowsStoreOptions } from './workflows-store';

/** The renderer's stores and the client they call. */
export interface AppStores {
  api: ApiClient;
  ui: StoreApi<UiState>;
  workflows: StoreApi<WorkflowsState>;
  instances: StoreApi<InstancesState>;
}

/** Builds every store over `api` (whose failures should already be reported to `ui`). */
export function createAppStores(
  api: ApiClient,
  ui: StoreApi<UiState> = createUiStore(),
  options: { workflows?: WorkflowsStoreOptions; instances?: InstancesStoreOptions } = {},
): AppStores {
  return { api, ui, workflows: createWorkflowsStore(api, options.workflows), instances: createInstancesStore(api, options.instances) };
}

/**
 * Wires the live parts: event batches into the stores, reloads on resync, and the first loads.
 * Returns the unsubscriber.
 */
export function connectStores(stores: AppStores): () => void {
  const offEvents = stores.api.onEvent((batch) => {
    stores.instances.getState().applyBatch(batch);
    stores.workflows.getState().applyBatch(batch);
  });
  const offResync = stores.api.onResync(() => {
    void stores.workflows.getState().load();
    void stores.instances.getState().load();
  });
  void stores.workflows.getState().load();
  void stores.instances.getState().load();
  return () => {
    offEvents();
    offResync();
  };
}
