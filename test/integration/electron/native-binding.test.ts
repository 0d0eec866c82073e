// The engine really loads the better-sqlite3 addon it is given (in the desktop app, the Electron
// build electron/native-binding.ts locates), on a real file, and refuses a missing one without
// creating the file.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { afterEach, describe, expect, it } from 'vitest';
import { Engine } from '../../../engine/runtime/engine';
import { tempDir } from '../../helpers/temp-engine';

const nodeBuild = path.join(path.dirname(createRequire(import.meta.url).resolve('better-sqlite3/package.json')), 'build/Release/better_sqlite3.node');

let cleanup: () => void = () => undefined;
afterEach(() => cleanup());

describe('electron native binding', () => {
  it('the engine opens its file with the addon it is given, and refuses a missing one', async () => {
    const t = tempDir();
    cleanup = t.cleanup;
    const engine = Engine.open(path.join(t.dir, 'a.db'), { nativeBinding: nodeBuild });
    expect((await engine.listWorkflows())).toEqual([]);
    await engine.close();
    expect(() => Engine.open(path.join(t.dir, 'b.db'), { nativeBinding: path.join(t.dir, 'missing.node') })).toThrow();
    expect(fs.existsSync(path.join(t.dir, 'b.db'))).toBe(false);
  });
});
