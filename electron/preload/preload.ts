/**
 * The preload of the app's window: exposes `window.runnel` (see `bridge.ts`) through
 * `contextBridge`. Runs sandboxed, so it is bundled to CommonJS (`dist-electron/preload.cjs`) with
 * everything it needs except `electron`.
 */
import { contextBridge, ipcRenderer } from 'electron';
import { createBridge } from './bridge';

contextBridge.exposeInMainWorld('runnel', createBridge(ipcRenderer));
