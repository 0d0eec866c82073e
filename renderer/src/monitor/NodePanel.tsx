/**
 * One node of the open instance: state, attempt n of m, times, next retry, what it waits for,
 * its error, every attempt from history (when, how long, how it ended), its output, and its input
 * — the node's `input` mapping evaluated now over the current globals and step results (the engine
 * does not store each attempt's input; this is what the next attempt would receive).
 *
 * What it waits for and its error follow the node's current state, not what was stored last: a
 * compensated or completed node waits for nothing and shows no error (its failed attempts stay in
 * the attempts list), a compensation being run again is "compensating", not "waits for a person".
 *
 * Test ids: `node-panel` (`data-node`), `node-panel-status`, `node-attempts-count`,
 * `node-next-retry`, `node-wait`, `node-error` (`data-kind`), `node-attempts`, `node-output`,
 * `node-input`, `attempt-timed-out-<attempt>` (the "timed out" badge of an attempt a time limit stopped:
 * its recorded error's code is TIMEOUT).
 */
import { useEffect, useState } from 'react';
import type { HistoryEvent, InstanceDetail } from '../../../engine/api/contract';
import { applyInput } from '../../../engine/dsl/expressions';
import type { Workflow } from '../../../engine/dsl/schema';
import { errorText, formatDuration, formatRelative, formatTimestamp } from './format';
import { JsonTree } from './JsonTree';

interface Attempt {
  attempt: number | null;
  at: number;
  outcome: string;
  durationMs?: number;
  error?: unknown;
  /** It was stopped by a time limit (the engine records a TIMEOUT error on the attempt). */
  timedOut?: boolean;
}

/** Whether a recorded error is a time limit's (code TIMEOUT: a node's `timeoutMs`, a script's or a request's limit). */
function isTimeout(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'TIMEOUT';
}

function attemptsOf(history: readonly HistoryEvent[], nodeId: string): Attempt[] {
  const out: Attempt[] = [];
  for (const e of history) {
    if (e.nodeId !== nodeId) continue;
    const d = (typeof e.data === 'object' && e.data !== null ? e.data : {}) as {
      durationMs?: number;
      error?: unknown;
      willRetry?: boolean;
    };
    if (e.type === 'node.completed')
      out.push({
        attempt: e.attempt,
        at: e.at,
        outcome: 'completed',
        ...(d.durationMs === undefined ? {} : { durationMs: d.durationMs }),
      });
    else if (e.type === 'node.failed')
      out.push({
        attempt: e.attempt,
        at: e.at,
        outcome: d.willRetry ? 'failed, retrying' : 'failed',
        error: d.error,
        ...(isTimeout(d.error) ? { timedOut: true } : {}),
        ...(d.durationMs === undefined ? {} : { durationMs: d.durationMs }),
      });
    else if (e.type === 'node.skipped_by_hand')
      out.push({ attempt: e.attempt, at: e.at, outcome: `skipped by ${e.actor ?? 'hand'}` });
    else if (e.type === 'compensation.completed')
      out.push({ attempt: e.attempt, at: e.at, outcome: 'compensated' });
    else if (e.type === 'compensation.failed')
      out.push({ attempt: e.attempt, at: e.at, outcome: 'compensation failed', error: d.error });
  }
  return out;
}

/** Node states in which a stored error is the current one, and what it is then. */
const ERROR_LABEL: Partial<Record<string, string>> = {
  FAILED: 'failed',
  RETRYING: 'last attempt failed',
  WAITING: 'last attempt failed',
  COMPENSATING: 'last compensation attempt failed',
};

/**
 * What a node waits for now, from its state and its instance's: a wait for a person (an incident,
 * a failed compensation) holds only while the instance is SUSPENDED; a timer, an approval or a
 * retry only while the node is WAITING or RETRYING.
 */
function currentWait(nodeStatus: string | undefined, instanceStatus: string, wait: { kind?: string } | undefined): boolean {
  if (!wait?.kind) return false;
  if (wait.kind === 'incident' || wait.kind === 'compensation') return instanceStatus === 'SUSPENDED';
  return nodeStatus === 'WAITING' || nodeStatus === 'RETRYING';
}

