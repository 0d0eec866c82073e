/**
 * Deleting ended instances with everything they own: retention's batches, `runnel prune` and
 * `instance:delete` all go through here, and through nothing else (the history trigger of
 * migration 8 lets exactly this path delete history).
 *
 * Instances go by tree: a root (an instance no node started) with every descendant its
 * `subworkflow` and `map` nodes started. A child is never deleted on its own — its parent's
 * result reads it — and goes with its root; a tree goes only when every instance in it has ended,
 * so no instance is ever deleted while its parent, or any child of it, is live. A tree is held
 * back (kept, and counted) when any of its instances is live, is in another transaction's hands
 * (PostgreSQL), or owns history a change-feed consumer has not read yet (`keepHistoryAfter`).
 */
import { EngineError } from '../../errors';
import { isTerminal } from '../../vocabulary';
import type { PurgeCounts, Queries, TreeMember } from '../../store/queries';

/** The statuses retention deletes. */
export type EndedStatus = 'COMPLETED' | 'FAILED' | 'CANCELLED';

/** One selection of a prune: root instances with `status` that ended before `endedBefore` (epoch ms), of `workflow` when given. */
export interface PruneRule {
  status: EndedStatus;
  endedBefore: number;
  /** Only instances of this workflow (any version); every workflow when omitted. */
  workflow?: string;
}

/**
 * Where a pass stands in one rule's walk: ids up to `afterId` looked at already; `upToId`, the
 * newest instance old enough ({@link RetentionQueries.newestEnded}, 0 when none), looked up by
 * the rule's first batch and carried to its next ones (each may be a transaction of its own): an
 * instance ending meanwhile ends after the rule's cutoff, so the walk never goes past it.
 */
export interface RuleCursor {
  afterId: number;
  /** Unset until the rule's first batch. */
  upToId?: number;
}

/** The cursors a pass over `rules` starts from. */
export function startCursors(rules: readonly PruneRule[]): RuleCursor[] {
  return rules.map(() => ({ afterId: 0 }));
}

/** What one batch of a prune is asked to do. */
export interface PruneBatchInput {
  rules: readonly PruneRule[];
  /** Per rule, where the pass stands ({@link startCursors} at its start). */
  cursors: readonly RuleCursor[];
  /** Root instances looked at in this batch, at most (their descendants come along). */
  limit: number;
  /** Keep (and count as held back) trees that own any history row with an id above this. */
  keepHistoryAfter?: number;
  /** Count what would be deleted, delete nothing. */
  dryRun?: boolean;
}

/** What one batch did (or, dry, would do). */
export interface PruneBatchResult {
  /** Rows deleted (dry: that would be), per table; `instances` counts the children that went with their roots. */
  deleted: PurgeCounts;
  /** Instances deleted (dry: that would be) per status, children included. */
  byStatus: Record<EndedStatus, number>;
  /** Root instances kept although selected: a live instance in the tree, locked elsewhere, or history not yet read. */
  heldBack: number;
  /** Of those, the ones kept for their history only (`keepHistoryAfter`). */
  heldForHistory: number;
  /** The cursors to give the next batch. */
  cursors: RuleCursor[];
  /** Every rule ran out of candidates: the pass is over. */
  done: boolean;
}

/** Empty {@link PurgeCounts}. */
export function noPurge(): PurgeCounts {
  return { instances: 0, nodeStates: 0, schedule: 0, deadLetters: 0, history: 0, events: 0, children: 0 };
}

/** Adds `b` into `a`. */
export function addPurge(a: PurgeCounts, b: PurgeCounts): void {
  for (const k of Object.keys(a) as (keyof PurgeCounts)[]) a[k] += b[k];
}

/** Groups tree members by root. */
function byRoot(members: readonly TreeMember[]): Map<number, TreeMember[]> {
  const out = new Map<number, TreeMember[]>();
  for (const m of members) {
    const list = out.get(m.rootId);
    if (list) list.push(m);
    else out.set(m.rootId, [m]);
  }
  return out;
}

/**
 * One batch of a prune, in the caller's write transaction: up to `limit` root instances matched
 * by the rules (in rule order, each from its cursor on), their trees locked without waiting and
 * read again, and the trees that may go deleted (or measured, dry).
 */
