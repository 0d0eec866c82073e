/**
 * The app frame: header with the view tabs (`nav-designer`, `nav-instances`, `nav-approvals`
 * with its count `approvals-badge`, `nav-dashboard`, `nav-database`), the workflow sidebar, the current view,
 * error toasts, the monitor's notices, the status bar, and what the page says when the host
 * cannot be used (ConnectionBanner), and the keyboard-shortcut help (`?`). The address follows
 * the view (navigation.ts).
 * Menu commands from the desktop app are handled here.
 */
import { useEffect } from 'react';
import { runCommand, type FileAccess } from './commands';
import { ConnectDatabase } from './components/ConnectDatabase';
import { ConnectionBanner } from './components/ConnectionBanner';
import { ShortcutsHelp } from './components/ShortcutsHelp';
import { Sidebar } from './components/Sidebar';
import { StatusBar } from './components/StatusBar';
import { Toasts } from './components/Toasts';
import { useStores, useUi } from './hooks';
import { DesignerView } from './designer/Designer';
import { connectStores } from './stores/app-stores';
import { VIEWS, type View } from './stores/ui-store';
import { ApprovalsBadge } from './monitor/ApprovalsBadge';
import { ApprovalsView } from './monitor/ApprovalsView';
import { DashboardView } from './monitor/DashboardView';
import { DatabaseView } from './views/DatabaseView';
import { InstancesView } from './monitor/InstancesView';
import { MonitorProvider } from './monitor/MonitorProvider';
import { Notifications } from './monitor/Notifications';

const VIEW_LABELS: Record<View, string> = {
  designer: 'Designer',
  instances: 'Instances',
  approvals: 'Approvals',
  dashboard: 'Dashboard',
  database: 'Database',
};

function CurrentView({ view, files }: { view: View; files: FileAccess }) {
  switch (view) {
    case 'designer':
      return <DesignerView files={files} />;
    case 'dashboard':
      return <DashboardView />;
    case 'instances':
      return <InstancesView />;
    case 'approvals':
      return <ApprovalsView />;
    case 'database':
      return <DatabaseView />;
  }
}

/** The whole app; `files` is how a browser picks and saves files. */
export function App({ files }: { files: FileAccess }) {
  const stores = useStores();
  const view = useUi((s) => s.view);
  const setView = useUi((s) => s.setView);
  useEffect(() => connectStores(stores), [stores]);
  useEffect(
    () => stores.api.onCommand((command) => void runCommand(command, stores, files)),
    [stores, files],
  );
  return (
    <MonitorProvider>
      <div className="app">
        <header className="app-header">
          <div className="brand">
            <img src="./favicon.svg" alt="" width={22} height={22} />
            <span>Runnel</span>
          </div>
          <nav className="tabs" role="tablist" aria-label="Views">
            {VIEWS.map((v) => (
              <button
                key={v}
                type="button"
                role="tab"
                className={v === view ? 'tab active' : 'tab'}
                aria-selected={v === view}
                data-testid={`nav-${v}`}
                onClick={() => setView(v)}
              >
                {VIEW_LABELS[v]}
                {v === 'approvals' ? <ApprovalsBadge /> : null}
              </button>
            ))}
          </nav>
        </header>
        <div className="app-body">
          <ConnectionBanner />
          <Sidebar files={files} />
          <main className="app-main" role="tabpanel" aria-label={VIEW_LABELS[view]}>
            <CurrentView view={view} files={files} />
          </main>
        </div>
        <StatusBar />
        <Toasts />
        <ConnectDatabase />
        <Notifications />
        <ShortcutsHelp />
      </div>
    </MonitorProvider>
  );
}
