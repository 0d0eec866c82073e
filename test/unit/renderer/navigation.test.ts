// The address bar bound to the stores (renderer/src/navigation.ts), over fresh stores and a fake
// window: what is shown becomes one history entry per step (one per microtask), an address is
// applied to the stores, Back is a popstate, and the desktop's Back keys walk the history
// (issue 15, item 3).
import { describe, expect, it } from 'vitest';
import type { Result } from '../../../engine/api/contract';
import type { ApiClient } from '../../../renderer/src/api/client';
import { applyRoute, connectNavigation, currentRoute, historyStep, type NavigationWindow } from '../../../renderer/src/navigation';
import { createAppStores } from '../../../renderer/src/stores/app-stores';
import { createMonitorStores } from '../../../renderer/src/stores/monitor-stores';

function stores() {
  const api: ApiClient = {
    transport: 'http',
    invoke: (async () => ({ ok: false, error: { code: 'NOT_FOUND', message: 'fake' } }) satisfies Result<unknown>) as unknown as ApiClient['invoke'],
    desktop: undefined,
    onEvent: () => () => undefined,
    onCommand: () => () => undefined,
    onResync: () => () => undefined,
    onConnection: () => () => undefined,
    close: () => undefined,
  };
  const app = createAppStores(api);
  return { app, monitor: createMonitorStores(api, app.ui) };
}

/** A window with a history stack of hashes. */
function fakeWindow(hash = '') {
  const entries = [hash];
  let index = 0;
  const listeners = new Map<string, Set<(e: unknown) => void>>();
  const fire = (type: string, e: unknown = {}) => listeners.get(type)?.forEach((l) => l(e));
  const win = {
    location: {
      get hash() {
        return entries[index] ?? '';
      },
    },
    history: {
      pushState: (_s: unknown, _t: string, url?: string | URL | null) => {
        entries.splice(index + 1, entries.length, String(url));
        index = entries.length - 1;
      },
      replaceState: (_s: unknown, _t: string, url?: string | URL | null) => {
        entries[index] = String(url);
      },
      back: () => {
        if (index > 0) index--;
        fire('popstate');
      },
      forward: () => {
        if (index < entries.length - 1) index++;
        fire('popstate');
      },
    },
    document: { title: '' },
    addEventListener: (type: string, l: (e: unknown) => void) => void (listeners.get(type) ?? listeners.set(type, new Set()).get(type))?.add(l),
    removeEventListener: (type: string, l: (e: unknown) => void) => void listeners.get(type)?.delete(l),
  };
  return { win: win as unknown as NavigationWindow, entries, fire, at: () => index };
}

const tick = () => new Promise((r) => setTimeout(r, 0));

describe('navigation', () => {
  it('applies the address it starts on, and replaces an address that names nothing', async () => {
    const { app, monitor } = stores();
    const w = fakeWindow('#/instances/7/variables');
    const off = connectNavigation(app, monitor, w.win);
    expect(app.ui.getState().view).toBe('instances');
    expect([monitor.list.getState().openId, monitor.list.getState().tab]).toEqual([7, 'variables']);
    await tick();
    expect(w.entries).toEqual(['#/instances/7/variables']);
    expect(w.win.document?.title).toBe('Instance #7 · Runnel');
    off();
    const other = stores();
    const bad = fakeWindow('#/nowhere');
    connectNavigation(other.app, other.monitor, bad.win);
    await tick();
    expect(bad.entries).toEqual(['#/instances']);
  });

  it('pushes one entry per step (open then switch view is one), and Back / Forward apply them', async () => {
    const { app, monitor } = stores();
    const w = fakeWindow('#/dashboard');
    connectNavigation(app, monitor, w.win);
    // as the Designer's Run does: open the instance, then switch to Instances
    monitor.list.getState().open(12);
    app.ui.getState().setView('instances');
    await tick();
    monitor.list.getState().setTab('history');
    await tick();
    app.ui.getState().setView('designer');
    app.workflows.getState().select('ota', 2);
    await tick();
    expect(w.entries).toEqual(['#/dashboard', '#/instances/12', '#/instances/12/history', '#/designer/ota/v/2']);
    w.win.history.back();
    expect(currentRoute(app, monitor)).toEqual({ view: 'instances', instance: 12, tab: 'history' });
    w.win.history.back();
    w.win.history.back();
    expect(app.ui.getState().view).toBe('dashboard');
    w.win.history.forward();
    expect(currentRoute(app, monitor)).toEqual({ view: 'instances', instance: 12, tab: 'timeline' });
    await tick();
    expect(w.entries).toHaveLength(4);
  });

  it('completing #/designer with the workflow the list selected replaces the entry', async () => {
    const { app, monitor } = stores();
    const w = fakeWindow('#/designer');
    connectNavigation(app, monitor, w.win);
    await tick();
    app.workflows.getState().select('first');
    await tick();
    expect(w.entries).toEqual(['#/designer/first']);
  });

  it('the list\'s parent filter is in the address both ways, and Back takes it off', async () => {
    const { app, monitor } = stores();
    const w = fakeWindow('#/instances?parent=42');
    connectNavigation(app, monitor, w.win);
    // the address sets the filter, and the filter is what the list asks for
    expect(monitor.list.getState().filter.parentId).toBe(42);
    await tick();
    expect(w.entries).toEqual(['#/instances?parent=42']);
    expect(w.win.document?.title).toBe('Children of #42 · Instances · Runnel');
    // opening a child keeps the filter in its address; clearing the filter is a step of its own
    monitor.list.getState().open(43);
    await tick();
    monitor.list.getState().open(undefined);
    monitor.list.getState().setFilter({ parentId: undefined });
    await tick();
    expect(w.entries).toEqual(['#/instances?parent=42', '#/instances/43?parent=42', '#/instances']);
    // Back comes to the child, under the filter again
    w.win.history.back();
    expect(monitor.list.getState().filter.parentId).toBe(42);
    expect(monitor.list.getState().openId).toBe(43);
  });

  it('applyRoute leaves what is already shown alone', () => {
    const { app, monitor } = stores();
    let changes = 0;
    monitor.list.subscribe(() => changes++);
    applyRoute({ view: 'instances', instance: 3 }, app, monitor);
    applyRoute({ view: 'instances', instance: 3, tab: 'timeline' }, app, monitor);
    expect(changes).toBe(1);
  });

  it('the desktop Back and Forward keys and mouse buttons walk the history (not in a text field)', async () => {
    const { app, monitor } = stores();
    const w = fakeWindow('#/dashboard');
    connectNavigation(app, monitor, w.win, { historyKeys: true });
    app.ui.getState().setView('approvals');
    await tick();
    const key = (k: Partial<KeyboardEvent>) => w.fire('keydown', { altKey: false, metaKey: false, ctrlKey: false, shiftKey: false, defaultPrevented: false, target: null, preventDefault: () => undefined, ...k });
    key({ key: 'ArrowLeft', altKey: true, target: { tagName: 'INPUT' } as unknown as EventTarget });
    expect(w.at()).toBe(1);
    key({ key: 'ArrowLeft', altKey: true });
    expect(app.ui.getState().view).toBe('dashboard');
    w.fire('mouseup', { button: 4, preventDefault: () => undefined });
    expect(app.ui.getState().view).toBe('approvals');
    expect(historyStep({ key: '[', metaKey: true, altKey: false, ctrlKey: false, shiftKey: false })).toBe(-1);
    expect(historyStep({ key: 'ArrowLeft', metaKey: false, altKey: true, ctrlKey: true, shiftKey: false })).toBeUndefined();
  });
});
