// Runs electron/main/engine-worker.ts in a worker thread from its TypeScript source: tsx's hooks
// must be registered inside the thread before the entry is imported (execArgv `--import tsx`
// does not cover a worker's own entry file).
import { register } from 'tsx/esm/api';

register();
await import('../../electron/main/engine-worker.ts');
