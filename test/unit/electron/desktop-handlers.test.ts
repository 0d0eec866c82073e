// The desktop-only channels (native file dialogs, app info, OS notifications) over fake dialogs,
// files and notifications.
import { describe, expect, it } from 'vitest';
import { LIMITS } from '../../../engine/api/contract';
import { EngineError } from '../../../engine/errors';
import { createDesktopHandlers, dispatchDesktop, type DesktopDeps } from '../../../electron/main/desktop-handlers';

function deps(over: Partial<DesktopDeps> = {}): DesktopDeps & { written: Array<[string, string]> } {
  const written: Array<[string, string]> = [];
  return {
    written,
    chooseOpenPath: () => Promise.resolve('/home/u/flows/ota.workflow.yaml'),
    chooseSavePath: ({ defaultPath }) => Promise.resolve(`/home/u/out/${defaultPath}`),
    readText: () => Promise.resolve('name: ota'),
    fileSize: () => Promise.resolve(9),
    writeText: (file, text) => {
      written.push([file, text]);
      return Promise.resolve();
    },
    dbPath: () => '/home/u/.config/Runnel/runnel.db',
    openDatabase: (location) => Promise.resolve(location.replace(':secret@', '@')),
    version: '0.1.0',
    platform: 'linux',
    ...over,
  };
}

describe('desktop channels', () => {
  it('file:openWorkflow: given a chosen file, answers its name and text', async () => {
    const h = createDesktopHandlers(deps());
    await expect(dispatchDesktop(h, 'file:openWorkflow', undefined)).resolves.toEqual({
      ok: true,
      value: { canceled: false, path: '/home/u/flows/ota.workflow.yaml', fileName: 'ota.workflow.yaml', text: 'name: ota' },
    });
  });

  it('file:openWorkflow: given a cancelled dialog, answers canceled', async () => {
    const h = createDesktopHandlers(deps({ chooseOpenPath: () => Promise.resolve(undefined) }));
    await expect(dispatchDesktop(h, 'file:openWorkflow', {})).resolves.toEqual({ ok: true, value: { canceled: true } });
  });

  it('file:openWorkflow: given a file above the limit, answers BAD_REQUEST without reading it', async () => {
    let read = false;
    const h = createDesktopHandlers(
      deps({
        fileSize: () => Promise.resolve(LIMITS.definitionBytes + 1),
        readText: () => {
          read = true;
          return Promise.resolve('');
        },
      }),
    );
    const r = await dispatchDesktop(h, 'file:openWorkflow', {});
    expect(r).toMatchObject({ ok: false, error: { code: 'BAD_REQUEST' } });
    expect(read).toBe(false);
  });

  it('file:saveWorkflow: writes the text where the user chose, starting from the suggested base name only', async () => {
    const d = deps();
    const h = createDesktopHandlers(d);
    const r = await dispatchDesktop(h, 'file:saveWorkflow', { suggestedName: '../../etc/ota.workflow.json', text: '{}' });
    expect(r).toEqual({ ok: true, value: { canceled: false, path: '/home/u/out/ota.workflow.json' } });
    expect(d.written).toEqual([['/home/u/out/ota.workflow.json', '{}']]);
  });

  it('file:saveWorkflow: given bad input, answers BAD_REQUEST naming the field and writes nothing', async () => {
    const d = deps();
    const h = createDesktopHandlers(d);
    await expect(dispatchDesktop(h, 'file:saveWorkflow', { suggestedName: 'a.json' })).resolves.toMatchObject({ ok: false, error: { code: 'BAD_REQUEST', message: expect.stringContaining('text') } });
    await expect(dispatchDesktop(h, 'file:saveWorkflow', { suggestedName: 'a.json', text: 'x'.repeat(LIMITS.definitionBytes + 1) })).resolves.toMatchObject({ ok: false, error: { code: 'BAD_REQUEST' } });
    await expect(dispatchDesktop(h, 'file:saveWorkflow', { suggestedName: 'a.json', text: '{}', extra: 1 })).resolves.toMatchObject({ ok: false, error: { code: 'BAD_REQUEST' } });
    expect(d.written).toEqual([]);
  });

  it('answers file-system failures as INTERNAL data, never a throw', async () => {
    const h = createDesktopHandlers(deps({ writeText: () => Promise.reject(new Error('EACCES: permission denied')) }));
    await expect(dispatchDesktop(h, 'file:saveWorkflow', { suggestedName: 'a.json', text: '{}' })).resolves.toEqual({
      ok: false,
      error: { code: 'INTERNAL', message: 'file:saveWorkflow: EACCES: permission denied' },
    });
  });

  it('app:openDatabase moves the app onto a location and answers where it is; the engine\'s open error keeps its code; an empty location is BAD_REQUEST', async () => {
    const opened: string[] = [];
    const h = createDesktopHandlers(
      deps({
        openDatabase: (location) => {
          opened.push(location);
          if (location.includes('down')) return Promise.reject(new EngineError('DATABASE_UNAVAILABLE', 'cannot reach postgres://u@down:5432/runnel'));
          return Promise.resolve(location.replace(':secret@', '@'));
        },
      }),
    );
    await expect(dispatchDesktop(h, 'app:openDatabase', { location: ' postgres://u:secret@db:5432/runnel ' })).resolves.toEqual({
      ok: true,
      value: { location: 'postgres://u@db:5432/runnel' },
    });
    await expect(dispatchDesktop(h, 'app:openDatabase', { location: 'postgres://u@down:5432/runnel' })).resolves.toMatchObject({
      ok: false,
      error: { code: 'DATABASE_UNAVAILABLE', message: 'cannot reach postgres://u@down:5432/runnel' },
    });
    await expect(dispatchDesktop(h, 'app:openDatabase', { location: '  ' })).resolves.toMatchObject({ ok: false, error: { code: 'BAD_REQUEST' } });
    expect(opened).toEqual(['postgres://u:secret@db:5432/runnel', 'postgres://u@down:5432/runnel']);
  });

  it('app:info answers the database in use; an unknown channel is UNKNOWN_CHANNEL', async () => {
    const h = createDesktopHandlers(deps());
    await expect(dispatchDesktop(h, 'app:info', undefined)).resolves.toEqual({ ok: true, value: { dbPath: '/home/u/.config/Runnel/runnel.db', version: '0.1.0', platform: 'linux' } });
    await expect(dispatchDesktop(h, 'workflow:list', {})).resolves.toMatchObject({ ok: false, error: { code: 'UNKNOWN_CHANNEL' } });
  });
});

describe('desktop app:notify', () => {
  it('shows an OS notification and answers whether it was clicked; without notifications, not clicked', async () => {
    const shown: unknown[] = [];
    const h1 = createDesktopHandlers(deps({ notify: async (n) => (shown.push(n), true) }));
    await expect(
      dispatchDesktop(h1, 'app:notify', { title: 'Instance 4 is SUSPENDED', body: 'open it' }),
    ).resolves.toEqual({ ok: true, value: { clicked: true } });
    expect(shown).toEqual([{ title: 'Instance 4 is SUSPENDED', body: 'open it' }]);
    await expect(
      dispatchDesktop(createDesktopHandlers(deps()), 'app:notify', { title: 't', body: '' }),
    ).resolves.toEqual({ ok: true, value: { clicked: false } });
    await expect(dispatchDesktop(h1, 'app:notify', { title: '', body: 'x' })).resolves.toMatchObject({
      ok: false,
      error: { code: 'BAD_REQUEST' },
    });
  });
});
