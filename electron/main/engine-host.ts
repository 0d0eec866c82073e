/**
 * The main process's handle on the engine worker thread: starts it on a database file, routes
 * contract calls to it and back, forwards its event batches, and shuts it down gracefully.
 *
 * No `electron` import: tests start a real worker (through tsx) on a temp database.
 */
import { Worker } from 'node:worker_threads';
import { err, type EventBatch, type Result } from '../../engine/api/contract';
import type { EngineWorkerData, FromEngine, ToEngine } from './engine-protocol';

/** Options of {@link EngineHost.start}. */
export interface EngineHostOptions extends EngineWorkerData {
  /** The worker script: `dist-electron/engine-worker.js`, or the `.ts` source in tests. */
  workerUrl: URL;
  /** Extra Node flags for the worker (tests pass `['--import', 'tsx']`). */
  execArgv?: string[];
  /** Receives every event batch, in order. */
  onEvents?: (batch: EventBatch) => void;
  /** Called once if the worker ends without being asked to (a crash). */
  onUnexpectedExit?: (error: Error) => void;
  /** Longest wait for the worker to open the database, ms. Default 30 000. */
  startTimeoutMs?: number;
}

/** A running engine worker. */
export class EngineHost {
  /** The database file the worker has open. */
  readonly dbPath: string;
  private readonly worker: Worker;
  private readonly pending = new Map<number, (result: Result<unknown>) => void>();
  private nextId = 1;
  private closing: Promise<void> | undefined;
  private exited = false;

  private constructor(worker: Worker, dbPath: string) {
    this.worker = worker;
    this.dbPath = dbPath;
  }

  /**
   * Starts a worker on `options.dbPath` and resolves once its database is open and its worker
   * loop runs.
   *
   * @throws Error with the worker's `code: message` when the engine cannot open the file
   *   (DATABASE_CORRUPT, DATABASE_NEWER, …), or when it does not start within `startTimeoutMs`.
   */
  static start(options: EngineHostOptions): Promise<EngineHost> {
    const data: EngineWorkerData = { dbPath: options.dbPath };
    if (options.pollIntervalMs !== undefined) data.pollIntervalMs = options.pollIntervalMs;
    if (options.shutdownGraceMs !== undefined) data.shutdownGraceMs = options.shutdownGraceMs;
    if (options.nativeBinding !== undefined) data.nativeBinding = options.nativeBinding;
    const worker = new Worker(options.workerUrl, { workerData: data, execArgv: options.execArgv ?? [], name: 'runnel-engine' });
    const host = new EngineHost(worker, options.dbPath);
    return new Promise<EngineHost>((resolve, reject) => {
      let started = false;
      const timer = setTimeout(() => {
        if (started) return;
        void worker.terminate();
        reject(new Error(`the engine worker did not start within ${options.startTimeoutMs ?? 30_000} ms`));
      }, options.startTimeoutMs ?? 30_000);
      worker.on('message', (message: FromEngine) => {
        switch (message.type) {
          case 'ready':
            started = true;
            clearTimeout(timer);
            resolve(host);
            break;
          case 'fatal':
            clearTimeout(timer);
            if (!started) reject(new Error(`${message.error.code}: ${message.error.message}`));
            break;
          case 'result': {
            const settle = host.pending.get(message.id);
            host.pending.delete(message.id);
            settle?.(message.result);
            break;
          }
          case 'events':
            options.onEvents?.(message.batch);
            break;
          case 'closed':
            break;
        }
      });
      worker.on('error', (error) => {
        clearTimeout(timer);
        if (!started) reject(error);
        else if (!host.closing) options.onUnexpectedExit?.(error);
      });
      worker.on('exit', (code) => {
        clearTimeout(timer);
        host.exited = true;
        host.failPending('the engine worker stopped');
        if (!started) reject(new Error(`the engine worker exited with code ${code} before it started`));
        else if (!host.closing) options.onUnexpectedExit?.(new Error(`the engine worker exited with code ${code}`));
      });
    });
  }

  /**
   * Sends a contract call to the worker; resolves with its result. Never rejects: a stopped or
   * stopping worker gives `INTERNAL` / `CANCELLED` results.
   */
  invoke(channel: string, payload: unknown): Promise<Result<unknown>> {
    if (this.exited) return Promise.resolve(err('INTERNAL', 'the engine is not running'));
    if (this.closing) return Promise.resolve(err('CANCELLED', 'the engine is shutting down'));
    const id = this.nextId++;
    return new Promise<Result<unknown>>((resolve) => {
      this.pending.set(id, resolve);
      try {
        this.post({ type: 'invoke', id, channel, payload });
      } catch (error) {
        // Payloads that cannot be cloned (functions, symbols) never reach the worker.
        this.pending.delete(id);
        resolve(err('BAD_REQUEST', `the payload cannot be sent: ${error instanceof Error ? error.message : String(error)}`));
      }
    });
  }

  /** Number of calls waiting for their result. */
  get pendingCount(): number {
    return this.pending.size;
  }

  /**
   * Graceful shutdown: the worker stops claiming work, lets running handlers finish within its
   * grace period (then aborts them and releases their leases), checkpoints and closes the file.
   * After `timeoutMs` (default 15 000) the thread is terminated; SQLite's WAL keeps the file
   * consistent and the leases expire on their own. Idempotent.
   */
  close(timeoutMs = 15_000): Promise<void> {
    if (this.closing) return this.closing;
    this.closing = new Promise<void>((resolve) => {
      if (this.exited) {
        resolve();
        return;
      }
      const timer = setTimeout(() => void this.worker.terminate(), timeoutMs);
      this.worker.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      try {
        this.post({ type: 'shutdown' });
      } catch {
        void this.worker.terminate();
      }
    });
    return this.closing;
  }

  private post(message: ToEngine): void {
    this.worker.postMessage(message);
  }

  private failPending(message: string): void {
    for (const settle of this.pending.values()) settle(err('INTERNAL', message));
    this.pending.clear();
  }
}