/** See the module comment. */
export function NodePanel({
  detail,
  definition,
  history,
  nodeId,
  now,
}: {
  detail: InstanceDetail;
  definition: Workflow;
  history: readonly HistoryEvent[];
  nodeId: string;
  now: number;
}) {
  const def = definition.nodes.find((n) => n.id === nodeId);
  const state = detail.nodes.find((n) => n.id === nodeId);
  const [input, setInput] = useState<{ value?: unknown; error?: string }>({});
  useEffect(() => {
    let live = true;
    // Keyed by node id, which may be `__proto__`: no prototype, so that is a key like any other.
    const steps = Object.create(null) as Record<string, unknown>;
    for (const n of detail.nodes)
      if (n.status === 'COMPLETED' || n.status === 'COMPENSATED' || n.status === 'COMPENSATING')
        steps[n.id] = n.output ?? null;
    applyInput(def?.input, { variables: detail.variables, steps }).then(
      (value) => live && setInput({ value }),
      (e: unknown) => live && setInput({ error: e instanceof Error ? e.message : String(e) }),
    );
    return () => {
      live = false;
    };
  }, [def?.input, detail.variables, detail.nodes]);
  if (!def) return null;
  const attempts = attemptsOf(history, nodeId);
  const wait = (state?.wait ?? undefined) as
    | { kind?: string; prompt?: string; until?: number; timeoutAt?: number; name?: string; key?: string; received?: unknown; total?: number; started?: number; completed?: number; failed?: number; workflow?: string }
    | undefined;
  const status = (state?.status ?? 'PENDING').toLowerCase();
  const waits = currentWait(state?.status, detail.status, wait);
  const errorLabel = state?.status === undefined ? undefined : ERROR_LABEL[state.status];
  return (
    <section className="node-panel" data-testid="node-panel" data-node={nodeId} aria-label={`Node ${nodeId}`}>
      <header>
        <h3>
          {def.name ?? def.id} <span className="muted mono">{def.id}</span>
        </h3>
        <span className={`nstatus nstatus-${status}`} data-testid="node-panel-status">
          {state?.status ?? 'PENDING'}
        </span>
      </header>
      <dl className="facts">
        <dt>type</dt>
        <dd>
          <code>{def.type}</code>
          {def.onFailure === 'suspend' ? <span className="muted"> · suspends on failure</span> : null}
        </dd>
        <dt>attempt</dt>
        <dd data-testid="node-attempts-count">{state ? `${state.attempt} of ${state.maxAttempts}` : '—'}</dd>
        <dt>started</dt>
        <dd title={formatTimestamp(state?.startedAt)}>{formatTimestamp(state?.startedAt) || '—'}</dd>
        <dt>ended</dt>
        <dd title={formatTimestamp(state?.endedAt)}>
          {formatTimestamp(state?.endedAt) || '—'}
          {state?.startedAt != null && state.endedAt != null ? (
            <span className="muted"> ({formatDuration(state.endedAt - state.startedAt)})</span>
          ) : null}
        </dd>
        <dt>next retry</dt>
        <dd data-testid="node-next-retry" title={formatTimestamp(state?.nextRunAt)}>
          {state?.status === 'RETRYING' && state.nextRunAt !== null
            ? `${formatTimestamp(state.nextRunAt)} (${formatRelative(state.nextRunAt, now)})`
            : '—'}
        </dd>
        {waits && wait?.kind ? (
          <>
            <dt>waits for</dt>
            <dd data-testid="node-wait">
              {wait.kind === 'approval'
                ? `approval: ${wait.prompt ?? ''}`
                : wait.kind === 'timer'
                  ? `timer until ${formatTimestamp(wait.until)} (${formatRelative(wait.until, now)})`
                  : wait.kind === 'compensation'
                    ? 'a person: its compensation failed (resume the instance)'
                    : wait.kind === 'incident'
                      ? 'a person: it failed (resume the instance)'
                      : wait.kind === 'event'
                        ? `an event “${wait.name ?? ''}”${wait.key !== undefined ? ` with key ${wait.key}` : ''}${wait.received !== undefined ? ' (received, being taken)' : ''}`
                        : wait.kind === 'children'
                          ? `child instances of ${wait.workflow ?? '?'}: ${wait.completed ?? 0} completed, ${wait.failed ?? 0} failed, ${(wait.started ?? 0) - (wait.completed ?? 0) - (wait.failed ?? 0)} live, ${(wait.total ?? 0) - (wait.started ?? 0)} queued of ${wait.total ?? 0}`
                          : wait.kind}
              {wait.timeoutAt !== undefined ? (
                <span className="muted"> · times out {formatRelative(wait.timeoutAt, now)}</span>
              ) : null}
            </dd>
          </>
        ) : null}
      </dl>
      {state?.error != null && errorLabel !== undefined ? (
        <div className="node-error error-text" data-testid="node-error" data-kind={state.status}>
          <strong>{errorLabel}{isTimeout(state.error) ? ' (timed out)' : ''}:</strong> {errorText(state.error)}
        </div>
      ) : null}
      <h4>Attempts</h4>
      {attempts.length === 0 ? (
        <p className="muted">none recorded</p>
      ) : (
        <ol className="attempts" data-testid="node-attempts">
          {attempts.map((a, i) => (
            <li
              key={i}
              className={
                a.outcome.startsWith('failed') || a.outcome.includes('failed')
                  ? 'attempt-failed'
                  : 'attempt-ok'
              }
            >
              <span className="mono">#{a.attempt ?? '—'}</span>{' '}
              {a.timedOut ? (
                <span className="badge-timeout" data-testid={`attempt-timed-out-${a.attempt ?? i}`} title="Stopped by its time limit">
                  timed out
                </span>
              ) : null}{' '}
              {a.outcome}
              {a.durationMs !== undefined ? (
                <span className="muted"> in {formatDuration(a.durationMs)}</span>
              ) : null}
              <span className="muted"> · {formatTimestamp(a.at).slice(11)}</span>
              {a.error !== undefined ? <div className="error-text small">{errorText(a.error)}</div> : null}
            </li>
          ))}
        </ol>
      )}
      <h4>Output</h4>
      <div data-testid="node-output">
        {state?.output !== undefined ? (
          <JsonTree value={state.output} openDepth={1} />
        ) : (
          <span className="muted">none</span>
        )}
      </div>
      <h4>
        Input{' '}
        <span className="muted small">
          {def.input ? <code>{def.input}</code> : 'all globals'} · evaluated now over the current variables
        </span>
      </h4>
      <div data-testid="node-input">
        {input.error ? (
          <span className="error-text">{input.error}</span>
        ) : (
          <JsonTree value={input.value} openDepth={1} />
        )}
      </div>
    </section>
  );
}
