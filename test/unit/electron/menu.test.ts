// The app menu template, built without Electron.
import { describe, expect, it, vi } from 'vitest';
import { buildMenuTemplate, findMenuItem, type MenuActions, type MenuItemSpec } from '../../../electron/main/menu-template';

function actions(): MenuActions & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    newWorkflow: () => calls.push('new'),
    importWorkflow: () => calls.push('import'),
    exportWorkflow: () => calls.push('export'),
    openDatabase: () => calls.push('open-database'),
    connectDatabase: () => calls.push('connect-database'),
    showView: (v) => calls.push(`view:${v}`),
    quit: () => calls.push('quit'),
  };
}

function all(template: readonly MenuItemSpec[]): MenuItemSpec[] {
  return template.flatMap((i) => [i, ...all(i.submenu ?? [])]);
}

describe('buildMenuTemplate', () => {
  it('given Linux, File holds New, Open, Open database, Connect to PostgreSQL, Export and Quit with their shortcuts, each calling its action', () => {
    const a = actions();
    const template = buildMenuTemplate(a, { platform: 'linux', appName: 'Runnel', devTools: true });
    expect(template.map((m) => m.label)).toEqual(['File', 'Edit', 'View', 'Window']);
    const file = findMenuItem(template, 'file');
    expect(file?.submenu?.filter((i) => i.type !== 'separator').map((i) => [i.label, i.accelerator])).toEqual([
      ['New Workflow', 'CmdOrCtrl+N'],
      ['Open Workflow…', 'CmdOrCtrl+O'],
      ['Open Database…', 'CmdOrCtrl+Shift+O'],
      ['Connect to PostgreSQL…', undefined],
      ['Export Workflow…', 'CmdOrCtrl+E'],
      ['Quit', 'CmdOrCtrl+Q'],
    ]);
    for (const id of ['new', 'open', 'open-database', 'connect-database', 'export', 'quit']) findMenuItem(template, id)?.click?.();
    expect(a.calls).toEqual(['new', 'import', 'open-database', 'connect-database', 'export', 'quit']);
  });

  it('given macOS, puts Quit in the app menu (once) and keeps File without it', () => {
    const template = buildMenuTemplate(actions(), { platform: 'darwin', appName: 'Runnel', devTools: true });
    expect(template[0]?.label).toBe('Runnel');
    expect(template[0]?.submenu?.some((i) => i.id === 'quit' && i.accelerator === 'CmdOrCtrl+Q')).toBe(true);
    expect(findMenuItem(template, 'file')?.submenu?.some((i) => i.id === 'quit')).toBe(false);
    expect(all(template).filter((i) => i.id === 'quit')).toHaveLength(1);
  });

  it('has view shortcuts 1–3 and no duplicate accelerators', () => {
    const a = actions();
    const template = buildMenuTemplate(a, { platform: 'win32', appName: 'Runnel', devTools: true });
    for (const [id, key] of [
      ['view-designer', 'CmdOrCtrl+1'],
      ['view-instances', 'CmdOrCtrl+2'],
      ['view-dashboard', 'CmdOrCtrl+3'],
    ] as const) {
      expect(findMenuItem(template, id)?.accelerator).toBe(key);
      findMenuItem(template, id)?.click?.();
    }
    expect(a.calls).toEqual(['view:designer', 'view:instances', 'view:dashboard']);
    const keys = all(template).flatMap((i) => (i.accelerator ? [i.accelerator] : []));
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('offers DevTools only when they are allowed', () => {
    const roles = (devTools: boolean) => all(buildMenuTemplate(actions(), { platform: 'linux', appName: 'Runnel', devTools })).map((i) => i.role);
    expect(roles(true)).toContain('toggleDevTools');
    expect(roles(false)).not.toContain('toggleDevTools');
  });

  it('builds without calling any action', () => {
    const a = actions();
    const spy = vi.fn();
    buildMenuTemplate({ ...a, quit: spy }, { platform: 'linux', appName: 'Runnel', devTools: false });
    expect(a.calls).toEqual([]);
    expect(spy).not.toHaveBeenCalled();
  });
});
