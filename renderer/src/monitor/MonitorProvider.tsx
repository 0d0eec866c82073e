/**
 * Builds the monitor's stores over the app's client and UI store (once), connects them to the
 * event stream, and provides them to the monitor's views. In the desktop app notices also become
 * OS notifications (`app:notify`, shown by the main process). It also binds the address bar to
 * the stores (`navigation.ts`): the monitor's are the last to exist.
 */
import { useEffect, useState, type ReactNode } from 'react';
import { useStores } from '../hooks';
import { applyRoute, connectNavigation } from '../navigation';
import { parseRoute } from '../routes';
import { connectMonitorStores, createMonitorStores, type MonitorStores } from '../stores/monitor-stores';
import type { Notice } from '../stores/notices-store';
import type { ApiClient } from '../api/client';
import { MonitorContext } from './hooks';

function localStore(): Storage | undefined {
  try {
    return window.localStorage;
  } catch {
    return undefined;
  }
}

/** An OS notification through the desktop shell, when there is one. */
function desktopNotifier(api: ApiClient): ((notice: Notice) => Promise<boolean>) | undefined {
  const desktop = api.desktop;
  if (!desktop) return undefined;
  return async (notice) => {
    const r = await desktop('app:notify', { title: notice.title, body: notice.body });
    return r.ok && r.value.clicked;
  };
}

/** Provides the monitor's stores to `children`. */
export function MonitorProvider({ children }: { children: ReactNode }) {
  const app = useStores();
  const [stores] = useState<MonitorStores>(() => {
    const notify = desktopNotifier(app.api);
    const monitor = createMonitorStores(app.api, app.ui, { storage: localStore(), ...(notify ? { notify } : {}) });
    // The address names what to show first (a reload, a bookmark, a link opened in a new tab).
    const route = parseRoute(window.location.hash);
    if (route) applyRoute(route, app, monitor);
    return monitor;
  });
  useEffect(() => connectNavigation(app, stores, window, { historyKeys: app.api.transport === 'electron' }), [app, stores]);
  useEffect(() => connectMonitorStores(stores), [stores]);
  return <MonitorContext.Provider value={stores}>{children}</MonitorContext.Provider>;
}
