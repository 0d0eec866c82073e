/**
 * better-sqlite3 for Electron in development, without touching the Node build.
 *
 * better-sqlite3 is a V8 addon, compiled for one ABI (`NODE_MODULE_VERSION`): the installed build
 * is Node's (tests and the CLI load it); Electron 45 needs ABI 150. `npm start` therefore compiles
 * a second copy once (`prepare-native.ts`) into `node_modules/.cache/runnel-electron/<electron>-
 * <platform>-<arch>/better_sqlite3.node`, and the desktop app's engine worker loads that file
 * through better-sqlite3's `nativeBinding` option. Packaged apps need none of this:
 * electron-builder rebuilds the copy inside the package (`npm run dist`).
 *
 * Pure: no `electron` import.
 */
import path from 'node:path';

/** The cache folder of the Electron build for one Electron version and platform. */
export function electronNativeDir(root: string, electronVersion: string, platform: string = process.platform, arch: string = process.arch): string {
  return path.join(root, 'node_modules', '.cache', 'runnel-electron', `${electronVersion}-${platform}-${arch}`);
}

/** The Electron build of better-sqlite3 inside {@link electronNativeDir}. */
export function electronNativeBinding(root: string, electronVersion: string, platform: string = process.platform, arch: string = process.arch): string {
  return path.join(electronNativeDir(root, electronVersion, platform, arch), 'better_sqlite3.node');
}

/**
 * Whether a compiled addon registers itself for `abi` (its `node_register_module_v<abi>` symbol):
 * a build against the wrong headers (Node's instead of Electron's) is caught here, not as a
 * NODE_MODULE_VERSION crash at start-up.
 */
export function addonTargetsAbi(addon: Uint8Array, abi: string | number): boolean {
  return Buffer.from(addon.buffer, addon.byteOffset, addon.byteLength).includes(`node_register_module_v${abi}`);
}
