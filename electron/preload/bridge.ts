/**
 * The object the preload exposes as `window.runnel`, built from an `ipcRenderer`-like object so
 * tests can drive it without Electron (Camunda Modeler's preload pattern, STYLE.md):
 *
 * - `invoke` passes only allow-listed channels (the contract's plus the desktop-only ones); any
 *   other name comes back as an `UNKNOWN_CHANNEL` result without touching IPC;
 * - results cross as data; a rejected `ipcRenderer.invoke` (Electron keeps only an error's
 *   message across `invoke`) is turned into an `INTERNAL` result here, by hand;
 * - listeners get the payload only, never Electron's event object (it would leak `sender`).
 */
import { err, isChannel, type EventBatch, type Invoke, type Result } from '../../engine/api/contract';
import { isDesktopChannel, type DesktopInvoke } from '../shared/desktop-contract';
import { isDesktopCommand, type DesktopCommand } from '../shared/commands';

/** IPC channel of event batches, main → renderer. */
export const EVENTS_CHANNEL = 'runnel:events';

/** IPC channel of menu commands, main → renderer. */
export const COMMAND_CHANNEL = 'runnel:command';

/** The API the preload exposes to the page as `window.runnel`. */
export interface RunnelBridge {
  /**
   * Calls a contract channel (or a desktop-only one: `file:openWorkflow`, `file:saveWorkflow`,
   * `app:info`). Never rejects: failures are `{ ok: false, error }`.
   */
  invoke: Invoke & DesktopInvoke;
  /** Subscribes to the engine's event batches; returns the unsubscriber. */
  onEvent(listener: (batch: EventBatch) => void): () => void;
  /** Subscribes to app-menu commands; returns the unsubscriber. */
  onCommand(listener: (command: DesktopCommand) => void): () => void;
}

/** The part of Electron's `ipcRenderer` the bridge uses. */
export interface IpcRendererLike {
  invoke(channel: string, ...args: unknown[]): Promise<unknown>;
  on(channel: string, listener: (event: unknown, ...args: unknown[]) => void): unknown;
  removeListener(channel: string, listener: (event: unknown, ...args: unknown[]) => void): unknown;
}

function isResult(value: unknown): value is Result<unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const r = value as { ok?: unknown; error?: unknown };
  if (r.ok === true) return 'value' in r;
  if (r.ok !== false || typeof r.error !== 'object' || r.error === null) return false;
  const e = r.error as { code?: unknown; message?: unknown };
  return typeof e.code === 'string' && typeof e.message === 'string';
}

function isEventBatch(value: unknown): value is EventBatch {
  return typeof value === 'object' && value !== null && Array.isArray((value as { events?: unknown }).events);
}

/** Whether `name` may pass the preload: a contract channel or a desktop-only channel. */
export function isAllowedChannel(name: unknown): boolean {
  return isChannel(name) || isDesktopChannel(name);
}

/** Builds the `window.runnel` object over `ipc` (Electron's `ipcRenderer` in the preload). */
export function createBridge(ipc: IpcRendererLike): RunnelBridge {
  const invoke = async (channel: string, payload?: unknown): Promise<Result<unknown>> => {
    if (!isAllowedChannel(channel)) return err('UNKNOWN_CHANNEL', `unknown channel ${JSON.stringify(String(channel)).slice(0, 120)}`);
    try {
      const result = await ipc.invoke(channel, payload);
      return isResult(result) ? result : err('INTERNAL', `the main process sent a malformed result for ${channel}`);
    } catch (error) {
      // Only the message survives Electron's invoke; it may carry an "Error invoking remote
      // method" prefix, which is kept: it tells a developer where the failure came from.
      return err('INTERNAL', error instanceof Error ? error.message : String(error));
    }
  };
  const subscribe = <T>(ipcChannel: string, accept: (value: unknown) => value is T, listener: (value: T) => void): (() => void) => {
    const wrapped = (_event: unknown, value: unknown): void => {
      if (accept(value)) listener(value);
    };
    ipc.on(ipcChannel, wrapped);
    return () => void ipc.removeListener(ipcChannel, wrapped);
  };
  return {
    invoke: invoke as RunnelBridge['invoke'],
    onEvent: (listener) => subscribe(EVENTS_CHANNEL, isEventBatch, listener),
    onCommand: (listener) => subscribe(COMMAND_CHANNEL, isDesktopCommand, listener),
  };
}
