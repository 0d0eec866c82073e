/**
 * React access to the monitor's stores: a context holding {@link MonitorStores} (built by
 * `MonitorProvider`) and selector hooks over each store.
 */
import { createContext, useContext } from 'react';
import { useStore } from 'zustand';
import { useInstances } from '../hooks';
import type { ActorState } from '../stores/actor-store';
import type { ApprovalsState } from '../stores/approvals-store';
import type { DashboardState } from '../stores/dashboard-store';
import type { InstanceDetailState } from '../stores/instance-detail-store';
import { isFiltered, type InstanceListState } from '../stores/monitor-list-store';
import type { MonitorStores } from '../stores/monitor-stores';
import type { NoticesState } from '../stores/notices-store';

/** The monitor's stores. */
export const MonitorContext = createContext<MonitorStores | null>(null);

/** The monitor's stores; throws outside a `MonitorProvider` (a wiring bug). */
export function useMonitor(): MonitorStores {
  const stores = useContext(MonitorContext);
  if (!stores) throw new Error('useMonitor: no MonitorProvider');
  return stores;
}

/** A slice of the instance list store. */
export function useList<T>(selector: (s: InstanceListState) => T): T {
  return useStore(useMonitor().list, selector);
}

/**
 * Per-status counts for the status chips and the list's total: the app's counts of every
 * instance (the same numbers, refreshed on the same events, as the status bar and the Dashboard)
 * while the filter narrows by status only, else the list's counts under its filter.
 */
export function useStatusCounts(): Record<string, number> {
  const narrowed = useList((s) => isFiltered({ ...s.filter, status: [] }));
  const listCounts = useList((s) => s.counts);
  const appCounts = useInstances((s) => s.counts);
  return narrowed ? listCounts : appCounts;
}

/** A slice of the open instance's store. */
export function useDetail<T>(selector: (s: InstanceDetailState) => T): T {
  return useStore(useMonitor().detail, selector);
}

/** A slice of the Approvals inbox store. */
export function useApprovals<T>(selector: (s: ApprovalsState) => T): T {
  return useStore(useMonitor().approvals, selector);
}

/** A slice of the Dashboard store. */
export function useDashboard<T>(selector: (s: DashboardState) => T): T {
  return useStore(useMonitor().dashboard, selector);
}

/** A slice of the notices store. */
export function useNotices<T>(selector: (s: NoticesState) => T): T {
  return useStore(useMonitor().notices, selector);
}

/** A slice of the actor store. */
export function useActor<T>(selector: (s: ActorState) => T): T {
  return useStore(useMonitor().actor, selector);
}
