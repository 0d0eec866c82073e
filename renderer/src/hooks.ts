/**
 * React access to the stores: a context holding the {@link AppStores} built in `main.tsx`, and
 * selector hooks over each store. Kept apart from the store creators (which tests use directly).
 */
import { createContext, useContext } from 'react';
import { useStore } from 'zustand';
import type { AppStores } from './stores/app-stores';
import type { InstancesState } from './stores/instances-store';
import type { UiState } from './stores/ui-store';
import type { WorkflowsState } from './stores/workflows-store';

/** The stores of the running app. */
export const StoresContext = createContext<AppStores | null>(null);

/** The app's stores; throws outside a `StoresContext` provider (a wiring bug). */
export function useStores(): AppStores {
  const stores = useContext(StoresContext);
  if (!stores) throw new Error('useStores: no StoresContext provider');
  return stores;
}

/** A slice of the UI store. */
export function useUi<T>(selector: (s: UiState) => T): T {
  return useStore(useStores().ui, selector);
}

/** A slice of the workflows store. */
export function useWorkflows<T>(selector: (s: WorkflowsState) => T): T {
  return useStore(useStores().workflows, selector);
}

/** A slice of the instances store. */
export function useInstances<T>(selector: (s: InstancesState) => T): T {
  return useStore(useStores().instances, selector);
}
