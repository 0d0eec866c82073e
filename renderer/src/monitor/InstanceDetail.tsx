/**
 * One instance: what it is (workflow and version, status, key, times), why it stopped (the
 * suspension or failure), what a person can do now (resume, retry, cancel with or without
 * compensation, pause or unpause, decide a waiting approval), its graph with each node's state and the path taken,
 * the selected node's panel, and tabs for the timeline (Gantt), the history and the variables.
 *
 * Test ids: `instance-detail` (`data-id`, `data-status`), `detail-back`, `detail-title`, `detail-test` (a test run),
 * `detail-status`, `detail-refresh`, `suspension-banner`, `suspension-reason`, `failure-banner`,
 * `action-resume`, `action-retry` (offered only when the engine would accept it, else
 * `retry-not-offered` says why: retry-offer.ts), `action-cancel`, `action-cancel-compensate`, `action-confirm`,
 * `action-confirm-dismiss`, `action-error` (below the row), `actions-time-travel-note` (the actions
 * put away while the scrubber is on), `detail-approvals`, `detail-tab-<timeline|history|variables>`,
 * `variables-tree`, `action-send-event`, the scrubber's (TimeTravel.tsx: at the end of the actions' row), `action-pause`, `action-unpause`, `detail-paused`, `paused-banner`
 * (`data-paused-at`), plus those of the graph, node panel, resume panel, Gantt,
 * history, the send-event dialog and the parent / child links (ChildInstances.tsx).
 */
import { useEffect, useState } from 'react';
import type { InstanceDetail as Detail } from '../../../engine/api/contract';
import { INSTANCE_TABS } from '../routes';
import { ApprovalForm } from './ApprovalForm';
import { ChildGroups, ParentLink } from './ChildInstances';
import { errorText, formatDuration, formatTimestamp } from './format';
import { Gantt } from './Gantt';
import { HistoryTable } from './HistoryTable';
import { useDetail, useList } from './hooks';
import { InstanceGraph } from './InstanceGraph';
import { JsonTree } from './JsonTree';
import { NodePanel } from './NodePanel';
import { ResumePanel } from './ResumePanel';
import { retryRefusal } from './retry-offer';
import { SendEventDialog } from './SendEventDialog';
import { TimeTravel, type InstanceAt } from './TimeTravel';
import { useNow } from './useNow';

type Pending = { kind: 'cancel'; compensate: boolean } | { kind: 'retry' };

function defaultNode(detail: Detail): string | undefined {
  const s = detail.suspension as { nodeId?: string } | undefined;
  if (s?.nodeId) return s.nodeId;
  const rank = ['FAILED', 'RETRYING', 'RUNNING', 'WAITING', 'COMPENSATING', 'READY'];
  for (const status of rank) {
    const n = detail.nodes.find((x) => x.status === status);
    if (n) return n.id;
  }
  return detail.nodes[0]?.id;
}

