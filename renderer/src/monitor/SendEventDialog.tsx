/**
 * "Send event" on a live instance (issue 12): a dialog with the event's name, key and JSON data,
 * sent with `instance:signal`. The name and key start as what the instance's `event` nodes wait
 * for (their waits `{ kind: 'event', name, key? }`; a choice of them when several wait); the data
 * must parse as JSON before Send is offered. The answer stays in the dialog: the node that took
 * the event, or that it is kept until an `event` node of that name reaches it; a refusal
 * (INVALID_STATE for an instance that ended meanwhile) is shown there too.
 *
 * Test ids: `send-event-dialog`, `send-event-waits` (`send-event-wait-<nodeId>` per waiting
 * node), `send-event-name`, `send-event-key`, `send-event-data`, `send-event-data-error`,
 * `send-event-confirm`, `send-event-close`, `send-event-result` (`data-consumed-by`),
 * `send-event-error` (`data-code`).
 */
import { useState } from 'react';
import type { ApiError, InstanceDetail, Output } from '../../../engine/api/contract';
import { Modal } from '../designer/Modal';
import { parseJsonValue } from './diff';
import { useDetail } from './hooks';

/** An `event` node the instance waits on now. */
export interface EventWaitTarget {
  nodeId: string;
  name: string;
  key?: string;
}

/** The `event` nodes of `detail` that wait for an event now (none taken yet), in node order. */
export function eventWaits(detail: InstanceDetail): EventWaitTarget[] {
  const out: EventWaitTarget[] = [];
  for (const n of detail.nodes) {
    const w = n.wait as { kind?: string; name?: unknown; key?: unknown; received?: unknown } | null | undefined;
    if (n.status !== 'WAITING' || w?.kind !== 'event' || typeof w.name !== 'string' || w.received !== undefined) continue;
    out.push({ nodeId: n.id, name: w.name, ...(typeof w.key === 'string' ? { key: w.key } : {}) });
  }
  return out;
}

/** See the module comment. */
export function SendEventDialog({ detail, onClose }: { detail: InstanceDetail; onClose: () => void }) {
  const signal = useDetail((s) => s.signal);
  // The waits when the dialog opened: what it offers should not move under the person's hands.
  const [waits] = useState(() => eventWaits(detail));
  const first = waits[0];
  const [name, setName] = useState(first?.name ?? '');
  const [key, setKey] = useState(first?.key ?? '');
  const [data, setData] = useState('');
  const [sending, setSending] = useState(false);
  const [answer, setAnswer] = useState<{ ok: true; value: Output<'instance:signal'> } | { ok: false; error: ApiError } | undefined>(undefined);
  const parsed = parseJsonValue(data);
  const canSend = name.trim() !== '' && parsed.ok && !sending;

  const send = async (): Promise<void> => {
    if (!parsed.ok || name.trim() === '') return;
    setSending(true);
    setAnswer(undefined);
    const r = await signal({ event: name.trim(), ...(key === '' ? {} : { key }), ...(parsed.value === undefined ? {} : { data: parsed.value }) });
    setSending(false);
    setAnswer(r);
  };

  return (
    <Modal title={`Send an event to #${detail.id}`} testId="send-event-dialog" onClose={onClose} wide>
      {waits.length > 0 ? (
        <div className="rn-modal-row send-event-waits" data-testid="send-event-waits">
          <span className="muted">Waiting for:</span>{' '}
          {waits.map((w) => (
            <button
              key={w.nodeId}
              type="button"
              className={w.name === name && (w.key ?? '') === key ? 'chip active' : 'chip'}
              data-testid={`send-event-wait-${w.nodeId}`}
              title={`Use the name and key node ${w.nodeId} waits for`}
              onClick={() => {
                setName(w.name);
                setKey(w.key ?? '');
              }}
            >
              <code>{w.nodeId}</code>: {w.name}
              {w.key !== undefined ? ` (key ${w.key})` : ''}
            </button>
          ))}
        </div>
      ) : (
        <p className="muted" data-testid="send-event-waits">
          No node waits for an event now: the event is kept until an event node of its name reaches it.
        </p>
      )}
      <label className="rn-modal-row send-event-field">
        <span>Event name</span>
        <input type="text" data-testid="send-event-name" value={name} spellCheck={false} autoFocus onChange={(e) => setName(e.target.value)} />
      </label>
      <label className="rn-modal-row send-event-field">
        <span>Key (optional)</span>
        <input type="text" data-testid="send-event-key" value={key} spellCheck={false} onChange={(e) => setKey(e.target.value)} />
      </label>
      <label className="rn-modal-row send-event-field">
        <span>Data (JSON, optional; the waiting node's result)</span>
        <textarea className="rn-modal-text mono" data-testid="send-event-data" rows={5} value={data} spellCheck={false} placeholder='e.g. { "approved": true }' onChange={(e) => setData(e.target.value)} />
      </label>
      {!parsed.ok ? (
        <p className="field-error" role="alert" data-testid="send-event-data-error">
          {parsed.message}
        </p>
      ) : null}
      {answer?.ok === true ? (
        <p className="send-event-result" role="status" data-testid="send-event-result" data-consumed-by={answer.value.consumedBy ?? ''}>
          {answer.value.consumedBy !== null ? (
            <>
              Sent (event {answer.value.eventId}): taken by node <code>{answer.value.consumedBy}</code>.
            </>
          ) : (
            <>Sent (event {answer.value.eventId}): no node waits for it now; it is kept until an event node of that name reaches it.</>
          )}
        </p>
      ) : null}
      {answer?.ok === false ? (
        <p className="field-error" role="alert" data-testid="send-event-error" data-code={answer.error.code}>
          {answer.error.code}: {answer.error.message}
        </p>
      ) : null}
      <div className="rn-modal-actions">
        <button type="button" data-testid="send-event-close" onClick={onClose}>
          {answer?.ok === true ? 'Close' : 'Cancel'}
        </button>
        <button type="button" className="primary" data-testid="send-event-confirm" disabled={!canSend} onClick={() => void send()}>
          {sending ? 'Sending…' : 'Send'}
        </button>
      </div>
    </Modal>
  );
}
