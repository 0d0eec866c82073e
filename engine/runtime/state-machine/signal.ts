/**
 * Events sent to instances: the transitions of `event` nodes and of `instance:signal`
 * (Temporal's signals, BPMN's message catch events, Step Functions' callback tokens).
 *
 * Every event sent is recorded (the `event` table and an `event.received` history entry), whether
 * or not a node waits for it. A node that waits takes the oldest unconsumed event of its name (and
 * key, when it names one), whether that came before the node was reached or after: the first one
 * wins, later ones stay recorded and unconsumed. Taking it writes the node's `wake` row; the worker
 * that claims it settles the event's data as the node's result (its edges are expressions), so
 * delivery and consumption are one transaction and a crash loses neither.
 */
import { EngineError } from '../../errors';
import { isTerminal } from '../../vocabulary';
import type { EventWait, InstanceHead } from '../../store/queries';
import { testMark, type Tx } from './tx';
import { settle } from './instance';

/** An event sent to an instance. */
export interface SentEvent {
  instanceId: number;
  name: string;
  /** The key an `event` node may ask for (e.g. a device id), or null. */
  key: string | null;
  data: unknown;
  actor?: string;
}

/** What {@link sendEvent} did: the event's id, and the node that took it (null: it waits, recorded, for a node to reach it). */
export interface SendResult {
  eventId: number;
  consumedBy: string | null;
}

/**
 * Whether a node waiting on `w` takes an event of `name` and `key` at `now`: a wait whose time
 * limit has passed (its timeout row is due, about to fail the attempt) takes nothing, so the event
 * is kept rather than reported taken and lost.
 */
function takes(w: EventWait, name: string, key: string | null, now: number): boolean {
  return w.received === undefined && w.name === name && (w.key === undefined || w.key === key) && (w.timeoutAt === undefined || w.timeoutAt > now);
}

/** `nodeId` (waiting on `w`) takes event `eventId`: consumed, the wait keeps its data, the wake row is due now. */
function deliver(tx: Tx, instanceId: number, nodeId: string, w: EventWait, eventId: number, data: unknown): void {
  const { q, now } = tx;
  q.events.consume({ id: eventId, nodeId, now });
  q.nodes.park({ instanceId, nodeId, status: 'WAITING', wait: { ...w, received: { eventId, data } } });
  q.schedule.insert({ instanceId, nodeId, kind: 'wake', at: now, retryCount: 0, now });
}

/**
 * Records an event sent to a live instance, and hands it to the node waiting for it, if any.
 *
 * @throws EngineError NOT_FOUND (no such instance), INVALID_STATE (the instance has ended).
 */
export function sendEvent(tx: Tx, e: SentEvent): SendResult {
  const { q, now } = tx;
  const inst = q.instances.head(e.instanceId);
  if (!inst) throw new EngineError('NOT_FOUND', `instance ${e.instanceId} does not exist`);
  if (isTerminal(inst.status)) {
    throw new EngineError('INVALID_STATE', `instance ${e.instanceId} has ended (${inst.status}): events can no longer be sent to it`, {
      details: { status: inst.status },
    });
  }
  const eventId = q.events.insert({ instanceId: e.instanceId, name: e.name, key: e.key, data: e.data, actor: e.actor ?? null, now });
  let consumedBy: string | null = null;
  for (const n of q.nodes.all(e.instanceId)) {
    const w = n.wait;
    if (n.status !== 'WAITING' || w?.kind !== 'event' || !takes(w, e.name, e.key, now)) continue;
    deliver(tx, e.instanceId, n.nodeId, w, eventId, e.data);
    consumedBy = n.nodeId;
    break;
  }
  q.history.append({
    instanceId: e.instanceId,
    nodeId: consumedBy,
    type: 'event.received',
    at: now,
    actor: e.actor,
    data: { eventId, name: e.name, key: e.key, data: e.data, consumedBy },
  });
  tx.events.push({ type: 'instance.changed', instanceId: e.instanceId, status: inst.status, ...testMark(inst) });
  return { eventId, consumedBy };
}

/**
 * Parks an `event` node WAITING for an event of `name` (and `key`, when given) at `attempt`,
 * with its timeout row; an event sent earlier and not consumed is taken at once.
 */
export function waitEvent(tx: Tx, inst: InstanceHead, nodeId: string, w: { name: string; key?: string; timeoutMs?: number }, attempt: number): void {
  const { q, now } = tx;
  const wait: EventWait = {
    kind: 'event',
    name: w.name,
    ...(w.key === undefined ? {} : { key: w.key }),
    ...(w.timeoutMs === undefined ? {} : { timeoutAt: now + w.timeoutMs }),
  };
  q.nodes.park({ instanceId: inst.id, nodeId, status: 'WAITING', wait });
  if (wait.timeoutAt !== undefined) q.schedule.insert({ instanceId: inst.id, nodeId, kind: 'timeout', at: wait.timeoutAt, retryCount: 0, now });
  q.history.append({ instanceId: inst.id, nodeId, type: 'event.waiting', at: now, attempt, data: { name: w.name, key: w.key ?? null, timeoutAt: wait.timeoutAt } });
  const early = q.events.firstOpen({ instanceId: inst.id, name: w.name, key: w.key ?? null });
  if (early) deliver(tx, inst.id, nodeId, wait, early.id, early.data);
  tx.events.push({ type: 'node.changed', instanceId: inst.id, nodeId, status: 'WAITING', attempt, ...testMark(inst) });
  settle(tx, inst.id, inst);
}
