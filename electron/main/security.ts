/**
 * The desktop window's security policy as pure data and predicates: the `webPreferences`, the
 * Content-Security-Policy, which navigations and new windows are allowed (none), which permission
 * requests are granted (none) and which IPC senders are trusted (the app's own windows showing the
 * app's own pages).
 *
 * Nothing here imports `electron`, so unit tests cover every rule (the Electron binary cannot run
 * in tests); `window.ts` and `ipc-main.ts` only wire these into Electron's hooks. The rules follow
 * Electron's security checklist (https://www.electronjs.org/docs/latest/tutorial/security) and
 * GitHub Desktop's trusted-sender check (STYLE.md).
 */

/** The subset of Electron's `WebPreferences` the app sets; every value is pinned by a unit test. */
export interface SecureWebPreferences {
  /** Absolute path of the bundled preload (CommonJS: sandboxed preloads cannot be ES modules). */
  preload: string;
  /** The preload and the page run in separate JavaScript worlds; only `contextBridge` crosses. */
  contextIsolation: true;
  /** The renderer runs in Chromium's OS sandbox; the preload sees only a tiny `require`. */
  sandbox: true;
  /** No Node.js in the page. */
  nodeIntegration: false;
  /** No Node.js in web workers either. */
  nodeIntegrationInWorker: false;
  /** No Node.js in sub-frames. */
  nodeIntegrationInSubFrames: false;
  /** Same-origin policy stays on. */
  webSecurity: true;
  /** No http content in an https page (there is none, but the default must not be loosened). */
  allowRunningInsecureContent: false;
  /** No `<webview>` tags. */
  webviewTag: false;
  /** No experimental Blink features. */
  experimentalFeatures: false;
  /** Spell checking would fetch dictionaries from Google: the app stays offline. */
  spellcheck: false;
  /** Keep DevTools available; `RUNNEL_DEVTOOLS=0` removes them in kiosk-like deployments. */
  devTools: boolean;
}

/**
 * The window's `webPreferences`: isolated, sandboxed, no Node.js, web security on.
 *
 * @param preloadPath absolute path of `dist-electron/preload.cjs`.
 * @param devTools whether DevTools may open (default true).
 */
export function secureWebPreferences(preloadPath: string, devTools = true): SecureWebPreferences {
  return {
    preload: preloadPath,
    contextIsolation: true,
    sandbox: true,
    nodeIntegration: false,
    nodeIntegrationInWorker: false,
    nodeIntegrationInSubFrames: false,
    webSecurity: true,
    allowRunningInsecureContent: false,
    webviewTag: false,
    experimentalFeatures: false,
    spellcheck: false,
    devTools,
  };
}

/**
 * The Content-Security-Policy directives of the app's own pages.
 *
 * Scripts and connections come only from the app itself; `style-src` allows inline styles because
 * React Flow (and React's `style` props) set element styles at run time; images may be data/blob
 * URLs (icons, exported previews). No object, frame or form targets; no `<base>` rewriting.
 */
export const CSP_DIRECTIVES: Readonly<Record<string, readonly string[]>> = {
  'default-src': ["'self'"],
  'script-src': ["'self'"],
  'style-src': ["'self'", "'unsafe-inline'"],
  'img-src': ["'self'", 'data:', 'blob:'],
  'font-src': ["'self'", 'data:'],
  'connect-src': ["'self'"],
  'worker-src': ["'self'", 'blob:'],
  'object-src': ["'none'"],
  'frame-src': ["'none'"],
  'frame-ancestors': ["'none'"],
  'form-action': ["'none'"],
  'base-uri': ["'none'"],
};

/**
 * The CSP header value built from {@link CSP_DIRECTIVES}: `directive value…; …`.
 *
 * Electron sets it as a response header on the app's own pages (`session.webRequest`), so it
 * holds even if a page forgets its `<meta>` tag.
 */
export function contentSecurityPolicy(directives: Readonly<Record<string, readonly string[]>> = CSP_DIRECTIVES): string {
  return Object.entries(directives)
    .map(([name, values]) => `${name} ${values.join(' ')}`)
    .join('; ');
}

/** The scheme of the app's own pages: `app://runnel/index.html` (see `app-protocol.ts`). */
export const APP_SCHEME = 'app';

/** The host of the app's own pages. */
export const APP_HOST = 'runnel';

/** The URL the window loads. */
export const APP_ENTRY_URL = `${APP_SCHEME}://${APP_HOST}/index.html`;

/**
 * Whether `url` is one of the app's own pages: `app://runnel/…` (the packaged renderer, served by
 * the app's own protocol handler), or — in development only — a URL on exactly the dev server's
 * protocol, host and port (`devServerUrl`).
 *
 * Electron's checklist prefers a custom scheme to `file:`: a `file:` page could read any other
 * file, and every file URL would share one origin.
 */
export function isAppUrl(url: string, devServerUrl?: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  if (parsed.protocol === `${APP_SCHEME}:` && parsed.host === APP_HOST && parsed.username === '' && parsed.password === '') return true;
  if (devServerUrl === undefined || devServerUrl === '') return false;
  try {
    const dev = new URL(devServerUrl);
    return (dev.protocol === 'http:' || dev.protocol === 'https:') && parsed.protocol === dev.protocol && parsed.host === dev.host;
  } catch {
    return false;
  }
}

/**
 * Whether an IPC message may be handled: it must come from the main frame of one of the app's
 * own windows (`windowIds` are their `webContents` ids) showing one of the app's own pages.
 *
 * A sub-frame, a foreign page that somehow loaded in a window, a DevTools window or a window the
 * app did not create are all refused (GitHub Desktop checks senders the same way).
 *
 * @param sender `senderFrame.url`, whether that frame is the top frame, and `sender.id`.
 */
export function isTrustedSender(
  sender: { frameUrl: string | undefined; isMainFrame: boolean; webContentsId: number },
  windowIds: ReadonlySet<number>,
  devServerUrl?: string,
): boolean {
  if (!windowIds.has(sender.webContentsId)) return false;
  if (!sender.isMainFrame || sender.frameUrl === undefined) return false;
  return isAppUrl(sender.frameUrl, devServerUrl);
}

/** What to do with a navigation attempt. */
export type NavigationDecision =
  /** Stay on the page (the attempt is cancelled). */
  | { action: 'deny' }
  /** Cancel, and open the URL in the user's browser (https links only). */
  | { action: 'open-external'; url: string };

/**
 * The policy for `will-navigate`, `will-redirect` and `setWindowOpenHandler`: the window never
 * navigates and never opens another window. An https link the user clicked is handed to the
 * system browser instead; everything else (http, file, javascript:, data:, custom schemes) is
 * simply refused.
 *
 * Reloads of the app's own page do not pass through here (Electron does not emit `will-navigate`
 * for `reload()`); a same-page hash change is harmless and allowed by Chromium without an event.
 */
export function navigationDecision(url: string): NavigationDecision {
  try {
    const parsed = new URL(url);
    if (parsed.protocol === 'https:' && parsed.username === '' && parsed.password === '') {
      return { action: 'open-external', url: parsed.toString() };
    }
  } catch {
    // unparsable: deny
  }
  return { action: 'deny' };
}

/**
 * Whether a permission request or check (camera, notifications, geolocation, clipboard, …) is
 * granted: never. The app needs none; copy and paste through the Edit menu and keyboard
 * shortcuts work without any. A feature that wants `navigator.clipboard` must add its permission
 * here, with a test.
 */
export function isPermissionGranted(_permission: string): boolean {
  return false;
}
