/**
 * Engine events: what hosts forward to windows (instance created / changed / finished, node
 * changed, approval requested). Emitted only after the transaction that caused them committed.
 */

/** One engine event. `status` is the instance's or the node's status after the change. */
export type EngineEvent =
  | { type: 'instance.created'; instanceId: number; workflow: string; version: number }
  | { type: 'instance.changed'; instanceId: number; status: string }
  | { type: 'instance.finished'; instanceId: number; status: string }
  | { type: 'node.changed'; instanceId: number; nodeId: string; status: string; attempt?: number }
  | { type: 'approval.requested'; instanceId: number; nodeId: string; prompt?: string }
  | { type: 'clock.jumped'; fromMs: number; toMs: number }
  /**
   * Another connection (another process, or another engine on the same file) committed a change:
   * what changed is unknown, so whoever shows data reloads what it shows. Emitted by
   * `Engine.watchExternalChanges`; never caused by this engine's own writes.
   */
  | { type: 'store.changed' };

/** A listener of {@link EngineEvent}s. Listeners must not throw; a throw is caught and logged. */
export type EngineListener = (event: EngineEvent) => void;

/** A tiny synchronous event hub. */
export class EventHub {
  private readonly listeners = new Set<EngineListener>();

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
