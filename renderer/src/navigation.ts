/**
 * Binds the address bar to the stores (routes in `routes.ts`): the stores stay the truth of what
 * is on screen, and this keeps the address equal to it, both ways.
 *
 * - Store → address: after any change of the view, the selected workflow (and version, in the
 *   Designer), the open instance or its tab, the address is recomputed (once per microtask, so
 *   `open(id)` then `setView('instances')` is one step) and pushed as a new history entry. A
 *   change that only completes an address (`#/designer` becoming `#/designer/<name>` as the list
 *   loads) or normalizes one just applied replaces the entry instead, so Back does not stop on it.
 * - Address → stores: at start, and on Back, Forward or an address typed by hand (`popstate`,
 *   `hashchange`), the route is applied to the stores; an address that names no route is replaced
 *   by the route of what is shown.
 *
 * The desktop app loads the same renderer, so it has the same routes (`app://runnel/index.html#/…`).
 * Its window has no Back button: with `historyKeys`, Alt+←/→ (⌘[ / ⌘] on macOS) and the mouse's
 * back and forward buttons walk the history, as they do in a browser.
 */
import { formatRoute, parseRoute, type Route } from './routes';
import type { AppStores } from './stores/app-stores';
import type { MonitorStores } from './stores/monitor-stores';

/** What navigation uses of the window (tests pass a fake). */
export type NavigationWindow = Pick<Window, 'addEventListener' | 'removeEventListener'> & {
  location: Pick<Location, 'hash'>;
  history: Pick<History, 'pushState' | 'replaceState' | 'back' | 'forward'>;
  document?: { title: string };
};

/** The route of what the stores show now. */
export function currentRoute(app: AppStores, monitor: Pick<MonitorStores, 'list'>): Route {
  const view = app.ui.getState().view;
  switch (view) {
    case 'designer': {
      const w = app.workflows.getState();
      if (w.selected === undefined) return { view };
      return w.selectedVersion === undefined ? { view, workflow: w.selected } : { view, workflow: w.selected, version: w.selectedVersion };
    }
    case 'instances': {
      const l = monitor.list.getState();
      const filter = {
        ...(l.filter.parentId === undefined ? {} : { parent: l.filter.parentId }),
        ...(l.filter.paused === true ? { paused: true as const } : {}),
      };
      return l.openId === undefined ? { view, ...filter } : { view, instance: l.openId, tab: l.tab, ...filter };
    }
    case 'approvals':
    case 'dashboard':
    case 'database':
      return { view };
  }
}

/**
 * Makes the stores show `route`: the view, the workflow (the Designer opens it, asking first when
 * its drawing has unsaved changes), the instance and its tab, the list's parent and paused filters. `#/designer` alone keeps whatever
 * the Designer has.
 */
export function applyRoute(route: Route, app: AppStores, monitor: Pick<MonitorStores, 'list'>): void {
  switch (route.view) {
    case 'designer': {
      const w = app.workflows.getState();
      if (route.workflow !== undefined && (w.selected !== route.workflow || w.selectedVersion !== route.version)) w.select(route.workflow, route.version);
      break;
    }
    case 'instances': {
      const l = monitor.list.getState();
      const tab = route.tab ?? 'timeline';
      // One patch, so the list reloads once.
      const patch = {
        ...(l.filter.parentId !== route.parent ? { parentId: route.parent } : {}),
        ...((l.filter.paused === true) !== (route.paused === true) ? { paused: route.paused } : {}),
      };
      if (Object.keys(patch).length > 0) l.setFilter(patch);
      if (route.instance === undefined) {
        if (l.openId !== undefined) l.open(undefined);
      } else if (l.openId !== route.instance) l.open(route.instance, tab);
      else if (l.tab !== tab) l.setTab(tab);
      break;
    }
    default:
      break;
  }
  if (app.ui.getState().view !== route.view) app.ui.getState().setView(route.view);
}

