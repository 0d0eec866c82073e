/**
 * The instance's scrubber (issue 14, time travel): a slider and step buttons over its history
 * entries. At each entry it asks `instance:stateAt` for the instance as it was right after it and
 * hands that to the detail view, which draws the graph's node states and the variables tree from
 * it; "Start a copy from here" forks a new instance from that entry (`instance:fork`) and opens it.
 *
 * Test ids: `time-travel-toggle` (`aria-pressed`), `time-travel` (`data-entry-id`,
 * `data-position`), `time-travel-slider`, `time-travel-prev`, `time-travel-next`,
 * `time-travel-entry`, `time-travel-fork`, `time-travel-error`.
 */
import { useEffect, useState } from 'react';
import type { HistoryEvent, InstanceDetail, Output } from '../../../engine/api/contract';
import { useStores } from '../hooks';
import { formatTimestamp } from './format';
import { useActor, useList } from './hooks';

/** What the detail view shows while the scrubber is on: the instance at one entry. */
export type InstanceAt = Output<'instance:stateAt'>;

/**
 * See the module comment. `onState` gets the instance at the chosen entry, or undefined when the
 * scrubber is off; `onActive` whether the scrubber is on (at once, before its first state loads).
 */
export function TimeTravel({
  detail,
  history,
  onState,
  onActive,
}: {
  detail: InstanceDetail;
  history: readonly HistoryEvent[];
  onState: (state: InstanceAt | undefined) => void;
  onActive?: (on: boolean) => void;
}) {
  const { api } = useStores();
  const actor = useActor((s) => s.actor);
  const open = useList((s) => s.open);
  const [on, setOn] = useState(false);
  const [index, setIndex] = useState(0);
  const [shown, setShown] = useState<InstanceAt | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [forking, setForking] = useState(false);
  const entry = history[Math.min(index, history.length - 1)];

  useEffect(() => {
    setOn(false);
    setShown(undefined);
    onState(undefined);
    // A new instance: start over.
  }, [detail.id, onState]);
  useEffect(() => onActive?.(on), [on, onActive]);

  useEffect(() => {
    if (!on || !entry) return;
    let stale = false;
    void api.invoke('instance:stateAt', { id: detail.id, at: entry.id }).then((r) => {
      if (stale) return;
      if (r.ok) {
        setShown(r.value);
        setError(undefined);
        onState(r.value);
      } else setError(`${r.error.code}: ${r.error.message}`);
    });
    return () => {
      stale = true;
    };
  }, [on, entry, detail.id, api, onState]);

  const toggle = (): void => {
    if (on) {
      setOn(false);
      setShown(undefined);
      onState(undefined);
    } else {
      setIndex(Math.max(0, history.length - 1));
      setOn(true);
    }
  };
  const fork = async (): Promise<void> => {
    if (!entry) return;
    setForking(true);
    const r = await api.invoke('instance:fork', { id: detail.id, at: entry.id, actor });
    setForking(false);
    if (r.ok) open(r.value.id);
    else setError(`${r.error.code}: ${r.error.message}`);
  };

  return (
    <div className={on ? 'time-travel-bar on' : 'time-travel-bar'}>
      <button
        type="button"
        data-testid="time-travel-toggle"
        aria-pressed={on}
        onClick={toggle}
        disabled={history.length === 0}
        title={
          on
            ? 'Leave time travel: show the instance as it is now, with its actions'
            : "Replay the instance's history on the graph and the variables, entry by entry"
        }
      >
        {on ? 'Back to now' : 'Time travel'}
      </button>
      {on && entry ? (
        <div
          className="time-travel"
          data-testid="time-travel"
          data-entry-id={shown?.at.id ?? ''}
          data-position={shown?.position ?? ''}
        >
          <button
            type="button"
            data-testid="time-travel-prev"
            aria-label="Previous entry"
            disabled={index <= 0}
            onClick={() => setIndex((i) => Math.max(0, i - 1))}
          >
            ◀
          </button>
          <input
            type="range"
            data-testid="time-travel-slider"
            aria-label="History entry"
            min={0}
            max={history.length - 1}
            value={Math.min(index, history.length - 1)}
            onChange={(e) => setIndex(Number(e.target.value))}
          />
          <button
            type="button"
            data-testid="time-travel-next"
            aria-label="Next entry"
            disabled={index >= history.length - 1}
            onClick={() => setIndex((i) => Math.min(history.length - 1, i + 1))}
          >
            ▶
          </button>
          <span
            data-testid="time-travel-entry"
            className="time-travel-entry"
            title={`${entry.type}${entry.nodeId ? ` ${entry.nodeId}` : ''} at ${formatTimestamp(entry.at)}`}
          >
            {Math.min(index, history.length - 1) + 1} of {history.length}: <code>{entry.type}</code>
            {entry.nodeId ? (
              <>
                {' '}
                <code>{entry.nodeId}</code>
              </>
            ) : null}{' '}
            <span className="muted">at {formatTimestamp(entry.at)}</span>
          </span>
          <button
            type="button"
            className="primary"
            data-testid="time-travel-fork"
            disabled={forking || shown === undefined}
            onClick={() => void fork()}
            title="Start a new instance of this workflow version from the state at this entry: done nodes keep their results, the rest run"
          >
            Start a copy from here
          </button>
          {error ? (
            <span className="field-error" role="alert" data-testid="time-travel-error">
              {error}
            </span>
          ) : null}
        </div>
      ) : null}
    </div>
  );
}
