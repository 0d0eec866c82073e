/**
 * Engine events: what hosts forward to windows (instance created / changed / finished, node
 * changed, approval requested). Emitted only after the transaction that caused them committed.
 * `worker.turn` is for this process's own observers (metrics, engine/runtime/metrics.ts) and is
 * never forwarded to windows (the contract has no such event).
 */
import type { Outcome } from './state-machine/outcome';

/**
 * One committed turn of this process's worker loop: how long it took and what it committed.
 * `turnMs` runs from the start of the turn to the end of its launches, `commitMs` is its write
 * transaction (the wait for the write lock, the transitions and the COMMIT); both wall-clock ms.
 * `outcomes` are the attempt ends the turn committed (shared with the worker: read, never change
 * them; a test run's say so in `step.test`); one whose claim was lost meanwhile (cancelled, or
 * taken over after its lease expired), or that failed to commit on its own in an isolated turn,
 * is among them though nothing was recorded for it — rare, and left uncounted apart. `committedAt` is the engine clock right after the
 * commit, epoch ms.
 */
export interface WorkerTurnEvent {
  type: 'worker.turn';
  turnMs: number;
  commitMs: number;
  committedAt: number;
  outcomes: readonly Outcome[];
  claimed: number;
}

/**
 * What every event about one instance carries: `test: true` when the instance is a test run
 * (`instance:start` with `test: true`, or a child instance of one), absent otherwise, so a
 * listener (the metrics, a window) can leave test runs out without reading the instance.
 */
export interface TestMark {
  test?: true;
}

/** One engine event. `status` is the instance's or the node's status after the change. */
export type EngineEvent =
  | ({ type: 'instance.created'; instanceId: number; workflow: string; version: number } & TestMark)
  | ({ type: 'instance.changed'; instanceId: number; status: string } & TestMark)
  | ({ type: 'instance.finished'; instanceId: number; status: string } & TestMark)
  | ({ type: 'node.changed'; instanceId: number; nodeId: string; status: string; attempt?: number } & TestMark)
  | ({ type: 'approval.requested'; instanceId: number; nodeId: string; prompt?: string } & TestMark)
  | { type: 'clock.jumped'; fromMs: number; toMs: number }
  /**
   * Another connection (another process, or another engine on the same file) committed a change:
   * what changed is unknown, so whoever shows data reloads what it shows. Emitted by
   * `Engine.watchExternalChanges`; never caused by this engine's own writes.
   */
  | { type: 'store.changed' }
  /**
   * A file operation started from the API (`database:backup`, `database:vacuum`) is `done` of
   * about `total` units along (bytes written, or free pages given back); emitted every few hundred
   * ms while it runs and once at its end.
   */
  | { type: 'operation.progress'; operation: 'backup' | 'vacuum'; done: number; total: number; unit: 'bytes' | 'pages' }
  | WorkerTurnEvent;

/** A listener of {@link EngineEvent}s. Listeners must not throw; a throw is caught and logged. */
export type EngineListener = (event: EngineEvent) => void;

/** A tiny synchronous event hub. */
export class EventHub {
  private readonly listeners = new Set<EngineListener>();

  /** Whether anybody listens (an event nobody hears need not be built). */
  get listening(): boolean {
    return this.listeners.size > 0;
  }

  /** Adds a listener; returns its remover. */
  on(listener: EngineListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Delivers `events` in order to every listener. */
  emit(events: readonly EngineEvent[]): void {
    if (events.length === 0 || this.listeners.size === 0) return;
    for (const e of events) {
      for (const l of this.listeners) {
        try {
          l(e);
        } catch (err) {
          console.error('runnel: an event listener threw', err);
        }
      }
    }
  }
}
