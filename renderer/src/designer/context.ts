/**
 * React access to the designer store: one store per app (kept across tab switches, so a drawing
 * survives a look at the Instances view), provided by the Designer view, read with selectors.
 */
import { createContext, useContext } from 'react';
import { useStore } from 'zustand';
import type { AppStores } from '../stores/app-stores';
import { createDesignerStore, type DesignerState, type DesignerStore } from '../stores/designer-store';

const perApp = new WeakMap<AppStores, DesignerStore>();

/** The designer store of `app` (made on first use, over the app's API client and sidebar store). */
export function designerStoreFor(app: AppStores): DesignerStore {
  let store = perApp.get(app);
  if (!store) {
    store = createDesignerStore({ api: app.api, workflows: app.workflows, claimError: (channel) => app.ui.getState().claimToast(channel) });
    perApp.set(app, store);

    // A palette that failed to load (the host was away, or refused the token) loads once it is back.
    const created = store;
    app.api.onResync(() => void created.getState().loadTypes());
  }
  return store;
}

/** The designer store of the enclosing Designer view. */
export const DesignerStoreContext = createContext<DesignerStore | null>(null);

/** The designer store; throws outside the Designer view (a wiring bug). */
export function useDesignerStore(): DesignerStore {
  const store = useContext(DesignerStoreContext);
  if (!store) throw new Error('useDesignerStore: no DesignerStoreContext provider');
  return store;
}

/** A slice of the designer state. */
export function useDesigner<T>(selector: (s: DesignerState) => T): T {
  return useStore(useDesignerStore(), selector);
}
