// Where the desktop app keeps its database, and how the choice is remembered.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readSettings, resolveDatabasePath, writeSettings } from '../../../electron/main/settings';
import { tempDir } from '../../helpers/temp-engine';

describe('resolveDatabasePath', () => {
  const base = { argv: ['electron', '.'], env: {}, settings: {}, userDataDir: '/home/u/.config/Runnel', cwd: '/work' };

  it('given nothing else, uses runnel.db in the user-data folder', () => {
    expect(resolveDatabasePath(base)).toBe('/home/u/.config/Runnel/runnel.db');
  });

  it('prefers --db over RUNNEL_DB over the remembered choice, resolving relative paths', () => {
    const all = { ...base, env: { RUNNEL_DB: 'env.db' }, settings: { databasePath: '/data/chosen.db' } };
    expect(resolveDatabasePath({ ...all, argv: ['electron', '.', '--db=cli.db'] })).toBe('/work/cli.db');
    expect(resolveDatabasePath({ ...all, argv: ['electron', '.', '--db', '/abs/cli.db'] })).toBe('/abs/cli.db');
    expect(resolveDatabasePath(all)).toBe('/work/env.db');
    expect(resolveDatabasePath({ ...base, settings: { databasePath: '/data/chosen.db' } })).toBe('/data/chosen.db');
  });

  it('keeps a PostgreSQL URL as given from --db, RUNNEL_DB or the remembered choice (not a path)', () => {
    const url = 'postgres://runnel@db.example:5432/runnel';
    expect(resolveDatabasePath({ ...base, argv: ['electron', '.', `--db=${url}`] })).toBe(url);
    expect(resolveDatabasePath({ ...base, argv: ['electron', '.', '--db', 'postgresql://u@h/d'] })).toBe('postgresql://u@h/d');
    expect(resolveDatabasePath({ ...base, env: { RUNNEL_DB: url } })).toBe(url);
    expect(resolveDatabasePath({ ...base, settings: { databasePath: url } })).toBe(url);
  });

  it('ignores a dangling --db and an empty remembered path', () => {
    expect(resolveDatabasePath({ ...base, argv: ['electron', '.', '--db'], settings: { databasePath: '' } })).toBe('/home/u/.config/Runnel/runnel.db');
    expect(resolveDatabasePath({ ...base, argv: ['electron', '.', '--db', '--other'] })).toBe('/home/u/.config/Runnel/runnel.db');
  });
});

describe('settings file', () => {
  let cleanup: () => void = () => undefined;
  afterEach(() => cleanup());

  it('round-trips and keeps unknown keys; a missing or broken file reads as {}', () => {
    const t = tempDir();
    cleanup = t.cleanup;
    const dir = path.join(t.dir, 'user-data');
    expect(readSettings(dir)).toEqual({});
    writeSettings(dir, { databasePath: '/data/a.db', theme: 'dark' });
    expect(readSettings(dir)).toEqual({ databasePath: '/data/a.db', theme: 'dark' });
    fs.writeFileSync(path.join(dir, 'settings.json'), '{ not json');
    expect(readSettings(dir)).toEqual({});
    fs.writeFileSync(path.join(dir, 'settings.json'), '[1,2]');
    expect(readSettings(dir)).toEqual({});
    expect(fs.readdirSync(dir)).toEqual(['settings.json']);
  });
});
