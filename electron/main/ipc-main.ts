/**
 * Binds the contract (and the desktop-only channels) to `ipcMain`: one `handle` per allow-listed
 * channel, every sender checked against the app's own windows before anything else, results as
 * data. The only module that touches `ipcMain` (GitHub Desktop's pattern, STYLE.md).
 */
import { ipcMain, type BrowserWindow, type IpcMainInvokeEvent } from 'electron';
import { channels, err, type EventBatch, type Result } from '../../engine/api/contract';
import { desktopChannels, type DesktopHandlers } from '../shared/desktop-contract';
import type { DesktopCommand } from '../shared/commands';
import { COMMAND_CHANNEL, EVENTS_CHANNEL } from '../preload/bridge';
import { dispatchDesktop } from './desktop-handlers';
import { isTrustedSender } from './security';

/** What the IPC layer routes to. */
export interface IpcRoutes {
  /** The app's own windows, at the time of the call. */
  windows(): readonly BrowserWindow[];
  /** Contract calls: forwarded to the engine worker (which parses the payload first). */
  invokeEngine(channel: string, payload: unknown): Promise<Result<unknown>>;
  /** Desktop-only calls, handled here in main. */
  desktopHandlers: DesktopHandlers;
  /** The dev server's URL in development (trusted like the app's own pages), else undefined. */
  devServerUrl?: string;
}

function trusted(event: IpcMainInvokeEvent, routes: IpcRoutes): boolean {
  const ids = new Set(routes.windows().map((w) => w.webContents.id));
  const frame = event.senderFrame;
  return isTrustedSender({ frameUrl: frame?.url, isMainFrame: frame !== null && frame.parent === null, webContentsId: event.sender.id }, ids, routes.devServerUrl);
}

/**
 * Registers a handler for every contract and desktop channel. Returns the unregisterer (used when
 * tests or a database switch rebind the routes).
 */
export function registerIpc(routes: IpcRoutes): () => void {
  const forbidden = (channel: string): Result<unknown> => err('FORBIDDEN', `${channel}: the sender is not one of the app's windows`);
  for (const channel of channels) {
    ipcMain.handle(channel, (event, payload: unknown) => (trusted(event, routes) ? routes.invokeEngine(channel, payload) : Promise.resolve(forbidden(channel))));
  }
  for (const channel of desktopChannels) {
    ipcMain.handle(channel, (event, payload: unknown) =>
      trusted(event, routes) ? dispatchDesktop(routes.desktopHandlers, channel, payload) : Promise.resolve(forbidden(channel)),
    );
  }
  return () => {
    for (const channel of [...channels, ...desktopChannels]) ipcMain.removeHandler(channel);
  };
}

/** Sends an event batch to every live window. */
export function broadcastEvents(windows: readonly BrowserWindow[], batch: EventBatch): void {
  for (const w of windows) if (!w.isDestroyed()) w.webContents.send(EVENTS_CHANNEL, batch);
}

/** Sends a menu command to one window. */
export function sendCommand(window: BrowserWindow | undefined, command: DesktopCommand): void {
  if (window && !window.isDestroyed()) window.webContents.send(COMMAND_CHANNEL, command);
}
