/**
 * Pausing an instance (Temporal's workflow pause; Inngest's and BullMQ's paused jobs): a paused
 * instance starts no node. Handlers already running finish and their outcomes are recorded; every
 * other row of it — ready steps, timers, retries, wait timeouts, wakes, its deadline — is parked
 * with the time it had left and fires that much after the unpause. Its deadline clock stands still
 * while it is paused (the deadline moves on by the paused time): a pause is a person holding the
 * instance, not the instance taking long. A row that comes due for a paused instance another way
 * (a node made ready by a running handler's outcome, a recovered lease, an event's wake) is parked
 * when it is claimed, and a node eager dispatch started is given back.
 */
import { EngineError } from '../../errors';
import { isTerminal } from '../../vocabulary';
import { testMark, type Tx } from './tx';
import type { NodeWait } from '../../store/queries';
import { startWaitingChildren } from './children';

/**
 * Pauses a live instance.
 *
 * @throws EngineError NOT_FOUND; INVALID_STATE (ended, or paused already).
 */
export function pauseInstance(tx: Tx, instanceId: number, actor?: string): void {
  const { q, now } = tx;
  const inst = q.instances.head(instanceId);
  if (!inst) throw new EngineError('NOT_FOUND', `instance ${instanceId} does not exist`);
  if (isTerminal(inst.status)) throw new EngineError('INVALID_STATE', `instance ${instanceId} has ended (${inst.status}): it cannot be paused`);
  if (inst.pausedAt !== null) throw new EngineError('INVALID_STATE', `instance ${instanceId} is paused already`);
  q.instances.pause({ id: instanceId, now });
  q.schedule.parkForInstance({ instanceId, now });
  q.history.append({ instanceId, nodeId: null, type: 'instance.paused', at: now, actor });
  tx.events.push({ type: 'instance.changed', instanceId, status: inst.status, ...testMark(inst) });
}

/**
 * `wait` with its due times (`until`, `timeoutAt`) moved as an unpause at `now` moves its rows
 * (engine/db/queries/schedule.ts unparkForInstance): the time each had left when the pause came at
 * `pausedAt`, counted from `now`. Undefined when it has none.
 */
function movedWait(wait: NodeWait | null, pausedAt: number, now: number): NodeWait | undefined {
  if (wait === null) return undefined;
  const move = (t: number): number => now + Math.max(0, t - pausedAt);
  if ('until' in wait && typeof wait.until === 'number') return { ...wait, until: move(wait.until) };
  if ('timeoutAt' in wait && typeof wait.timeoutAt === 'number') return { ...wait, timeoutAt: move(wait.timeoutAt) };
  return undefined;
}

/**
 * Unpauses an instance: its parked rows are due again after the time each had left, its deadline
 * moved on by the paused time.
 *
 * @throws EngineError NOT_FOUND; INVALID_STATE (not paused).
 */
export function unpauseInstance(tx: Tx, instanceId: number, actor?: string): void {
  const { q, now } = tx;
  const inst = q.instances.head(instanceId);
  if (!inst) throw new EngineError('NOT_FOUND', `instance ${instanceId} does not exist`);
  if (inst.pausedAt === null) throw new EngineError('INVALID_STATE', `instance ${instanceId} is not paused`);
  q.instances.unpause({ id: instanceId, now });
  q.schedule.unparkForInstance({ instanceId, now });
  // The waits say when they fire as their rows do: the time each had left, after the unpause.
  for (const n of q.nodes.all(instanceId)) {
    const wait = n.status === 'WAITING' || n.status === 'RETRYING' ? movedWait(n.wait, inst.pausedAt, now) : undefined;
    if (wait) q.nodes.setWait({ instanceId, nodeId: n.nodeId, wait });
  }
  startWaitingChildren(tx, inst);
  q.history.append({ instanceId, nodeId: null, type: 'instance.unpaused', at: now, actor, data: { pausedMs: now - inst.pausedAt } });
  tx.events.push({ type: 'instance.changed', instanceId, status: inst.status, ...testMark(inst) });
}
