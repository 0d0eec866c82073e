/**
 * Messages between the main process and the engine worker thread (`engine-worker.ts`).
 *
 * The engine, its worker loop and SQLite run in a `worker_threads` Worker so a busy engine never
 * blocks the window's IPC; the main thread only routes. Every request carries an id; its reply
 * carries the same id and a contract `Result` (errors as data, never a thrown clone).
 */
import type { EventBatch, Result } from '../../engine/api/contract';

/** What the worker is started with (`workerData`). */
export interface EngineWorkerData {
  /** Absolute path of the database file (created and migrated if missing). */
  dbPath: string;
  /** Worker-loop poll interval, ms (tests shorten it). Default: the engine's. */
  pollIntervalMs?: number;
  /** Longest wait for running handlers at shutdown before their leases are released, ms. */
  shutdownGraceMs?: number;
  /** A better-sqlite3 addon built for this runtime's ABI (Electron in development; see native-binding.ts). */
  nativeBinding?: string;
}

/** Main → worker. */
export type ToEngine =
  /** Dispatch `payload` on contract channel `channel` (parsed by the contract in the worker). */
  | { type: 'invoke'; id: number; channel: string; payload: unknown }
  /** Stop claiming, let running handlers finish (or release their leases), checkpoint, close. */
  | { type: 'shutdown' };

/** Worker → main. */
export type FromEngine =
  /** The database is open and the worker loop runs. */
  | { type: 'ready'; dbPath: string }
  /** The engine could not start (corrupt or newer database, unwritable folder). */
  | { type: 'fatal'; error: { code: string; message: string } }
  /** The reply to `invoke` number `id`. */
  | { type: 'result'; id: number; result: Result<unknown> }
  /** Coalesced engine events (at most every ~100 ms). */
  | { type: 'events'; batch: EventBatch }
  /** Shutdown finished: the file is checkpointed and closed. */
  | { type: 'closed' };
