/**
 * Notifications that need a person: an instance became SUSPENDED, or an approval was requested.
 * Each is a toast (and, in the desktop app, an OS notification through `notify`); clicking one
 * opens its instance. A burst (a fleet suspending at once) becomes one summary notice that opens
 * the list filtered to SUSPENDED, instead of a wall of toasts.
 *
 * A store creator apart from hooks: tests feed batches by hand.
 */
import { createStore, type StoreApi } from 'zustand/vanilla';
import type { EventBatch } from '../../../engine/api/contract';

/** One notice. */
export interface Notice {
  id: number;
  kind: 'suspended' | 'approval' | 'summary';
  /** The instance it is about (absent for a summary). */
  instanceId?: number;
  nodeId?: string;
  title: string;
  body: string;
  at: number;
}

/** State and actions of the notices store. */
export interface NoticesState {
  notices: Notice[];
  applyBatch(batch: EventBatch): void;
  dismiss(id: number): void;
  /** Opens what a notice is about (its instance, or the SUSPENDED list) and dismisses it. */
  activate(id: number): void;
}

/** Options of {@link createNoticesStore}. */
export interface NoticesStoreOptions {
  /** Opens an instance (the app shows its detail) or, with no id, the SUSPENDED list. */
  open?: (notice: Notice) => void;
  /** Shows an OS notification (desktop); resolves true when the person clicked it. */
  notify?: (notice: Notice) => Promise<boolean>;
  /** Most notices shown at once (default 4). */
  max?: number;
  /** More new notices than this in one batch become one summary (default 3). */
  burst?: number;
  now?: () => number;
}

/** A notices store. */
export function createNoticesStore(options: NoticesStoreOptions = {}): StoreApi<NoticesState> {
  const max = options.max ?? 4;
  const burst = options.burst ?? 3;
  const now = options.now ?? (() => Date.now());
  let nextId = 1;
  /** Recently notified keys (kind + instance + node), so a repeat within a minute is not shown twice. */
  const recent = new Map<string, number>();
  return createStore<NoticesState>()((set, get) => {
    const show = (fresh: Notice[]): void => {
      if (fresh.length === 0) return;
      set((s) => ({ notices: [...s.notices, ...fresh].slice(-max) }));
      for (const n of fresh) {
        void options.notify?.(n).then(
          (clicked) => {
            if (clicked) get().activate(n.id);
          },
          () => undefined,
        );
      }
    };
    return {
      notices: [],
      applyBatch(batch) {
        const t = now();
        for (const [key, at] of recent) if (t - at > 60_000) recent.delete(key);
        const fresh: Notice[] = [];
        /** Notices no longer true: their instance finished, left SUSPENDED, or the approval was decided. */
        const gone = (n: Notice): boolean => stale.some((f) => f(n));
        const stale: ((n: Notice) => boolean)[] = [];
        const settle = (test: (n: Notice) => boolean, key: string | undefined): void => {
          stale.push(test);
          if (key !== undefined) recent.delete(key);
          for (let i = fresh.length - 1; i >= 0; i--) if (test(fresh[i] as Notice)) fresh.splice(i, 1);
        };
        for (const e of batch.events) {
          if (e.type === 'instance.finished') {
            settle((n) => n.instanceId === e.instanceId, undefined);
            for (const k of [...recent.keys()]) if (k === `s:${e.instanceId}` || k.startsWith(`a:${e.instanceId}:`)) recent.delete(k);
            continue;
          }
          if (e.type === 'instance.changed' && e.status !== 'SUSPENDED') {
            settle((n) => n.kind === 'suspended' && n.instanceId === e.instanceId, `s:${e.instanceId}`);
          } else if (e.type === 'node.changed' && e.status !== 'WAITING') {
            settle((n) => n.kind === 'approval' && n.instanceId === e.instanceId && n.nodeId === e.nodeId, `a:${e.instanceId}:${e.nodeId}`);
          }
          let notice: Omit<Notice, 'id' | 'at'> | undefined;
          let key = '';
          if (e.type === 'instance.changed' && e.status === 'SUSPENDED') {
            key = `s:${e.instanceId}`;
            notice = {
              kind: 'suspended',
              instanceId: e.instanceId,
              title: `Instance ${e.instanceId} is SUSPENDED`,
              body: 'A step failed and waits for a person: open it to see why and resume it.',
            };
          } else if (e.type === 'approval.requested') {
            key = `a:${e.instanceId}:${e.nodeId}`;
            notice = {
              kind: 'approval',
              instanceId: e.instanceId,
              nodeId: e.nodeId,
              title: `Approval requested (instance ${e.instanceId})`,
              body: e.prompt ?? `Node "${e.nodeId}" waits for a decision.`,
            };
          }
          if (!notice || recent.has(key)) continue;
          recent.set(key, t);
          fresh.push({ ...notice, id: nextId++, at: t });
        }
        if (stale.length > 0 && get().notices.some(gone)) set((s) => ({ notices: s.notices.filter((n) => !gone(n)) }));
        if (fresh.length > burst) {
          const suspended = fresh.filter((n) => n.kind === 'suspended').length;
          const approvals = fresh.length - suspended;
          const parts = [
            suspended > 0 ? `${suspended} suspended` : '',
            approvals > 0 ? `${approvals} approval${approvals === 1 ? '' : 's'} requested` : '',
          ].filter(Boolean);
          show([
            {
              id: nextId++,
              kind: 'summary',
              title: `${fresh.length} instances need a person`,
              body: `${parts.join(', ')}. Open the list to see them.`,
              at: t,
            },
          ]);
          return;
        }
        show(fresh);
      },
      dismiss: (id) => set((s) => ({ notices: s.notices.filter((n) => n.id !== id) })),
      activate(id) {
        const notice = get().notices.find((n) => n.id === id);
        get().dismiss(id);
        if (notice) options.open?.(notice);
      },
    };
  });
}
