/**
 * "Why is it stuck": the instance list's extra columns (current nodes, attempt n of m, next retry,
 * what it waits for, since when, the suspension or failure reason), derived in one pass from the
 * row's current node states, which the list query gathers as JSON in the same statement.
 */
import type { WaitingFor } from '../../vocabulary';

/** What {@link describeStuck} reads of a list row. */
export interface StuckSource {
  status: string;
  /**
   * The instance's current node states as a JSON array of
   * `[node_id, status, attempt, attempt_limit, wait, started_at]` (open, compensating and failed
   * nodes; null for COMPLETED and CANCELLED instances).
   */
  nodes_json: string | null;
  suspension_json: string | null;
  error_json: string | null;
  /** 1 while it waits for a concurrency slot. */
  held?: number;
  /** Its workflow version's concurrency limit (read for a held row), or null. */
  concurrency_limit?: number | null;
  /** For a held row: how many instances of its slot are in progress (admitted, not ended). */
  concurrency_in_use?: number | null;
  created_at?: number;
}

/** "Why is it stuck": the list's extra columns, derived from {@link StuckSource.nodes_json}. Times are epoch ms. */
export interface StuckInfo {
  /** Node ids running, ready, waiting, retrying or compensating now; for FAILED and SUSPENDED instances, the failed ones. */
  currentNodes: string[];
  /** The attempt of the most telling current node (retrying before running before waiting), and its limit. */
  attempt: number | null;
  maxAttempts: number | null;
  /** When the next attempt of a retrying node is due. */
  nextRetryAt: number | null;
  waitingFor: WaitingFor | null;
  /** Since when it waits (the waiting node's start, or the suspension). */
  waitingSince: number | null;
  /** When the wait ends by itself: a timer's due time, an approval's timeout, the next retry. */
  waitingUntil: number | null;
  /** Why it is SUSPENDED or FAILED, as one line. */
  reason: string | null;
}


type NodeTuple = [string, string, number, number, { kind?: string; until?: number; timeoutAt?: number } | null, number | null];

/** Order in which current nodes are named: the most telling first. */
const STATUS_RANK: Record<string, number> = { RETRYING: 0, FAILED: 1, COMPENSATING: 2, RUNNING: 3, WAITING: 4, READY: 5 };

function errorMessage(error: unknown): string {
  if (typeof error === 'object' && error !== null) {
    const e = error as { code?: unknown; message?: unknown };
    const message = typeof e.message === 'string' ? e.message : JSON.stringify(error);
    return typeof e.code === 'string' ? `${e.code}: ${message}` : message;
  }
  return String(error);
}

/** What a WAITING node's wait kind says the instance waits for, and how much it tells (higher wins). */
const WAIT_RANK: Readonly<Record<string, number>> = { timer: 1, children: 2, event: 3, approval: 4 };

/**
 * The "why is it stuck" columns of a list row (see {@link StuckInfo}), from its status,
 * `nodes_json`, `suspension_json` and `error_json`. Pure: no query.
 */
export function describeStuck(row: StuckSource): StuckInfo {
  const out: StuckInfo = {
    currentNodes: [],
    attempt: null,
    maxAttempts: null,
    nextRetryAt: null,
    waitingFor: null,
    waitingSince: null,
    waitingUntil: null,
    reason: null,
  };
  const failedCount = row.status === 'FAILED' || row.status === 'SUSPENDED';
  const nodes = (row.nodes_json === null ? [] : (JSON.parse(row.nodes_json) as NodeTuple[]))
    .filter((n) => n[1] !== 'FAILED' || failedCount)
    .sort((a, b) => (STATUS_RANK[a[1]] ?? 9) - (STATUS_RANK[b[1]] ?? 9) || a[0].localeCompare(b[0]));
  out.currentNodes = nodes.map((n) => n[0]);
  const focus = nodes[0];
  if (focus) {
    out.attempt = focus[2];
    out.maxAttempts = focus[3];
  }
  for (const [, status, , , wait, startedAt] of nodes) {
    if (status === 'RETRYING' && typeof wait?.until === 'number') {
      out.nextRetryAt = out.nextRetryAt === null ? wait.until : Math.min(out.nextRetryAt, wait.until);
    }
    const rank = status === 'WAITING' && wait?.kind !== undefined ? (WAIT_RANK[wait.kind] ?? 0) : 0;
    // A person outranks an event, an event child instances, and those a timer: what it waits for most.
    if (rank > 0 && rank > (out.waitingFor === null ? 0 : (WAIT_RANK[out.waitingFor] ?? 0))) {
      out.waitingFor = wait?.kind as WaitingFor;
      out.waitingSince = startedAt;
      out.waitingUntil = (wait?.kind === 'timer' ? wait.until : wait?.timeoutAt) ?? null;
    }
  }
  if (out.waitingFor === null && out.nextRetryAt !== null && !nodes.some((n) => n[1] === 'RUNNING' || n[1] === 'READY')) {
    out.waitingFor = 'retry';
    out.waitingUntil = out.nextRetryAt;
  }
  if (row.status === 'SUSPENDED' && row.suspension_json !== null) {
    const s = JSON.parse(row.suspension_json) as { kind?: string; nodeId?: string; error?: unknown; attempts?: number; at?: number };
    out.waitingFor = 'person';
    out.waitingSince = s.at ?? null;
    out.waitingUntil = null;
    const what = s.kind === 'compensation' ? `compensation of "${s.nodeId ?? '?'}"` : `"${s.nodeId ?? '?'}"`;
    const tries = s.attempts === undefined ? '' : ` after ${s.attempts} attempt${s.attempts === 1 ? '' : 's'}`;
    out.reason = `${what} failed${tries}: ${errorMessage(s.error)}`;
    // The suspended step comes first; a failed compensation is what stands, not the failure that started the chain.
    const rest = out.currentNodes.filter((id) => id !== s.nodeId && (s.kind !== 'compensation' || !nodes.some((n) => n[0] === id && n[1] === 'FAILED')));
    out.currentNodes = s.nodeId === undefined ? rest : [s.nodeId, ...rest];
    // Attempt n of m is the suspended step's (a failed compensation used up all of its attempts).
    if (s.attempts !== undefined) {
      out.attempt = s.attempts;
      out.maxAttempts = s.kind === 'compensation' ? s.attempts : (nodes.find((n) => n[0] === s.nodeId)?.[3] ?? out.maxAttempts);
    }
  } else if (row.status === 'FAILED' && row.error_json !== null) {
    out.reason = errorMessage(JSON.parse(row.error_json));
  } else if (row.held === 1 && row.status === 'PENDING') {
    out.waitingFor = 'concurrency';
    out.waitingSince = row.created_at ?? null;
    out.waitingUntil = null;
    const limit = row.concurrency_limit;
    const inUse = row.concurrency_in_use;
    out.reason =
      typeof limit !== 'number'
        ? 'waiting for a concurrency slot'
        : typeof inUse === 'number'
          ? `concurrency limit (${inUse} of ${limit})`
          : `concurrency limit (of ${limit})`;
  }
  return out;
}