/** The window title of a route (what the browser's history menu lists). */
export function routeTitle(route: Route): string {
  switch (route.view) {
    case 'designer':
      return route.workflow === undefined ? 'Designer · Runnel' : `${route.workflow}${route.version === undefined ? '' : ` v${route.version}`} · Designer · Runnel`;
    case 'instances':
      if (route.instance !== undefined) return `Instance #${route.instance} · Runnel`;
      return `${route.parent === undefined ? '' : `Children of #${route.parent} · `}${route.paused === true ? 'Paused · ' : ''}Instances · Runnel`;
    case 'approvals':
      return 'Approvals · Runnel';
    case 'dashboard':
      return 'Dashboard · Runnel';
    case 'database':
      return 'Database · Runnel';
  }
}

/** Whether going from `from` to `to` only completes the address (no history entry of its own). */
function completes(from: Route | undefined, to: Route): boolean {
  return from === undefined || (from.view === 'designer' && to.view === 'designer' && from.workflow === undefined);
}

/** -1 for a Back key (Alt+← or ⌘[), 1 for Forward (Alt+→ or ⌘]), else undefined. */
export function historyStep(e: Pick<KeyboardEvent, 'key' | 'altKey' | 'metaKey' | 'ctrlKey' | 'shiftKey'>): -1 | 1 | undefined {
  if (e.shiftKey || e.ctrlKey) return undefined;
  if (e.altKey && !e.metaKey) return e.key === 'ArrowLeft' ? -1 : e.key === 'ArrowRight' ? 1 : undefined;
  if (e.metaKey && !e.altKey) return e.key === '[' ? -1 : e.key === ']' ? 1 : undefined;
  return undefined;
}

/**
 * Applies the page's address to the stores, then keeps address and stores equal (module
 * comment). Returns the disconnector.
 */
export function connectNavigation(app: AppStores, monitor: Pick<MonitorStores, 'list'>, win: NavigationWindow, options: { historyKeys?: boolean } = {}): () => void {
  let scheduled = false;
  let replaceNext = false;
  let stopped = false;

  const sync = (): void => {
    scheduled = false;
    if (stopped) return;
    const route = currentRoute(app, monitor);
    const want = formatRoute(route);
    if (win.document) win.document.title = routeTitle(route);
    const have = win.location.hash;
    const replace = replaceNext || completes(parseRoute(have), route);
    replaceNext = false;
    if (want === have) return;
    if (replace) win.history.replaceState(null, '', want);
    else win.history.pushState(null, '', want);
  };
  const schedule = (replace = false): void => {
    if (replace) replaceNext = true;
    if (scheduled) return;
    scheduled = true;
    queueMicrotask(sync);
  };
  const follow = (): void => {
    const route = parseRoute(win.location.hash);
    if (route !== undefined && formatRoute(route) !== formatRoute(currentRoute(app, monitor))) applyRoute(route, app, monitor);
    // What the stores made of it (or of an address that named nothing) replaces the entry.
    schedule(true);
  };

  follow();
  sync();
  const offs = [app.ui.subscribe(() => schedule()), app.workflows.subscribe(() => schedule()), monitor.list.subscribe(() => schedule())];
  win.addEventListener('popstate', follow);
  win.addEventListener('hashchange', follow);
  const onKey = (e: KeyboardEvent): void => {
    const step = historyStep(e);
    if (step === undefined || e.defaultPrevented) return;
    // In a text field Alt+← moves the caret by a word (macOS): leave it there.
    const t = e.target as { isContentEditable?: boolean; tagName?: string } | null;
    if (t && (t.isContentEditable === true || ['INPUT', 'TEXTAREA', 'SELECT'].includes(t.tagName ?? ''))) return;
    e.preventDefault();
    if (step < 0) win.history.back();
    else win.history.forward();
  };
  const onMouse = (e: MouseEvent): void => {
    // Buttons 3 and 4: a mouse's back and forward buttons.
    if (e.button !== 3 && e.button !== 4) return;
    e.preventDefault();
    if (e.button === 3) win.history.back();
    else win.history.forward();
  };
  if (options.historyKeys) {
    win.addEventListener('keydown', onKey);
    win.addEventListener('mouseup', onMouse);
  }
  return () => {
    stopped = true;
    for (const off of offs) off();
    win.removeEventListener('popstate', follow);
    win.removeEventListener('hashchange', follow);
    win.removeEventListener('keydown', onKey);
    win.removeEventListener('mouseup', onMouse);
  };
}
