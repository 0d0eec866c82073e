/**
 * The workflow sidebar's data: every workflow (`workflow:list`), the selected one, and import /
 * export through the contract (the files themselves are the view's business: a native dialog in
 * the desktop app, a file input and a download in a browser).
 *
 * A store creator apart from hooks: tests pass a fake `invoke`.
 */
import { createStore, type StoreApi } from 'zustand/vanilla';
import type { EventBatch, WorkflowSummary } from '../../../engine/api/contract';
import type { ApiClient } from '../api/client';

/** Loading state of a list. */
export type LoadStatus = 'idle' | 'loading' | 'ready' | 'error';

/** State and actions of the workflows store. */
export interface WorkflowsState {
  items: WorkflowSummary[];
  status: LoadStatus;
  /** The selected workflow's name. */
  selected: string | undefined;
  /**
   * The version of the selected workflow asked for (an address `#/designer/<name>/v/<n>`, or an
   * earlier version picked in the Designer); undefined for the latest.
   */
  selectedVersion: number | undefined;
  /** (Re)loads the list; keeps the selection if it still exists, else selects the first. */
  load(): Promise<void>;
  /** Selects a workflow (at `version`, default the latest). */
  select(name: string | undefined, version?: number): void;
  /**
   * Imports a workflow file's text (JSON or YAML) and saves it as a new version; selects it.
   * Returns the saved name, or undefined when a call failed (the failure is already a toast).
   */
  importWorkflow(text: string, fileName?: string): Promise<string | undefined>;
  /** The selected workflow's latest version as a file, or undefined (nothing selected, or failed). */
  exportSelected(): Promise<{ fileName: string; text: string } | undefined>;
  /** Refreshes instance counts after instances were created or finished (throttled). */
  applyBatch(batch: EventBatch): void;
}

/** Options of {@link createWorkflowsStore}. */
export interface WorkflowsStoreOptions {
  /** Least ms between two count refreshes caused by events (default 1000). */
  refreshDelayMs?: number;
}

/** A workflows store over `api`. */
export function createWorkflowsStore(api: Pick<ApiClient, 'invoke'>, options: WorkflowsStoreOptions = {}): StoreApi<WorkflowsState> {
  let refreshTimer: ReturnType<typeof setTimeout> | undefined;
  let loadSeq = 0;
  return createStore<WorkflowsState>()((set, get) => ({
    items: [],
    status: 'idle',
    selected: undefined,
    selectedVersion: undefined,
    async load() {
      const seq = ++loadSeq;
      set((s) => ({ status: s.items.length === 0 ? 'loading' : s.status }));
      const r = await api.invoke('workflow:list');
      if (seq !== loadSeq) return; // a newer load won
      if (!r.ok) {
        set({ status: 'error' });
        return;
      }
      const selected = get().selected;
      const keep = selected !== undefined && r.value.some((w) => w.name === selected);
      set((s) => ({ items: r.value, status: 'ready', selected: keep ? selected : r.value[0]?.name, selectedVersion: keep ? s.selectedVersion : undefined }));
    },
    select: (name, version) => set({ selected: name, selectedVersion: name === undefined ? undefined : version }),
    async importWorkflow(text, fileName) {
      const read = await api.invoke('workflow:import', fileName === undefined ? { text } : { text, fileName });
      if (!read.ok) return undefined;
      // A file with problems is still sent to save: its INVALID_WORKFLOW result names every
      // problem (and becomes a toast), so there is one way to report them.
      const definition = read.value.definition;
      const saved = await api.invoke('workflow:save', { definition: (typeof definition === 'object' && definition !== null ? definition : {}) as Record<string, unknown> });
      if (!saved.ok) return undefined;
      await get().load();
      set({ selected: saved.value.name, selectedVersion: undefined });
      return saved.value.name;
    },
    async exportSelected() {
      const name = get().selected;
      if (name === undefined) return undefined;
      const r = await api.invoke('workflow:export', { name });
      return r.ok ? { fileName: r.value.fileName, text: r.value.text } : undefined;
    },
    applyBatch(batch) {
      if (refreshTimer !== undefined) return;
      // store.changed: another process changed the file (a CLI deploy adds a workflow).
      if (!batch.events.some((e) => e.type === 'instance.created' || e.type === 'instance.finished' || e.type === 'store.changed')) return;
      refreshTimer = setTimeout(() => {
        refreshTimer = undefined;
        void get().load();
      }, options.refreshDelayMs ?? 1000);
    },
  }));
}
