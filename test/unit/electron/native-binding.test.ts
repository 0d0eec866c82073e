// better-sqlite3 for Electron in development: where its build lives and how a wrong-ABI build is
// caught (never importing `electron`); test/integration/electron/native-binding.test.ts opens an
// engine with the addon.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { addonTargetsAbi, electronNativeBinding, electronNativeDir } from '../../../electron/native-binding';

const nodeBuild = path.join(path.dirname(createRequire(import.meta.url).resolve('better-sqlite3/package.json')), 'build/Release/better_sqlite3.node');

describe('electron native binding', () => {
  it('caches one build per Electron version, platform and architecture, inside node_modules', () => {
    expect(electronNativeDir('/repo', '45.5.0', 'linux', 'x64')).toBe(path.join('/repo', 'node_modules/.cache/runnel-electron/45.5.0-linux-x64'));
    expect(electronNativeBinding('/repo', '45.5.0', 'darwin', 'arm64')).toBe(path.join('/repo', 'node_modules/.cache/runnel-electron/45.5.0-darwin-arm64/better_sqlite3.node'));
  });

  it("tells the installed Node build from an Electron one by the ABI it registers for", () => {
    const addon = fs.readFileSync(nodeBuild);
    expect(addonTargetsAbi(addon, process.versions.modules)).toBe(true);
    expect(addonTargetsAbi(addon, 150)).toBe(false);
    expect(addonTargetsAbi(new Uint8Array([1, 2, 3]), 150)).toBe(false);
  });
});
