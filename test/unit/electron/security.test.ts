// The desktop window's security policy, as pure functions (never importing `electron`).
import { describe, expect, it } from 'vitest';
import {
  APP_ENTRY_URL,
  CSP_DIRECTIVES,
  contentSecurityPolicy,
  isAppUrl,
  isPermissionGranted,
  isTrustedSender,
  navigationDecision,
  secureWebPreferences,
} from '../../../electron/main/security';
import { appResponseHeaders, resolveAppAsset } from '../../../electron/main/app-protocol';

describe('secureWebPreferences', () => {
  it('given a preload path, isolates, sandboxes and keeps Node.js and web-security loosening out', () => {
    const prefs = secureWebPreferences('/app/dist-electron/preload.cjs');
    expect(prefs).toMatchObject({
      preload: '/app/dist-electron/preload.cjs',
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      experimentalFeatures: false,
      devTools: true,
    });
  });

  it('given devTools false, turns DevTools off and nothing else', () => {
    const prefs = secureWebPreferences('/p.cjs', false);
    expect(prefs.devTools).toBe(false);
    expect(prefs.sandbox).toBe(true);
    expect(prefs.contextIsolation).toBe(true);
  });

  it('the preload is CommonJS (a sandboxed preload cannot be an ES module)', () => {
    expect(secureWebPreferences('/x/preload.cjs').preload.endsWith('.cjs')).toBe(true);
  });
});

describe('contentSecurityPolicy', () => {
  const csp = contentSecurityPolicy();
  const directive = (name: string) =>
    csp
      .split(';')
      .map((d) => d.trim())
      .find((d) => d.startsWith(`${name} `));

  it('allows scripts and connections only from the app itself', () => {
    expect(directive('default-src')).toBe("default-src 'self'");
    expect(directive('script-src')).toBe("script-src 'self'");
    expect(directive('connect-src')).toBe("connect-src 'self'");
  });

  it('never allows eval or inline scripts; inline styles only for React Flow', () => {
    expect(csp).not.toContain('unsafe-eval');
    expect(directive('script-src')).not.toContain('unsafe-inline');
    expect(directive('style-src')).toBe("style-src 'self' 'unsafe-inline'");
  });

  it('refuses plugins, frames, form posts and base rewriting', () => {
    expect(directive('object-src')).toBe("object-src 'none'");
    expect(directive('frame-src')).toBe("frame-src 'none'");
    expect(directive('frame-ancestors')).toBe("frame-ancestors 'none'");
    expect(directive('form-action')).toBe("form-action 'none'");
    expect(directive('base-uri')).toBe("base-uri 'none'");
  });

  it('has one entry per directive, in a header-safe form', () => {
    expect(csp.split('; ')).toHaveLength(Object.keys(CSP_DIRECTIVES).length);
    expect(csp).not.toMatch(/[\r\n]/);
  });

  it('is sent with every app-protocol response, with nosniff', () => {
    const headers = appResponseHeaders('text/html; charset=utf-8');
    expect(headers['Content-Security-Policy']).toBe(csp);
    expect(headers['X-Content-Type-Options']).toBe('nosniff');
  });
});

describe('isAppUrl', () => {
  it('accepts the app scheme and host only', () => {
    expect(isAppUrl(APP_ENTRY_URL)).toBe(true);
    expect(isAppUrl('app://runnel/assets/index.js?x=1#y')).toBe(true);
    expect(isAppUrl('app://other/index.html')).toBe(false);
    expect(isAppUrl('app://user:pw@runnel/index.html')).toBe(false);
    expect(isAppUrl('https://runnel/index.html')).toBe(false);
    expect(isAppUrl('file:///app/dist/renderer/index.html')).toBe(false);
    expect(isAppUrl('not a url')).toBe(false);
  });

  it('accepts the dev server only when one is configured, on exactly its host and port', () => {
    expect(isAppUrl('http://localhost:5173/')).toBe(false);
    expect(isAppUrl('http://localhost:5173/?token=x', 'http://localhost:5173')).toBe(true);
    expect(isAppUrl('http://localhost:5174/', 'http://localhost:5173')).toBe(false);
    expect(isAppUrl('https://localhost:5173/', 'http://localhost:5173')).toBe(false);
    expect(isAppUrl('http://evil.example/', 'http://localhost:5173')).toBe(false);
    expect(isAppUrl('http://localhost:5173/', 'javascript:alert(1)')).toBe(false);
  });
});

