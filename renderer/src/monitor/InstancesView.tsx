/**
 * The Instances view: start an instance (a panel under the title, or folded into the title row),
 * filter (with per-status counts), bulk actions over the
 * filter, and the virtualized, live table; or, when one is open, that instance's detail.
 *
 * Test ids: `view-instances`, `actor-name`, and those of StartPanel, FilterBar, StatusChips,
 * BulkBar, InstanceTable and InstanceDetail.
 */
import './monitor.css';
import { ActorField } from './ActorField';
import { BulkBar } from './BulkBar';
import { FilterBar, StatusChips } from './FilterBar';
import { useStores } from '../hooks';
import { useList, useMonitor } from './hooks';
import { InstanceDetail } from './InstanceDetail';
import { InstanceTable } from './InstanceTable';
import { StartPanel } from './StartPanel';

/** See the module comment. */
export function InstancesView() {
  const openId = useList((s) => s.openId);
  const startOpen = useList((s) => s.startOpen ?? false);
  const load = useList((s) => s.load);
  const app = useStores();
  const monitor = useMonitor();
  // Everything the screen shows from the file: another process may have changed any of it.
  const refresh = (): void => {
    void load();
    void app.workflows.getState().load();
    void app.instances.getState().load();
    void monitor.approvals.getState().load();
  };
  if (openId !== undefined) return <InstanceDetail />;
  return (
    <div className="view instances-view monitor-view" data-testid="view-instances">
      <div className="monitor-head">
        <h2>Instances</h2>
        {startOpen ? null : <StartPanel />}
        <span className="spacer" />
        <ActorField />
        <button
          type="button"
          data-testid="refresh-instances"
          onClick={refresh}
          title="Reload the list, the counts and the workflows"
        >
          ↻ Refresh
        </button>
      </div>
      {startOpen ? <StartPanel /> : null}
      <FilterBar />
      <div className="chips-row">
        <StatusChips />
        <BulkBar />
      </div>
      <InstanceTable />
    </div>
  );
}
