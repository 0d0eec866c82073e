/**
 * The desktop app's main process: one window over the engine.
 *
 * Start-up: single-instance lock → `app://` scheme → the engine worker on the chosen database →
 * guards (protocol + CSP, permissions, navigation) → IPC → menu → window. Quit: the engine worker
 * stops claiming, lets running handlers finish or releases their leases, checkpoints and closes
 * the file before the process exits.
 *
 * The database is `<userData>/runnel.db` unless `--db FILE`, `RUNNEL_DB` or File → Open database…
 * says otherwise (see settings.ts).
 */
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { app, BrowserWindow, dialog, Notification } from 'electron';
import { isPostgresUrl, redactUrl } from '../../engine/db/postgres/errors';
import { electronNativeBinding } from '../native-binding';
import { createDesktopHandlers } from './desktop-handlers';
import { EngineHost } from './engine-host';
import { broadcastEvents, registerIpc, sendCommand } from './ipc-main';
import { installMenu } from './menu';
import { readSettings, resolveDatabasePath, writeSettings } from './settings';
import { createMainWindow, denyPermissions, guardAllWebContents, registerAppScheme, serveRenderer } from './window';

const here = path.dirname(fileURLToPath(import.meta.url));
const preloadPath = path.join(here, 'preload.cjs');
const workerUrl = new URL('./engine-worker.js', import.meta.url);
const devServerUrl = app.isPackaged ? undefined : process.env.RUNNEL_DEV_SERVER_URL || undefined;
const devTools = process.env.RUNNEL_DEVTOOLS !== '0';
// In development the installed better-sqlite3 is Node's build; `npm start` compiles an Electron
// one into a cache (electron/prepare-native.ts). A package carries its own Electron build.
const nativeBinding = ((): string | undefined => {
  if (app.isPackaged) return undefined;
  const file = electronNativeBinding(app.getAppPath(), process.versions.electron);
  return existsSync(file) ? file : undefined;
})();

let host: EngineHost | undefined;
let mainWindow: BrowserWindow | undefined;
let quitting: 'no' | 'shutting-down' | 'done' = 'no';

function windows(): BrowserWindow[] {
  return BrowserWindow.getAllWindows().filter((w) => !w.isDestroyed());
}

async function startEngine(dbPath: string): Promise<EngineHost> {
  return EngineHost.start({
    dbPath,
    workerUrl,
    ...(nativeBinding === undefined ? {} : { nativeBinding }),
    onEvents: (batch) => broadcastEvents(windows(), batch),
    onUnexpectedExit: (error) => {
      dialog.showErrorBox('Runnel: the engine stopped', `${error.message}\n\nThe app will close; your data is safe in ${dbPath}.`);
      app.quit();
    },
  });
}

/** `location` as the window shows it: a URL without its password, a file as it is. */
const redactLocation = (location: string): string => (isPostgresUrl(location) ? redactUrl(location) : location);

/**
 * Swaps the engine onto `location` (a file or a PostgreSQL URL) and remembers it; on failure the
 * previous database is reopened and the error rethrown. Resolves with where the engine is now.
 */
async function switchDatabase(location: string): Promise<string> {
  if (location === host?.dbPath) return location;
  const owner = mainWindow && !mainWindow.isDestroyed() ? mainWindow : undefined;
  const previous = host?.dbPath;
  await host?.close();
  host = undefined;
  try {
    host = await startEngine(location);
    writeSettings(app.getPath('userData'), { ...readSettings(app.getPath('userData')), databasePath: location });
  } catch (error) {
    if (previous !== undefined) host = await startEngine(previous);
    throw error;
  } finally {
    sendCommand(owner, 'database.changed');
  }
  return location;
}

/** File → Open database…: the native dialog, then {@link switchDatabase}; a failure is shown in a box. */
async function openDatabase(): Promise<void> {
  const owner = mainWindow && !mainWindow.isDestroyed() ? mainWindow : undefined;
  const options = {
    title: 'Open database',
    buttonLabel: 'Open',
    properties: ['openFile', 'promptToCreate'] as Array<'openFile' | 'promptToCreate'>,
    filters: [
      { name: 'Runnel database', extensions: ['db', 'sqlite', 'sqlite3'] },
      { name: 'All files', extensions: ['*'] },
    ],
  };
  const chosen = owner ? await dialog.showOpenDialog(owner, options) : await dialog.showOpenDialog(options);
  const file = chosen.filePaths[0];
  if (chosen.canceled || file === undefined) return;
  try {
    await switchDatabase(file);
  } catch (error) {
    dialog.showErrorBox('Runnel: cannot open the database', `${file}\n\n${error instanceof Error ? error.message : String(error)}`);
  }
}

