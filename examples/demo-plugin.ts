/**
 * The demo's plug-in for hosts opened on the demo's file (`npm run web`, or
 * `npx runnel serve --plugin examples/demo-plugin.ts`): the csv-pipeline example's node types
 * (examples/pipeline-nodes.ts), and the simulated device fleet served again on the demo's port
 * ({@link demoFleetPort}), so the OTA instances the demo left waiting for a person reach their
 * devices when resumed, cancelled with compensation, or failed by their deadline — instead of a
 * closed port.
 *
 * The fleet has {@link PLUGIN_FLEET_SIZE} devices: `createFleet` gives device n the same id, fate
 * and transient failures whatever the fleet's size, so every device of a demo of up to that many
 * devices is found. It starts fresh (the demo's flashes are not remembered), as a restarted
 * simulator would. When the port is taken (the demo itself, or another host with this plug-in,
 * is serving a fleet there) none is started. The server does not keep the process alive.
 */
import type { NodeRegistry } from '../engine/nodes/index';
import { demoFleetPort, startDeviceServer, type DeviceFleetServer } from './device-server';
import { register as registerPipelineNodes } from './pipeline-nodes';

/** Devices of the fleet the plug-in serves. */
export const PLUGIN_FLEET_SIZE = 2000;

let fleet: Promise<DeviceFleetServer | undefined> | undefined;

/**
 * Starts the fleet once per process on the demo's port; resolves with it, or undefined when the
 * port is taken.
 *
 * @throws the server's listen error other than EADDRINUSE.
 */
export function startPluginFleet(): Promise<DeviceFleetServer | undefined> {
  fleet ??= startDeviceServer({ size: PLUGIN_FLEET_SIZE, port: demoFleetPort() }).then(
    (f) => {
      f.unref();
      console.error(`runnel demo plug-in: the demo's device fleet runs at ${f.baseUrl}`);
      return f;
    },
    (err: unknown) => {
      if ((err as { code?: unknown }).code === 'EADDRINUSE') return undefined;
      throw err;
    },
  );
  return fleet;
}

/** The plug-in entry point (`--plugin`): the pipeline's node types, then the fleet. */
export async function register(registry: NodeRegistry): Promise<void> {
  registerPipelineNodes(registry);
  await startPluginFleet();
}
