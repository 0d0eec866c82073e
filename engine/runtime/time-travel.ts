/**
 * Time travel (issue 14, seed v3): an instance rebuilt as it was right after one of its history
 * entries, from the state patches every transition recorded (engine/store/history-state.ts).
 *
 * Every entry of one write transaction stands at the state that transaction committed: no reader
 * ever saw a state between two entries of one transaction.
 */
import type { HistoryEvent, InstanceDetail, NodeState } from '../api/contract';
import { EngineError, type SerializedError } from '../errors';
import type { CompiledWorkflow } from './compiled';
import type { ForkNode } from './state-machine/fork';
import type { InstanceView, StorageBackend } from '../store/port';
import { decodeStatus, foldStates, type StateDoc } from '../store/history-state';

/** Where time travel stands: a history id (or its decimal text), or an ISO 8601 time (the last entry at or before it). */
export type HistoryPoint = number | string;

/** An instance as it was at a history entry, and that entry. */
export interface InstanceAt {
  /** The entry it stands at. */
  at: HistoryEvent;
  /** Where that entry is in the instance's history: 1-based, of `entries`. */
  position: number;
  entries: number;
  /**
   * The instance as it was (the `instance:get` shape). Rebuilt: `status`, `variables`, `error`,
   * `suspension`, `pausedAt`, `held`, `startedAt`, `endedAt` and every node's state (status,
   * attempt, maxAttempts, output, error, wait, completedSeq, startedAt, endedAt; `nextRunAt`
   * from the timer, retry or time limit a WAITING or RETRYING node waits for). As now (they never change, or
   * are not recorded): the ids, workflow, `businessKey`, `input`, `createdAt`, `deadlineAt`,
   * `priority`, `version`. `updatedAt` is the entry's time, or the instance's last update when that
   * is earlier; `children` is absent.
   */
  instance: InstanceDetail;
}

/** `at` as the read model takes it. @throws EngineError INVALID_INPUT (field `at`) when it is neither a history id nor an ISO time. */
export function parseHistoryPoint(at: HistoryPoint): { historyId: number } | { atMs: number } {
  if (typeof at === 'number') {
    if (Number.isSafeInteger(at) && at > 0) return { historyId: at };
  } else {
    const text = at.trim();
    if (/^\d+$/.test(text)) {
      const n = Number(text);
      if (Number.isSafeInteger(n) && n > 0) return { historyId: n };
    } else if (/^\d{4}-\d{2}-\d{2}(T|$)/.test(text)) {
      const ms = Date.parse(text);
      if (Number.isFinite(ms)) return { atMs: ms };
    }
  }
  throw new EngineError('INVALID_INPUT', `at: ${JSON.stringify(at)} is neither a history id (a positive integer) nor an ISO 8601 time (e.g. 2026-12-02T16:00:00Z)`, {
    details: { field: 'at', value: at },
  });
}

const num = (v: unknown): number | null => (typeof v === 'number' ? v : null);

/** A time of the document (ms since the instance's creation `base`) as epoch ms, or null. */
const abs = (v: unknown, base: number): number | null => (typeof v === 'number' ? v + base : null);

/** The nodes of `doc` in the order of `order` (node ids; others after, by id); times relative to `base`. */
function nodesOf(doc: StateDoc, order: readonly string[], base: number): NodeState[] {
  const ids = [...order.filter((id) => id in doc.nodes), ...Object.keys(doc.nodes).filter((id) => !order.includes(id)).sort()];
  return ids.map((id) => {
    const n = doc.nodes[id] ?? {};
    const wait = n.w as { kind?: string; until?: number; timeoutAt?: number } | undefined;
    const due = wait?.until ?? wait?.timeoutAt;
    const status = decodeStatus(n.s) ?? 'PENDING';
    const node: NodeState = {
      id,
      status,
      attempt: num(n.a) ?? 0,
      maxAttempts: num(n.l) ?? 0,
      completedSeq: num(n.q),
      startedAt: abs(n.b, base),
      endedAt: abs(n.f, base),
      // As instance:get shows it: only a waiting node is due at a time (its timer, retry or time
      // limit; an ended node keeps its last wait, and is due at none).
      nextRunAt: (status === 'WAITING' || status === 'RETRYING') && typeof due === 'number' ? due : null,
    };
    if (Array.isArray(n.o)) node.output = n.o[0];
    if (n.e !== undefined) node.error = n.e;
    // As instance:get shows it: a failure an error edge handled waits for nothing.
    if (wait !== undefined && wait.kind !== 'handled') node.wait = wait;
    return node;
  });
}

/**
 * Instance `id` as it was right after history entry `at` (see {@link InstanceAt}).
 *
 * @throws EngineError NOT_FOUND (no such instance); INVALID_INPUT with `details.field` "at": `at`
 * is neither a history id nor an ISO time, or it names no entry of this instance (an id of
 * another instance's entry, or a time before its first entry: `details.range` gives the
 * instance's first and last entry).
 */
