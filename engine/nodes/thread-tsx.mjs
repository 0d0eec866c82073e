// Starts a pool thread from the TypeScript sources (vitest, `node bin/runnel.js`): tsx's hooks
// must be registered inside the thread before its entry is imported, since a worker does not
// inherit its parent's loader hooks. The packaged app starts its bundled entry directly.
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.entry);
