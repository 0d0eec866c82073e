/**
 * UI state that is not data: the current view and the error toasts.
 *
 * A store creator (zustand vanilla), apart from the hooks, so tests build fresh stores
 * (STYLE.md, zustand testing guide).
 */
import { createStore, type StoreApi } from 'zustand/vanilla';

/** The app's views. */
export type View = 'designer' | 'instances' | 'approvals' | 'dashboard' | 'database';

/** Every view, in tab order. */
export const VIEWS: readonly View[] = ['designer', 'instances', 'approvals', 'dashboard', 'database'];

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
  /**
   * Adds a toast (the oldest goes beyond {@link MAX_TOASTS}), replacing one with the same code and
   * message; returns its id.
   */
  pushToast(toast: Omit<Toast, 'id'>): number;
  dismissToast(id: number): void;
  /**
   * Takes back the toasts of `channel` pushed in the current task: the caller shows that failure
   * where it happened (a form's error line, the Problems panel), and an error is shown in one
   * place only. The reporter pushes a failed call's toast before the caller gets the result, and
   * the caller claims it in the same task, so the toast is never painted.
   */
  claimToast(channel: string): void;
}

/** Most toasts shown at once. */
export const MAX_TOASTS = 5;

/** A UI store; `view` starts at `initialView` (default `instances`, the useful one today). */
export function createUiStore(initialView: View = 'instances'): StoreApi<UiState> {
  let nextId = 1;
  /** Toasts pushed in the current task (claimable); emptied by the next task. */
  let fresh = new Set<number>();
  let clearing = false;
  return createStore<UiState>()((set) => ({
    view: initialView,
    toasts: [],
    setView: (view) => set({ view }),
    pushToast: (toast) => {
      const id = nextId++;
      fresh.add(id);
      if (!clearing) {
        clearing = true;
        setTimeout(() => {
          clearing = false;
          fresh = new Set();
        }, 0);
      }
      // The same failure again (two calls of one screen, a retry) replaces its toast: one each.
      set((s) => ({
        toasts: [...s.toasts.filter((t) => t.code !== toast.code || t.message !== toast.message), { ...toast, id }].slice(-MAX_TOASTS),
      }));
      return id;
    },
    dismissToast: (id) => set((s) => ({ toasts: s.toasts.filter((t) => t.id !== id) })),
    claimToast: (channel) =>
      set((s) => {
        const toasts = s.toasts.filter((t) => !(t.channel === channel && fresh.has(t.id)));
        return toasts.length === s.toasts.length ? s : { toasts };
      }),
  }));
}