export async function stateAt(storage: StorageBackend, id: number, at: HistoryPoint): Promise<InstanceAt> {
  const { now, doc, entry, position, entries } = await loadState(storage, id, at);
  const i = doc.instance;
  const { children: _children, nodes: _nodes, ...fixed } = now;
  const instance: InstanceDetail = {
    ...fixed,
    status: decodeStatus(i.s) ?? now.status,
    variables: doc.variables,
    startedAt: abs(i.b, now.createdAt),
    endedAt: abs(i.f, now.createdAt),
    pausedAt: abs(i.p, now.createdAt),
    held: i.h === 1,
    // The entry's time, or the instance's last change when that came before (an entry that changed
    // nothing of the row, such as instance.forked).
    updatedAt: Math.min(entry.at, now.updatedAt),
    nodes: nodesOf(doc, now.nodes.map((n) => n.id), now.createdAt),
  };
  delete instance.error;
  delete instance.suspension;
  if (i.e !== undefined) instance.error = i.e;
  if (i.u !== undefined) instance.suspension = i.u;
  return { at: entry, position, entries, instance };
}

/** The instance as it is now, its state document at `at`, and the entry (see {@link stateAt}; throws as it does). */
export async function loadState(
  storage: StorageBackend,
  id: number,
  at: HistoryPoint,
): Promise<{ now: InstanceView; doc: StateDoc; entry: HistoryEvent; position: number; entries: number }> {
  const point = parseHistoryPoint(at);
  const now = await storage.read.instance(id);
  if (!now) throw new EngineError('NOT_FOUND', `instance ${id} does not exist`);
  const t = await storage.read.stateTimeline(id, point);
  if (!t.entry || !t.patches) {
    const r = t.range;
    // Every instance has its `instance.created` entry: none left means it was deleted since the read above.
    if (r.entries === 0 && !(await storage.read.instance(id))) throw new EngineError('NOT_FOUND', `instance ${id} does not exist`);
    const where =
      r.entries === 0
        ? 'it has no history'
        : `its history runs from entry ${r.firstId} (${new Date(r.firstAt ?? 0).toISOString()}) to entry ${r.lastId} (${new Date(r.lastAt ?? 0).toISOString()})`;
    const asked = 'historyId' in point ? `history entry ${point.historyId} is not one of instance ${id}'s` : `instance ${id} has no history entry at or before ${new Date(point.atMs).toISOString()}`;
    throw new EngineError('INVALID_INPUT', `at: ${asked}; ${where}`, { details: { field: 'at', value: at, range: r } });
  }
  return { now, doc: foldStates(t.patches, now.input ?? {}), entry: t.entry, position: t.position ?? 0, entries: t.range.entries };
}

/**
 * How a fork of `wf` starts from state `doc` (engine/runtime/state-machine/fork.ts): nodes done
 * at that entry keep their results and do not run — COMPLETED; SKIPPED; FAILED with the failure
 * handled by an error edge; and COMPENSATING or COMPENSATED, which had completed (the copy starts
 * from before the rollback) — and every other node runs: READY when all its incoming edges were
 * resolved (it had started, or was about to), else PENDING with the edges resolved then.
 */
export function planFork(doc: StateDoc, wf: CompiledWorkflow): ForkNode[] {
  const out: ForkNode[] = [];
  for (const node of wf.nodes.values()) {
    const n = doc.nodes[node.id] ?? {};
    const status = decodeStatus(n.s);
    const wait = n.w as { kind?: string } | undefined;
    const output = Array.isArray(n.o) ? (n.o[0] as unknown) : null;
    if (status === 'COMPLETED' || status === 'COMPENSATED' || status === 'COMPENSATING') {
      out.push({ nodeId: node.id, kind: 'completed', output, seq: num(n.q) ?? 0 });
    } else if (status === 'SKIPPED') {
      out.push({ nodeId: node.id, kind: 'skipped' });
    } else if (status === 'FAILED' && wait?.kind === 'handled') {
      out.push({ nodeId: node.id, kind: 'handled', error: n.e as SerializedError });
    } else {
      // A node the state does not know (none: every node is created with its instance) waits for all its edges.
      const pendingIn = status === undefined ? node.incoming.length : (num(n.i) ?? 0);
      const taken = status === undefined ? 0 : (num(n.t) ?? 0);
      if (pendingIn === 0) out.push({ nodeId: node.id, kind: 'ready' });
      else out.push({ nodeId: node.id, kind: 'pending', taken, notTaken: Math.max(0, node.incoming.length - pendingIn - taken) });
    }
  }
  return out;
}
