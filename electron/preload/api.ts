/**
 * The type of `window.runnel` for the renderer: the renderer imports this module as a type
 * (`import type {} from '…/electron/preload/api'`), which also brings in the global declaration.
 * Generated from the bridge's own type, so there is no hand-kept `.d.ts` to drift.
 */
import type { RunnelBridge } from './bridge';

export type { RunnelBridge } from './bridge';

declare global {
  interface Window {
    /** Present only inside the desktop app (set by the preload through `contextBridge`). */
    runnel?: RunnelBridge;
  }
}
