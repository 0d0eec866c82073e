/**
 * The app's window and the session-wide guards: the `app://` protocol serving the built renderer
 * with its CSP, permission requests denied, navigation and new windows blocked (https links go to
 * the system browser), `<webview>` refused. The policy itself lives in `security.ts` (tested);
 * this module only wires it into Electron.
 */
import fs from 'node:fs/promises';
import { app, BrowserWindow, dialog, protocol, session, shell, type WebContents } from 'electron';
import { appResponseHeaders, resolveAppAsset } from './app-protocol';
import { APP_ENTRY_URL, APP_SCHEME, isPermissionGranted, navigationDecision, secureWebPreferences } from './security';

/**
 * Declares `app://` a standard, secure scheme (a real origin for `'self'` in the CSP, module
 * scripts and `fetch`). Must run before `app` is ready.
 */
export function registerAppScheme(): void {
  protocol.registerSchemesAsPrivileged([{ scheme: APP_SCHEME, privileges: { standard: true, secure: true, supportFetchAPI: true, corsEnabled: true, codeCache: true } }]);
}

/** Serves `rendererDir` on `app://runnel/`, every response with the app's CSP. */
export function serveRenderer(rendererDir: string): void {
  protocol.handle(APP_SCHEME, async (request) => {
    const asset = resolveAppAsset(rendererDir, request.url);
    if (!asset) return new Response('Not found', { status: 404, headers: appResponseHeaders('text/plain; charset=utf-8') });
    try {
      return new Response(await fs.readFile(asset.file), { status: 200, headers: appResponseHeaders(asset.contentType) });
    } catch {
      return new Response('Not found', { status: 404, headers: appResponseHeaders('text/plain; charset=utf-8') });
    }
  });
}

/** Denies every permission request and check of the default session. */
export function denyPermissions(): void {
  session.defaultSession.setPermissionRequestHandler((_wc, permission, callback) => callback(isPermissionGranted(permission)));
  session.defaultSession.setPermissionCheckHandler((_wc, permission) => isPermissionGranted(permission));
}

function guardNavigation(contents: WebContents): void {
  const onNavigate = (event: { preventDefault(): void }, url: string): void => {
    event.preventDefault();
    const decision = navigationDecision(url);
    if (decision.action === 'open-external') void shell.openExternal(decision.url);
  };
  contents.on('will-navigate', onNavigate);
  contents.on('will-redirect', onNavigate);
  contents.on('will-attach-webview', (event) => event.preventDefault());
  contents.setWindowOpenHandler(({ url }) => {
    const decision = navigationDecision(url);
    if (decision.action === 'open-external') void shell.openExternal(decision.url);
    return { action: 'deny' };
  });
}

/** Applies the navigation guards to every web contents the app ever creates. */
export function guardAllWebContents(): void {
  app.on('web-contents-created', (_event, contents) => guardNavigation(contents));
}

/** Options of {@link createMainWindow}. */
export interface MainWindowOptions {
  /** Absolute path of `preload.cjs`. */
  preloadPath: string;
  /** Load this dev server URL instead of `app://runnel/index.html` (development only). */
  devServerUrl?: string;
  /** Whether DevTools may open. */
  devTools: boolean;
  /** Window icon (Linux, Windows). */
  iconPath?: string;
}

/** Creates and loads the app's window; it shows itself once the first paint is ready. */
export function createMainWindow(options: MainWindowOptions): BrowserWindow {
  const window = new BrowserWindow({
    width: 1280,
    height: 820,
    minWidth: 800,
    minHeight: 500,
    show: false,
    title: 'Runnel',
    backgroundColor: '#0f172a',
    ...(options.iconPath ? { icon: options.iconPath } : {}),
    webPreferences: secureWebPreferences(options.preloadPath, options.devTools),
  });
  window.once('ready-to-show', () => window.show());
  // The Designer refuses to unload while its drawing has unsaved changes (`beforeunload`);
  // Electron then shows nothing and keeps the window, so ask here: Leave drops the changes.
  window.webContents.on('will-prevent-unload', (event) => {
    const choice = dialog.showMessageBoxSync(window, {
      type: 'question',
      buttons: ['Leave', 'Stay'],
      defaultId: 1,
      cancelId: 1,
      title: 'Unsaved changes',
      message: 'The workflow in the Designer has unsaved changes.',
      detail: 'They are lost if you leave.',
    });
    if (choice === 0) event.preventDefault();
  });
  void window.loadURL(options.devServerUrl ?? APP_ENTRY_URL);
  return window;
}
