/**
 * UI state that is not data: the current view and the error toasts.
 *
 * A store creator (zustand vanilla), apart from the hooks, so tests build fresh stores
 * (STYLE.md, zustand testing guide).
 */
import { createStore, type StoreApi } from 'zustand/vanilla';

/** The app's views. */
export type View = 'designer' | 'instances' | 'approvals' | 'dashboard';

/** Every view, in tab order. */
export const VIEWS: readonly View[] = ['designer', 'instances', 'approvals', 'dashboard'];

/** One error toast: a failed call's code and message. */
export interface Toast {
  id: number;
  code: string;
  message: string;
  /** The channel that failed, when a call failed. */
  channel?: string;
}

/** State and actions of the UI store. */
export interface UiState {
  view: View;
  toasts: Toast[];
  setView(view: View): void;
  /** Adds a toast (the oldest goes beyond {@link MAX_TOASTS}); returns its id. */
  pushToast(toast: Omit<Toast, 'id'>): number;
  dismissToast(id: number): void;
}

/** Most toasts shown at once. */
export const MAX_TOASTS = 5;

/** A UI store; `view` starts at `initialView` (default `instances`, the useful one today). */
export function createUiStore(initialView: View = 'instances'): StoreApi<UiState> {
  let nextId = 1;
  return createStore<UiState>()((set) => ({
    view: initialView,
    toasts: [],
    setView: (view) => set({ view }),
    pushToast: (toast) => {
      const id = nextId++;
      set((s) => ({ toasts: [...s.toasts, { ...toast, id }].slice(-MAX_TOASTS) }));
      return id;
    },
    dismissToast: (id) => set((s) => ({ toasts: s.toasts.filter((t) => t.id !== id) })),
  }));
}