/** See the module comment. */
export function InstanceDetail() {
  const id = useList((s) => s.openId);
  const close = useList((s) => s.open);
  const detail = useDetail((s) => s.detail);
  const history = useDetail((s) => s.history);
  const definition = useDetail((s) => s.definition);
  const status = useDetail((s) => s.status);
  const busy = useDetail((s) => s.busy);
  const actionError = useDetail((s) => s.actionError);
  const loadError = useDetail((s) => s.loadError);
  const refresh = useDetail((s) => s.refresh);
  const retry = useDetail((s) => s.retry);
  const cancel = useDetail((s) => s.cancel);
  const pause = useDetail((s) => s.pause);
  const unpause = useDetail((s) => s.unpause);
  const approve = useDetail((s) => s.approve);
  // The tab is part of the instance's address (#/instances/<id>/<tab>), so it lives in the store.
  const tab = useList((s) => s.tab);
  const setTab = useList((s) => s.setTab);
  const [selected, setSelected] = useState<string | undefined>(undefined);
  const [resuming, setResuming] = useState(false);
  const [pending, setPending] = useState<Pending | undefined>(undefined);
  const [sendingEvent, setSendingEvent] = useState(false);
  // The scrubber's entry: the graph and the variables show the instance as it was then.
  const [past, setPast] = useState<InstanceAt | undefined>(undefined);
  // While the scrubber is on, the actions are put away: they act on the instance as it is now.
  const [travelling, setTravelling] = useState(false);
  const live = detail !== undefined && detail.endedAt === null;
  const now = useNow(live ? 500 : 60_000);

  useEffect(() => {
    setSelected(undefined);
    setResuming(false);
    setPending(undefined);
    setSendingEvent(false);
  }, [id]);
  useEffect(() => {
    if (!travelling) return;
    setPending(undefined);
    setSendingEvent(false);
  }, [travelling]);
  useEffect(() => {
    if (detail && selected === undefined) setSelected(defaultNode(detail));
  }, [detail, selected]);
  useEffect(() => {
    if (detail && detail.status !== 'SUSPENDED') setResuming(false);
  }, [detail]);

  if (id === undefined) return null;
  if (!detail || !definition) {
    return (
      <div className="view instance-detail" data-testid="instance-detail" data-id={id} data-status="">
        <button type="button" className="detail-back-alone" data-testid="detail-back" onClick={() => close(undefined)}>
          ← Instances
        </button>
        <p className="empty" data-testid="detail-load-error">
          {status === 'error' ? `Instance ${id} could not be loaded${loadError ? `: ${loadError.code}: ${loadError.message}` : '.'}` : 'Loading…'}
        </p>
      </div>
    );
  }
  const statusName = detail.status.toLowerCase();
  const suspension = detail.suspension as
    { kind?: string; nodeId?: string; error?: unknown; attempts?: number } | undefined;
  const pausedAt = detail.pausedAt ?? null;
  const canCancel = ['PENDING', 'RUNNING', 'WAITING', 'SUSPENDED'].includes(detail.status);
  const retryWhyNot = retryRefusal(detail);
  const approvals = detail.nodes.filter(
    (n) => n.status === 'WAITING' && (n.wait as { kind?: string } | undefined)?.kind === 'approval',
  );
  const runPending = async (): Promise<void> => {
    if (!pending) return;
    const p = pending;
    setPending(undefined);
    if (p.kind === 'retry') await retry();
    else await cancel(p.compensate);
  };

  return (
    <div
      className="view instance-detail"
      data-testid="instance-detail"
      data-id={detail.id}
      data-status={detail.status}
    >
      <header className="detail-header">
        <button type="button" data-testid="detail-back" onClick={() => close(undefined)}>
          ← Instances
        </button>
        <h2 data-testid="detail-title">
          #{detail.id} <span className="muted">·</span> {detail.workflow}{' '}
          <span className="muted">v{detail.workflowVersion}</span>
        </h2>
        <span className={`status status-${statusName}`} data-testid="detail-status">
          {detail.status}
        </span>
        {pausedAt !== null && live ? (
          <span className="badge-paused" data-testid="detail-paused">
            paused
          </span>
        ) : null}
        {detail.test ? (
          <span className="badge-test" data-testid="detail-test" title={detail.pins ? `A test run; pinned: ${Object.keys(detail.pins).join(', ')}` : 'A test run'}>
            test run{detail.pins && Object.keys(detail.pins).length > 0 ? ` · pinned: ${Object.keys(detail.pins).join(', ')}` : ''}
          </span>
        ) : null}
        {detail.businessKey ? <span className="muted">key {detail.businessKey}</span> : null}
        {detail.priority ? (
          <span className="muted" data-testid="instance-priority">
            priority {detail.priority}
          </span>
        ) : null}
        <ParentLink detail={detail} />
        <span className="muted" title={`created ${formatTimestamp(detail.createdAt)}`}>
          {formatTimestamp(detail.createdAt).slice(0, 19)} ·{' '}
          {formatDuration((detail.endedAt ?? now) - (detail.startedAt ?? detail.createdAt))}
          {live ? ' so far' : ''}
        </span>
        <span className="spacer" />
        <button type="button" data-testid="detail-refresh" onClick={() => void refresh()} title="Reload">
          ↻
        </button>
      </header>

      {detail.status === 'SUSPENDED' && suspension ? (
        <div className="banner banner-suspended" data-testid="suspension-banner" role="status">
          <strong>Suspended</strong> — {suspension.kind === 'compensation' ? 'the compensation of ' : ''}
          <code>{suspension.nodeId}</code> failed after {suspension.attempts} attempt
          {suspension.attempts === 1 ? '' : 's'}:{' '}
          <span data-testid="suspension-reason">{errorText(suspension.error)}</span>. It waits for a person.
        </div>
      ) : null}
      {pausedAt !== null && live ? (
        <div className="banner banner-paused" data-testid="paused-banner" data-paused-at={pausedAt} role="status">
          <strong>Paused</strong> since {formatTimestamp(pausedAt)} ({formatDuration(Math.max(0, now - pausedAt))}): it
          starts no node until unpaused; steps already running finish.
        </div>
      ) : null}
      {detail.status === 'FAILED' && detail.error !== undefined ? (
        <div className="banner banner-failed" data-testid="failure-banner" role="status">
          <strong>Failed</strong> — {errorText(detail.error)}
        </div>
      ) : null}

      <div className="detail-actions" data-testid="detail-actions">
        {travelling ? (
          <span className="muted" data-testid="actions-time-travel-note">
            The actions act on the instance as it is now: Back to now to use them.
          </span>
        ) : (
          <>
            {detail.status === 'SUSPENDED' ? (
              <button
                type="button"
                className="primary"
                data-testid="action-resume"
                disabled={busy}
                onClick={() => setResuming(true)}
              >
                Resume…
              </button>
            ) : null}
            {detail.status === 'FAILED' && retryWhyNot === undefined ? (
              <button
                type="button"
                className="primary"
                data-testid="action-retry"
                disabled={busy}
                onClick={() => setPending({ kind: 'retry' })}
              >
                Retry from the failed node
              </button>
            ) : null}
            {detail.status === 'FAILED' && retryWhyNot !== undefined ? (
              <span className="muted" data-testid="retry-not-offered">
                Not retried from here: {retryWhyNot}.
              </span>
            ) : null}
            {canCancel ? (
              <>
                <button
                  type="button"
                  data-testid="action-cancel"
                  disabled={busy}
                  onClick={() => setPending({ kind: 'cancel', compensate: false })}
                >
                  Cancel
                </button>
                <button
                  type="button"
                  data-testid="action-cancel-compensate"
                  disabled={busy}
                  onClick={() => setPending({ kind: 'cancel', compensate: true })}
                >
                  Cancel and compensate
                </button>
              </>
            ) : null}
            {live && pausedAt === null ? (
              <button
                type="button"
                data-testid="action-pause"
                disabled={busy}
                title="Start no node of this instance until it is unpaused (running steps finish; timers keep the time they had left)"
                onClick={() => void pause()}
              >
                Pause
              </button>
            ) : null}
            {live && pausedAt !== null ? (
              <button
                type="button"
                className="primary"
                data-testid="action-unpause"
                disabled={busy}
                title="Let this instance go on"
                onClick={() => void unpause()}
              >
                Unpause
              </button>
            ) : null}
            {live ? (
              <button
                type="button"
                data-testid="action-send-event"
                disabled={busy}
                title="Send an event to this instance (an event node waiting for it takes it)"
                onClick={() => setSendingEvent(true)}
              >
                Send event…
              </button>
            ) : null}
            {pending ? (
              <span className="confirm" role="alertdialog" aria-label="Confirm">
                {pending.kind === 'retry'
                  ? 'Retry the failed node(s) with a fresh attempt budget?'
                  : pending.compensate
                    ? 'Cancel, undoing completed steps (compensation) first?'
                    : 'Cancel now, without compensation?'}
                <button
                  type="button"
                  className={pending.kind === 'retry' ? 'primary' : 'danger'}
                  data-testid="action-confirm"
                  onClick={() => void runPending()}
                >
                  Yes
                </button>
                <button type="button" data-testid="action-confirm-dismiss" onClick={() => setPending(undefined)}>
                  No
                </button>
              </span>
            ) : null}
            {!canCancel && detail.status !== 'FAILED' ? (
              <span className="muted">
                {detail.endedAt !== null
                  ? `Ended ${formatTimestamp(detail.endedAt)}.`
                  : 'Compensating: nothing to do until it ends.'}
              </span>
            ) : null}
          </>
        )}
        {/* at the row's end, not on a row of its own: the graph below gets that height */}
        <TimeTravel detail={detail} history={history} onState={setPast} onActive={setTravelling} />
        {/* A refusal hangs below the row, over the graph's top: the row keeps its place and height. */}
        {actionError && !resuming && !travelling ? (
          <span className="field-error action-error" role="alert" data-testid="action-error">
            {actionError.code}: {actionError.message}
          </span>
        ) : null}
      </div>

      {resuming && !travelling && detail.status === 'SUSPENDED' ? (
        <ResumePanel key={detail.version} detail={detail} onClose={() => setResuming(false)} />
      ) : null}

      {sendingEvent ? <SendEventDialog detail={detail} onClose={() => setSendingEvent(false)} /> : null}

      <ChildGroups detail={detail} />

      {approvals.length > 0 && !travelling ? (
        <section className="detail-approvals" data-testid="detail-approvals">
          {approvals.map((n) => {
            const w = n.wait as { prompt?: string };
            const cfg = definition.nodes.find((d) => d.id === n.id)?.config ?? {};
            return (
              <div key={n.id}>
                <h3>
                  Approval at <code>{n.id}</code>
                </h3>
                <ApprovalForm
                  target={{
                    instanceId: detail.id,
                    nodeId: n.id,
                    prompt: w.prompt ?? null,
                    assignee: typeof cfg.assignee === 'string' ? cfg.assignee : null,
                    form:
                      typeof cfg.form === 'object' && cfg.form !== null
                        ? (cfg.form as Record<string, unknown>)
                        : null,
                  }}
                  onDecide={(approved, data, comment) => approve(n.id, approved, data, comment)}
                />
              </div>
            );
          })}
        </section>
      ) : null}

      <InstanceGraph
        definition={definition}
        nodes={(past?.instance ?? detail).nodes}
        history={past ? history.filter((e) => e.id <= past.at.id) : history}
        selected={selected}
        onSelect={setSelected}
      />

      <div className="detail-main">
        <div className="detail-left">
          <div className="detail-tabs" role="tablist">
            {INSTANCE_TABS.map((t) => (
              <button
                key={t}
                type="button"
                role="tab"
                aria-selected={tab === t}
                className={tab === t ? 'tab2 active' : 'tab2'}
                data-testid={`detail-tab-${t}`}
                onClick={() => setTab(t)}
              >
                {t === 'timeline'
                  ? 'Timeline'
                  : t === 'history'
                    ? `History (${history.length})`
                    : 'Variables'}
              </button>
            ))}
          </div>
          <div className="detail-tabpanel" role="tabpanel">
            {tab === 'timeline' ? (
              <Gantt
                history={history}
                nodes={detail.nodes}
                createdAt={detail.createdAt}
                endedAt={detail.endedAt}
                now={now}
                selected={selected}
                onSelect={setSelected}
              />
            ) : null}
            {tab === 'history' ? <HistoryTable history={history} createdAt={detail.createdAt} /> : null}
            {tab === 'variables' ? (
              <div className="variables-grid">
                <div>
                  <h4>Global variables{past ? ` as of entry ${past.position} of ${past.entries}` : ''}</h4>
                  <JsonTree value={(past?.instance ?? detail).variables} testId="variables-tree" />
                </div>
                <div>
                  <h4>Input at start</h4>
                  <JsonTree value={detail.input} testId="input-tree" openDepth={1} />
                </div>
              </div>
            ) : null}
          </div>
        </div>
        {selected ? (
          <NodePanel
            detail={past?.instance ?? detail}
            definition={definition}
            history={past ? history.filter((e) => e.id <= past.at.id) : history}
            nodeId={selected}
            now={past ? past.at.at : now}
          />
        ) : (
          <div />
        )}
      </div>
    </div>
  );
}