async function shutdown(): Promise<void> {
  const current = host;
  host = undefined;
  await current?.close();
}

async function ready(): Promise<void> {
  const userData = app.getPath('userData');
  const dbPath = resolveDatabasePath({ argv: process.argv, env: process.env, settings: readSettings(userData), userDataDir: userData, cwd: process.cwd() });
  try {
    host = await startEngine(dbPath);
  } catch (error) {
    const hint = !app.isPackaged && nativeBinding === undefined ? '\n\nbetter-sqlite3 has no Electron build yet: start the app with `npm start`, which prepares one.' : '';
    dialog.showErrorBox('Runnel: cannot open the database', `${dbPath}\n\n${error instanceof Error ? error.message : String(error)}${hint}`);
    app.exit(1);
    return;
  }

  serveRenderer(path.join(app.getAppPath(), 'dist', 'renderer'));
  denyPermissions();
  registerIpc({
    windows,
    devServerUrl,
    invokeEngine: (channel, payload) => (host ? host.invoke(channel, payload) : Promise.resolve({ ok: false, error: { code: 'CANCELLED', message: 'the engine is restarting' } })),
    desktopHandlers: createDesktopHandlers({
      chooseOpenPath: async ({ title, filters }) => {
        const r = mainWindow ? await dialog.showOpenDialog(mainWindow, { title, filters, properties: ['openFile'] }) : await dialog.showOpenDialog({ title, filters, properties: ['openFile'] });
        return r.canceled ? undefined : r.filePaths[0];
      },
      chooseSavePath: async ({ title, defaultPath, filters }) => {
        const r = mainWindow ? await dialog.showSaveDialog(mainWindow, { title, defaultPath, filters }) : await dialog.showSaveDialog({ title, defaultPath, filters });
        return r.canceled ? undefined : r.filePath;
      },
      readText: (file) => fs.readFile(file, 'utf8'),
      fileSize: async (file) => (await fs.stat(file)).size,
      writeText: (file, text) => fs.writeFile(file, text, 'utf8'),
      dbPath: () => (host ? redactLocation(host.dbPath) : ''),
      openDatabase: async (location) => redactLocation(await switchDatabase(location)),
      version: app.getVersion(),
      platform: process.platform,
      notify: ({ title, body }) =>
        new Promise<boolean>((resolve) => {
          if (!Notification.isSupported()) return resolve(false);
          const notification = new Notification({ title, body });
          let settled = false;
          const settle = (clicked: boolean): void => {
            if (settled) return;
            settled = true;
            clearTimeout(timer);
            resolve(clicked);
          };
          const timer = setTimeout(() => settle(false), 60_000);
          notification.on('click', () => {
            if (mainWindow) {
              if (mainWindow.isMinimized()) mainWindow.restore();
              mainWindow.focus();
            }
            settle(true);
          });
          notification.on('close', () => settle(false));
          notification.show();
        }),
    }),
  });
  installMenu(
    {
      newWorkflow: () => sendCommand(mainWindow, 'workflow.new'),
      importWorkflow: () => sendCommand(mainWindow, 'workflow.import'),
      exportWorkflow: () => sendCommand(mainWindow, 'workflow.export'),
      openDatabase: () => void openDatabase(),
      connectDatabase: () => sendCommand(mainWindow, 'database.connect'),
      showView: (view) => sendCommand(mainWindow, `view.${view}`),
      quit: () => app.quit(),
    },
    { platform: process.platform, appName: app.getName(), devTools },
  );
  mainWindow = createMainWindow({ preloadPath, devServerUrl, devTools });
  mainWindow.on('closed', () => (mainWindow = undefined));
}

if (!app.requestSingleInstanceLock()) {
  // Another Runnel owns the window (and its engine): hand over and leave.
  app.quit();
} else {
  registerAppScheme();
  guardAllWebContents();
  app.on('second-instance', () => {
    if (!mainWindow) return;
    if (mainWindow.isMinimized()) mainWindow.restore();
    mainWindow.focus();
  });
  app.on('window-all-closed', () => {
    if (process.platform !== 'darwin') app.quit();
  });
  app.on('activate', () => {
    if (!mainWindow && host) mainWindow = createMainWindow({ preloadPath, devServerUrl, devTools });
  });
  app.on('before-quit', (event) => {
    if (quitting === 'done') return;
    event.preventDefault();
    if (quitting === 'shutting-down') return;
    quitting = 'shutting-down';
    void shutdown().finally(() => {
      quitting = 'done';
      app.quit();
    });
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => app.quit());
  app.whenReady().then(ready, (error: unknown) => {
    console.error('runnel: start-up failed', error);
    app.exit(1);
  });
}
