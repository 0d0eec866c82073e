/**
 * Coalesces engine events into {@link EventBatch}es so a busy engine (10,000 changes a second)
 * does not flood a window: at most one batch per interval, status changes merged to the latest
 * per instance and per node, and the events a person must see never dropped.
 */
import type { EngineEvent } from '../runtime/events';
import type { ContractEvent, EventBatch } from './contract';

/** Options of {@link EventBatcher}. */
export interface EventBatcherOptions {
  /** Least time between two batches, in ms (default 100). */
  intervalMs?: number;
  /** Receives each batch. A throw is caught and logged; batching goes on. */
  onBatch: (batch: EventBatch) => void;
}

/**
 * Buffers events and hands them out in batches, at most one every `intervalMs`.
 *
 * Within a batch:
 * - `instance.changed` keeps only the latest status per instance, and `node.changed` the latest
 *   per (instance, node); a repeated change moves to the position of its latest occurrence, so
 *   replaying a batch in order ends in the latest state (a retry's RUNNING after a FAILED finish);
 * - `instance.created`, `instance.finished` and `approval.requested` are never merged or dropped;
 * - `store.changed` (another process changed the file) is kept once per batch;
 * - `operation.progress` keeps only the latest per operation;
 * - engine-internal events (`clock.jumped`) are not forwarded.
 *
 * Throttled, not debounced: the first event after a quiet spell goes out on the next turn of the
 * event loop (with whatever else was pushed in the same turn); later ones wait until `intervalMs`
 * after the previous batch, so a steady stream gets one batch per interval and never waits longer.
 */
export class EventBatcher {
  readonly intervalMs: number;
  private readonly onBatch: (batch: EventBatch) => void;
  /** Pending events by coalescing key; Map order is batch order. */
  private pending = new Map<string, ContractEvent>();
  private unique = 0;
  private coalesced = 0;
  private seq = 0;
  private lastFlushAt = Number.NEGATIVE_INFINITY;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private closed = false;

  constructor(options: EventBatcherOptions) {
    this.intervalMs = Math.max(0, options.intervalMs ?? 100);
    this.onBatch = options.onBatch;
  }

  /** Adds an event (an engine event or a contract event); ignored after {@link close}. */
  push(event: EngineEvent | ContractEvent): void {
    if (this.closed) return;
    let key: string;
    switch (event.type) {
      case 'instance.changed':
        key = `i\u0000${event.instanceId}`;
        break;
      case 'node.changed':
        key = `n\u0000${event.instanceId}\u0000${event.nodeId}`;
        break;
      case 'instance.created':
      case 'instance.finished':
      case 'approval.requested':
        key = `u\u0000${this.unique++}`;
        break;
      case 'store.changed':
        key = 's';
        break;
      case 'operation.progress':
        key = `p\u0000${event.operation}`;
        break;
      default:
        return;
    }
    if (this.pending.delete(key)) this.coalesced++;
    this.pending.set(key, toContractEvent(event));
    this.schedule();
  }

  /** Events waiting for the next batch. */
  get pendingCount(): number {
    return this.pending.size;
  }

  /** Hands out the pending events now (if any), whatever the interval. */
  flush(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.pending.size === 0) return;
    const batch: EventBatch = {
      seq: ++this.seq,
      events: [...this.pending.values()],
      coalesced: this.coalesced,
    };
    this.pending = new Map();
    this.coalesced = 0;
    this.lastFlushAt = Date.now();
    try {
      this.onBatch(batch);
    } catch (e) {
      console.error('runnel: an event batch listener threw', e);
    }
  }

  /** Flushes what is pending, then ignores further events. */
  close(): void {
    this.flush();
    this.closed = true;
  }

  private schedule(): void {
    if (this.timer !== undefined) return;
    // min(): a clock set back must not hold a batch for longer than one interval.
    const wait = Math.min(this.intervalMs, Math.max(0, this.lastFlushAt + this.intervalMs - Date.now()));
    const timer = setTimeout(() => {
      this.timer = undefined;
      this.flush();
    }, wait);
    // A pending batch must not keep a process alive on its own.
    (timer as { unref?: () => void }).unref?.();
    this.timer = timer;
  }
}

/** `{ test: true }` when the event is about a test run, else nothing (the contract's field is absent then). */
function testOf(e: { test?: true }): { test?: true } {
  return e.test === true ? { test: true } : {};
}

/** An engine event as the contract carries it (only the contract's fields: no internals leak). */
function toContractEvent(e: EngineEvent | ContractEvent): ContractEvent {
  switch (e.type) {
    case 'instance.created':
      return { type: e.type, instanceId: e.instanceId, workflow: e.workflow, version: e.version, ...testOf(e) };
    case 'instance.changed':
    case 'instance.finished':
      return { type: e.type, instanceId: e.instanceId, status: e.status, ...testOf(e) };
    case 'node.changed':
      return {
        type: e.type,
        instanceId: e.instanceId,
        nodeId: e.nodeId,
        status: e.status,
        ...(e.attempt === undefined ? {} : { attempt: e.attempt }),
        ...testOf(e),
      };
    case 'approval.requested':
      return { type: e.type, instanceId: e.instanceId, nodeId: e.nodeId, ...(e.prompt === undefined ? {} : { prompt: e.prompt }), ...testOf(e) };
    case 'store.changed':
      return { type: e.type };
    case 'operation.progress':
      return { type: e.type, operation: e.operation, done: e.done, total: e.total, unit: e.unit };
    default:
      throw new Error(`not a contract event: ${(e as { type: string }).type}`);
  }
}

/**
 * Batches `engine`'s events into `onBatch`; returns the stopper (which flushes what is pending).
 *
 * One batcher per host: every window or SSE client gets the same batches.
 */
export function batchEngineEvents(
  engine: { on(listener: (e: EngineEvent) => void): () => void },
  onBatch: (batch: EventBatch) => void,
  intervalMs?: number,
): () => void {
  const batcher = new EventBatcher({ onBatch, ...(intervalMs === undefined ? {} : { intervalMs }) });
  const off = engine.on((e) => batcher.push(e));
  return () => {
    off();
    batcher.close();
  };
}