describe('isTrustedSender', () => {
  const windows = new Set([7]);
  const own = { frameUrl: 'app://runnel/index.html', isMainFrame: true, webContentsId: 7 };

  it('accepts the main frame of one of the app windows showing the app', () => {
    expect(isTrustedSender(own, windows)).toBe(true);
  });

  it('refuses web contents that are not one of the app windows (another window, DevTools, a webview)', () => {
    expect(isTrustedSender({ ...own, webContentsId: 8 }, windows)).toBe(false);
    expect(isTrustedSender(own, new Set())).toBe(false);
  });

  it('refuses a foreign page loaded in an app window', () => {
    expect(isTrustedSender({ ...own, frameUrl: 'https://evil.example/' }, windows)).toBe(false);
    expect(isTrustedSender({ ...own, frameUrl: 'file:///etc/passwd' }, windows)).toBe(false);
    expect(isTrustedSender({ ...own, frameUrl: 'app://evil/index.html' }, windows)).toBe(false);
    expect(isTrustedSender({ ...own, frameUrl: 'data:text/html,<script>1</script>' }, windows)).toBe(false);
  });

  it('refuses sub-frames and frames already gone', () => {
    expect(isTrustedSender({ ...own, isMainFrame: false }, windows)).toBe(false);
    expect(isTrustedSender({ ...own, frameUrl: undefined }, windows)).toBe(false);
  });

  it('trusts the dev server page only when it is configured', () => {
    const dev = { ...own, frameUrl: 'http://localhost:5173/' };
    expect(isTrustedSender(dev, windows)).toBe(false);
    expect(isTrustedSender(dev, windows, 'http://localhost:5173')).toBe(true);
  });
});

describe('navigationDecision', () => {
  it('never navigates the window: https links go to the system browser', () => {
    expect(navigationDecision('https://example.com/docs')).toEqual({ action: 'open-external', url: 'https://example.com/docs' });
  });

  it('denies everything else, the app itself included', () => {
    for (const url of [
      'http://example.com/',
      'file:///etc/passwd',
      'javascript:alert(1)',
      'data:text/html,hi',
      'app://runnel/index.html',
      'smb://host/share',
      'https://user:pw@example.com/',
      'nonsense',
    ]) {
      expect(navigationDecision(url), url).toEqual({ action: 'deny' });
    }
  });
});

describe('isPermissionGranted', () => {
  it('denies every permission request', () => {
    for (const p of ['media', 'geolocation', 'notifications', 'clipboard-read', 'openExternal', 'fullscreen', 'unknown']) {
      expect(isPermissionGranted(p), p).toBe(false);
    }
  });
});

describe('resolveAppAsset', () => {
  const root = '/app/dist/renderer';

  it('maps app URLs into the renderer folder, / to index.html, with content types', () => {
    expect(resolveAppAsset(root, 'app://runnel/')).toEqual({ file: '/app/dist/renderer/index.html', contentType: 'text/html; charset=utf-8' });
    expect(resolveAppAsset(root, 'app://runnel/assets/index-x.js?v=1')).toEqual({ file: '/app/dist/renderer/assets/index-x.js', contentType: 'text/javascript; charset=utf-8' });
    expect(resolveAppAsset(root, 'app://runnel/favicon.svg')?.contentType).toBe('image/svg+xml');
    expect(resolveAppAsset(root, 'app://runnel/blob.bin')?.contentType).toBe('application/octet-stream');
  });

  it('never resolves outside the folder, however the path is written', () => {
    for (const url of [
      'app://runnel/../../etc/passwd',
      'app://runnel/%2e%2e/%2e%2e/etc/passwd',
      'app://runnel/assets/..%2f..%2f..%2fetc/passwd',
      'app://runnel//etc/passwd',
    ]) {
      const asset = resolveAppAsset(root, url);
      expect(asset === null || asset.file.startsWith(`${root}/`), url).toBe(true);
    }
    expect(resolveAppAsset(root, 'app://runnel/assets/..%2f..%2f..%2fetc/passwd')?.file).toBe(`${root}/etc/passwd`);
  });

  it('refuses backslashes, NUL bytes, bad escapes, other hosts and schemes', () => {
    for (const url of ['app://runnel/..%5c..%5cwindows', 'app://runnel/a%00b.js', 'app://runnel/%E0%A4%A', 'app://other/index.html', 'file:///app/dist/renderer/index.html', 'https://runnel/index.html', '::']) {
      expect(resolveAppAsset(root, url), url).toBeNull();
    }
  });
});
