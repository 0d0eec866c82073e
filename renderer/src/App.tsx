/**
 * The app frame: header with the three view tabs (`nav-designer`, `nav-instances`,
 * `nav-dashboard`), the workflow sidebar, the current view, error toasts and the status bar.
 * Menu commands from the desktop app are handled here.
 */
import { useEffect } from 'react';
import { runCommand, type FileAccess } from './commands';
import { Sidebar } from './components/Sidebar';
import { StatusBar } from './components/StatusBar';
import { Toasts } from './components/Toasts';
import { useStores, useUi } from './hooks';
import { connectStores } from './stores/app-stores';
import { VIEWS, type View } from './stores/ui-store';
import { InstancesView } from './views/InstancesView';
import { PlaceholderView } from './views/PlaceholderView';

const VIEW_LABELS: Record<View, string> = { designer: 'Designer', instances: 'Instances', dashboard: 'Dashboard' };

function CurrentView({ view }: { view: View }) {
  switch (view) {
    case 'designer':
      return (
        <PlaceholderView
          view="designer"
          title="Designer"
          issue={4}
          summary="Draw workflows on a canvas: a palette of node types, connections, a properties panel generated from each type's schema, live validation, undo/redo, auto-layout and save as a new version."
        />
      );
    case 'dashboard':
      return (
        <PlaceholderView
          view="dashboard"
          title="Dashboard"
          issue={5}
          summary="Counts by status, throughput and latency per workflow, failures and dead letters."
        />
      );
    case 'instances':
      return <InstancesView />;
  }
}

/** The whole app; `files` is how a browser picks and saves files. */
export function App({ files }: { files: FileAccess }) {
  const stores = useStores();
  const view = useUi((s) => s.view);
  const setView = useUi((s) => s.setView);
  useEffect(() => connectStores(stores), [stores]);
  useEffect(() => stores.api.onCommand((command) => void runCommand(command, stores, files)), [stores, files]);
  return (
    <div className="app">
      <header className="app-header">
        <div className="brand">
          <img src="./favicon.svg" alt="" width={22} height={22} />
          <span>Runnel</span>
        </div>
        <nav className="tabs" role="tablist" aria-label="Views">
          {VIEWS.map((v) => (
            <button key={v} type="button" role="tab" className={v === view ? 'tab active' : 'tab'} aria-selected={v === view} data-testid={`nav-${v}`} onClick={() => setView(v)}>
              {VIEW_LABELS[v]}
            </button>
          ))}
        </nav>
      </header>
      <div className="app-body">
        <Sidebar files={files} />
        <main className="app-main" role="tabpanel" aria-label={VIEW_LABELS[view]}>
          <CurrentView view={view} />
        </main>
      </div>
      <StatusBar />
      <Toasts />
    </div>
  );
}
