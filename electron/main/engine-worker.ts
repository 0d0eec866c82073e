/**
 * The engine worker thread: opens the database, runs the worker loop, dispatches contract calls
 * (the contract parses every payload before a handler runs) and posts coalesced event batches.
 *
 * Runs inside a `worker_threads` Worker started by `engine-host.ts`, so SQLite and the handlers
 * never block the main process's event loop (and with it the window's IPC). No `electron` import.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { Engine } from '../../engine/runtime/engine';
import { createDispatcher, createHandlers } from '../../engine/api/handlers';
import { batchEngineEvents } from '../../engine/api/event-batcher';
import { err } from '../../engine/api/contract';
import { serializeError } from '../../engine/errors';
import type { EngineWorkerData, FromEngine, ToEngine } from './engine-protocol';

const port = parentPort;
if (!port) throw new Error('engine-worker.ts must run in a worker thread');
const data = workerData as EngineWorkerData;

function post(message: FromEngine): void {
  port?.postMessage(message);
}

let engine: Engine;
try {
  engine = Engine.open(data.dbPath, {
    ...(data.pollIntervalMs === undefined ? {} : { pollIntervalMs: data.pollIntervalMs }),
    ...(data.nativeBinding === undefined ? {} : { nativeBinding: data.nativeBinding }),
  });
} catch (error) {
  const e = serializeError(error);
  post({ type: 'fatal', error: { code: e.code, message: e.message } });
  process.exit(1);
}

const dispatch = createDispatcher(createHandlers(engine));
const stopEvents = batchEngineEvents(engine, (batch) => post({ type: 'events', batch }));
// Another process (a CLI deploy, a demo run) changing the file must reach the window too.
const stopWatch = engine.watchExternalChanges();
let closing = false;
const running = new Set<Promise<void>>();

port.on('message', (message: ToEngine) => {
  if (message.type === 'invoke') {
    if (closing) {
      post({ type: 'result', id: message.id, result: err('CANCELLED', 'the engine is shutting down') });
      return;
    }
    const call = dispatch(message.channel, message.payload).then(
      (result) => post({ type: 'result', id: message.id, result }),
      // dispatch never rejects; this guards a failed postMessage (an uncloneable value).
      (error: unknown) => post({ type: 'result', id: message.id, result: err('INTERNAL', serializeError(error).message) }),
    );
    running.add(call);
    void call.finally(() => running.delete(call));
    return;
  }
  if (message.type === 'shutdown' && !closing) {
    closing = true;
    void shutdown();
  }
});

async function shutdown(): Promise<void> {
  try {
    // Calls already dispatched finish first (their writes commit), then the worker loop stops
    // claiming, lets running handlers finish within the grace period, aborts the rest and
    // releases their leases; close() checkpoints the WAL and closes the file.
    await Promise.allSettled([...running]);
    await engine.stopWorker(data.shutdownGraceMs);
    stopWatch();
    stopEvents();
    await engine.close();
  } catch (error) {
    console.error('runnel: engine shutdown failed', serializeError(error).message);
  }
  post({ type: 'closed' });
  port?.close();
}

engine.startWorker();
post({ type: 'ready', dbPath: data.dbPath });