export function pruneBatch(q: Queries, input: PruneBatchInput): PruneBatchResult {
  const cursors = [...input.cursors];
  const limit = Math.max(1, Math.floor(input.limit));
  const roots: number[] = [];
  let done = true;
  for (let i = 0; i < input.rules.length; i++) {
    const rule = input.rules[i] as PruneRule;
    const want = limit - roots.length;
    if (want <= 0) {
      done = false;
      break;
    }
    const at = cursors[i] ?? { afterId: 0 };
    const upToId = at.upToId ?? q.retention.newestEnded({ status: rule.status, endedBefore: rule.endedBefore }) ?? 0;
    const ids = q.retention.candidates({ ...rule, afterId: at.afterId, upToId, limit: want });
    roots.push(...ids);
    cursors[i] = { afterId: ids.length > 0 ? (ids[ids.length - 1] as number) : at.afterId, upToId };
    if (ids.length === want) done = false;
  }
  const byStatus: Record<EndedStatus, number> = { COMPLETED: 0, FAILED: 0, CANCELLED: 0 };
  if (roots.length === 0) return { deleted: noPurge(), byStatus, heldBack: 0, heldForHistory: 0, cursors, done };
  const locked = new Set(q.retention.tryLock(q.retention.trees(roots).map((m) => m.id)));
  // Read again under the locks: what another transaction changed meanwhile (a retry reopening an
  // instance, a child started) is seen now.
  const trees = byRoot(q.retention.trees(roots));
  const ids: number[] = [];
  let heldBack = 0;
  let heldForHistory = 0;
  for (const root of roots) {
    const members = trees.get(root);
    if (!members) continue; // deleted meanwhile by another prune
    const open = members.some((m) => !isTerminal(m.status) || !locked.has(m.id));
    const unread = input.keepHistoryAfter !== undefined && members.some((m) => m.lastHistoryId !== null && m.lastHistoryId > (input.keepHistoryAfter as number));
    if (open || unread) {
      heldBack++;
      if (unread && !open) heldForHistory++;
      continue;
    }
    for (const m of members) {
      ids.push(m.id);
      byStatus[m.status as EndedStatus]++;
    }
  }
  const deleted = input.dryRun ? q.retention.measure(ids) : q.retention.purge(ids);
  return { deleted, byStatus, heldBack, heldForHistory, cursors, done };
}

/**
 * Deletes one ended instance with everything it owns, and the child instances its nodes started
 * (all of them ended). Nothing else changes: its workflow, other instances and their history stay.
 *
 * @throws EngineError NOT_FOUND (no such instance); INVALID_STATE (it is live, one of its child
 *   instances is live, or it is itself a child instance: a child goes with its parent); CONFLICT
 *   (it owns history with an id above `keepHistoryAfter`, not yet read by a change-feed consumer).
 */
export function deleteInstance(q: Queries, id: number, options: { keepHistoryAfter?: number } = {}): PurgeCounts {
  // `head` takes the instance's lock on PostgreSQL (waiting for a transaction that holds it).
  const head = q.instances.head(id);
  if (!head) throw new EngineError('NOT_FOUND', `instance ${id} does not exist`, { details: { field: 'id', id } });
  if (head.parentId !== null) {
    throw new EngineError(
      'INVALID_STATE',
      `instance ${id} is a child instance of instance ${head.parentId}: it is deleted with its parent, not on its own`,
      { details: { id, parentId: head.parentId } },
    );
  }
  if (!isTerminal(head.status)) {
    throw new EngineError('INVALID_STATE', `instance ${id} is ${head.status}: only an ended instance (COMPLETED, FAILED or CANCELLED) can be deleted`, {
      details: { id, status: head.status },
    });
  }
  for (const m of q.retention.trees([id])) if (m.id !== id) q.instances.head(m.id);
  const members = q.retention.trees([id]);
  const live = members.find((m) => !isTerminal(m.status));
  if (live) {
    throw new EngineError('INVALID_STATE', `instance ${id} has a child instance that is live (instance ${live.id} is ${live.status}): it can be deleted once that one has ended`, {
      details: { id, childId: live.id, status: live.status },
    });
  }
  const after = options.keepHistoryAfter;
  if (after !== undefined && members.some((m) => m.lastHistoryId !== null && m.lastHistoryId > after)) {
    throw new EngineError('CONFLICT', `instance ${id} owns history not yet read by every change-feed consumer (ids above ${after}): it is kept until they have`, {
      details: { id, keepHistoryAfter: after },
    });
  }
  const counts = q.retention.purge(members.map((m) => m.id));
  q.retention.reclaim();
  return counts;
}
