/**
 * Flow control on a workflow (`concurrency: { limit, key? }`, BullMQ's group limits, Inngest's
 * concurrency keys): at most `limit` instances of one slot (the workflow name, and the key's value
 * when a key is given) in progress at once. An instance takes a slot when it is admitted and holds
 * it until it ends — RUNNING, WAITING, SUSPENDED and COMPENSATING all hold it — so at most `limit`
 * are RUNNING too. One started beyond the limit is created PENDING and `held`: its entry rows wait
 * parked (PARKED_AT, no `paused_ms`), nothing of it runs; each end of an admitted instance admits
 * the oldest held one of its slot (start order). Its deadline runs from its creation: a limit is
 * the workflow's waiting room, not a pause of the instance.
 *
 * Both backends count admitted instances inside the write transaction; PostgreSQL takes the slot's
 * lock first (`lockConcurrency`), so two transactions never both admit into the last slot.
 */
import type { InstanceHead } from '../../store/queries';
import { testMark, type Tx } from './tx';

/**
 * Whether a new instance of slot `key` (limit `limit`) is admitted now; takes the slot's lock first.
 */
export function admits(tx: Tx, key: string, limit: number): boolean {
  tx.q.instances.lockConcurrency(key);
  return tx.q.instances.countAdmitted(key) < limit;
}

/**
 * An instance ended in this transaction: when it held a concurrency slot, the oldest held
 * instances of the slot are admitted while the slot has room (normally one): `held` cleared and
 * its parked rows due now (still parked, due at the unpause, when it is paused too). Each
 * admitted instance's own workflow version gives the limit.
 */
export function releaseSlot(tx: Tx, inst: Pick<InstanceHead, 'concurrencyKey'>): void {
  const key = inst.concurrencyKey;
  if (key === null) return;
  const { q, now } = tx;
  q.instances.lockConcurrency(key);
  // Counted once (an index walk over the slot's admitted instances): each admission below adds one.
  let admitted: number | undefined;
  for (;;) {
    const next = q.instances.oldestHeld(key);
    if (next === undefined) return;
    const limit = tx.workflow(next.workflowId).def.concurrency?.limit ?? Number.POSITIVE_INFINITY;
    admitted ??= q.instances.countAdmitted(key);
    if (admitted >= limit) return;
    q.instances.admit({ id: next.id, now });
    admitted++;
    q.schedule.releaseHeld({ instanceId: next.id, now, paused: next.pausedAt !== null });
    q.history.append({ instanceId: next.id, nodeId: null, type: 'instance.admitted', at: now });
    tx.events.push({ type: 'instance.changed', instanceId: next.id, status: 'PENDING', ...testMark(next) });
  }
}
