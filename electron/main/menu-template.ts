/**
 * The application menu as a pure template: File (New, Open…, Open database…, Export…, Quit), Edit,
 * View (the three views, reload, DevTools, zoom) and Window. `menu.ts` hands it to
 * `Menu.buildFromTemplate`; tests read it without Electron.
 *
 * The item type is a structural subset of Electron's `MenuItemConstructorOptions`, so this module
 * never imports `electron`.
 */

/** Standard Electron menu roles the template uses. */
export type MenuRole =
  | 'about'
  | 'services'
  | 'hide'
  | 'hideOthers'
  | 'unhide'
  | 'quit'
  | 'undo'
  | 'redo'
  | 'cut'
  | 'copy'
  | 'paste'
  | 'selectAll'
  | 'reload'
  | 'forceReload'
  | 'toggleDevTools'
  | 'resetZoom'
  | 'zoomIn'
  | 'zoomOut'
  | 'togglefullscreen'
  | 'minimize'
  | 'zoom'
  | 'close'
  | 'front';

/** One menu item: a subset of Electron's `MenuItemConstructorOptions`. */
export interface MenuItemSpec {
  /** Stable id (tests and `Menu.getMenuItemById` use it). */
  id?: string;
  label?: string;
  role?: MenuRole;
  type?: 'normal' | 'separator' | 'submenu';
  /** Electron accelerator syntax, e.g. `CmdOrCtrl+O`. */
  accelerator?: string;
  click?: () => void;
  submenu?: MenuItemSpec[];
}

/** What the menu items do; `main.ts` supplies them. */
export interface MenuActions {
  newWorkflow(): void;
  importWorkflow(): void;
  exportWorkflow(): void;
  openDatabase(): void;
  /** Asks for a PostgreSQL URL (in the window: the renderer's dialog) and moves the app onto it. */
  connectDatabase(): void;
  showView(view: 'designer' | 'instances' | 'dashboard'): void;
  quit(): void;
}

/** Options of {@link buildMenuTemplate}. */
export interface MenuOptions {
  /** `process.platform`: macOS gets the app menu and moves Quit there. */
  platform: string;
  /** The app name shown as the macOS app menu's title. */
  appName: string;
  /** Whether DevTools may open (mirrors `webPreferences.devTools`). */
  devTools: boolean;
}

const separator: MenuItemSpec = { type: 'separator' };

/**
 * The app menu template.
 *
 * Shortcuts: New `CmdOrCtrl+N`, Open (import) `CmdOrCtrl+O`, Open database `CmdOrCtrl+Shift+O`,
 * Export `CmdOrCtrl+E`, Quit `CmdOrCtrl+Q`, views `CmdOrCtrl+1/2/3`. Quit appears once, where each
 * platform's users look for it: the app menu on macOS, the end of File elsewhere.
 */
export function buildMenuTemplate(actions: MenuActions, options: MenuOptions): MenuItemSpec[] {
  const mac = options.platform === 'darwin';
  const quit: MenuItemSpec = { id: 'quit', label: mac ? `Quit ${options.appName}` : 'Quit', accelerator: 'CmdOrCtrl+Q', click: () => actions.quit() };
  const file: MenuItemSpec = {
    id: 'file',
    label: 'File',
    submenu: [
      { id: 'new', label: 'New Workflow', accelerator: 'CmdOrCtrl+N', click: () => actions.newWorkflow() },
      { id: 'open', label: 'Open Workflow…', accelerator: 'CmdOrCtrl+O', click: () => actions.importWorkflow() },
      { id: 'open-database', label: 'Open Database…', accelerator: 'CmdOrCtrl+Shift+O', click: () => actions.openDatabase() },
      { id: 'connect-database', label: 'Connect to PostgreSQL…', click: () => actions.connectDatabase() },
      separator,
      { id: 'export', label: 'Export Workflow…', accelerator: 'CmdOrCtrl+E', click: () => actions.exportWorkflow() },
      ...(mac ? [] : [separator, quit]),
    ],
  };
  const edit: MenuItemSpec = {
    id: 'edit',
    label: 'Edit',
    submenu: [{ role: 'undo' }, { role: 'redo' }, separator, { role: 'cut' }, { role: 'copy' }, { role: 'paste' }, { role: 'selectAll' }],
  };
  const view: MenuItemSpec = {
    id: 'view',
    label: 'View',
    submenu: [
      { id: 'view-designer', label: 'Designer', accelerator: 'CmdOrCtrl+1', click: () => actions.showView('designer') },
      { id: 'view-instances', label: 'Instances', accelerator: 'CmdOrCtrl+2', click: () => actions.showView('instances') },
      { id: 'view-dashboard', label: 'Dashboard', accelerator: 'CmdOrCtrl+3', click: () => actions.showView('dashboard') },
      separator,
      { role: 'reload' },
      ...(options.devTools ? [{ role: 'toggleDevTools' } as const] : []),
      separator,
      { role: 'resetZoom' },
      { role: 'zoomIn' },
      { role: 'zoomOut' },
      separator,
      { role: 'togglefullscreen' },
    ],
  };
  const windowMenu: MenuItemSpec = {
    id: 'window',
    label: 'Window',
    submenu: mac ? [{ role: 'minimize' }, { role: 'zoom' }, separator, { role: 'front' }] : [{ role: 'minimize' }, { role: 'close' }],
  };
  const appMenu: MenuItemSpec = {
    id: 'app',
    label: options.appName,
    submenu: [{ role: 'about' }, separator, { role: 'services' }, separator, { role: 'hide' }, { role: 'hideOthers' }, { role: 'unhide' }, separator, quit],
  };
  return mac ? [appMenu, file, edit, view, windowMenu] : [file, edit, view, windowMenu];
}

/** Depth-first search of a template for the item with `id` (tests, enabling items). */
export function findMenuItem(template: readonly MenuItemSpec[], id: string): MenuItemSpec | undefined {
  for (const item of template) {
    if (item.id === id) return item;
    const inner = item.submenu ? findMenuItem(item.submenu, id) : undefined;
    if (inner) return inner;
  }
  return undefined;
}
