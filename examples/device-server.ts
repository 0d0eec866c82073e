/**
 * A simulated device fleet behind a small HTTP server on 127.0.0.1, for the OTA example.
 *
 * Every device has a fate fixed by its position in the fleet, so runs and tests are stable:
 * - `upgrade`: upgrades cleanly (after a few transient 503s, see below);
 * - `current`: already on the target version, so the workflow skips it;
 * - `bricked`: never comes back after the reboot (500 on every reboot), so the workflow fails and
 *   rolls the flash back (compensation);
 * - `flaky`: fails its health check on every try (503), so the workflow SUSPENDS it at `verify`
 *   for a person; {@link DeviceFleetServer.repair} makes it healthy, for a resume.
 *
 * Transient failures are deterministic: a seeded PRNG gives each (device, endpoint) a count of
 * 0–2 leading 503s, answered by counting calls, whatever the timing. Every call is recorded with
 * its `Idempotency-Key`; a repeated flash with a key that already succeeded is answered from the
 * record (`idempotent-replay: true`) instead of flashing twice.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mulberry32 } from './data/generate-orders';

/** What happens to a device during an upgrade: see the module comment. */
export type DeviceFate = 'upgrade' | 'current' | 'bricked' | 'flaky';

/** The endpoints of a device, as recorded in {@link RecordedCall.endpoint}. */
export type Endpoint = 'check' | 'download' | 'flash' | 'rollback' | 'reboot' | 'health';

/** One simulated device. */
export interface Device {
  id: string;
  model: string;
  /** The firmware version it runs now. */
  version: string;
  fate: DeviceFate;
  /** Leading 503s still to answer, per endpoint. */
  transient: Partial<Record<Endpoint, number>>;
  /** The version before the last flash (what a rollback restores). */
  previousVersion?: string;
  /** Set by {@link DeviceFleetServer.repair}: a `flaky` device then passes its health check. */
  repaired?: boolean;
}

/** One request the server answered. */
export interface RecordedCall {
  method: string;
  path: string;
  deviceId: string | undefined;
  endpoint: Endpoint | undefined;
  status: number;
  idempotencyKey: string | undefined;
  at: number;
}

/** Options of {@link startDeviceServer}. */
export interface FleetOptions {
  /** Devices in the fleet (default 20), named `dev-01`, `dev-02`, …. */
  size?: number;
  /** Seed of the transient-failure counts (default 7). */
  seed?: number;
  /** The version devices are upgraded to (default `2.0.0`). */
  targetVersion?: string;
  /** The version devices start on (default `1.4.2`). */
  startVersion?: string;
  /** TCP port on 127.0.0.1 (default 0: a free one). A port in use rejects with EADDRINUSE. */
  port?: number;
}

/**
 * The port the demo's fleet listens on (`runnel demo` and the demo plug-in,
 * examples/demo-plugin.ts), so the instances the demo leaves in the file find a fleet again when
 * the app is opened on it. `RUNNEL_DEMO_FLEET_PORT` overrides it.
 */
export function demoFleetPort(): number {
  const given = Number(process.env.RUNNEL_DEMO_FLEET_PORT);
  return Number.isInteger(given) && given > 0 && given < 65536 ? given : 47_110;
}

/** The fate of the device at 1-based position `n`: the pattern repeats every ten devices. */
export function fateOf(n: number): DeviceFate {
  const PATTERN: readonly DeviceFate[] = [
    'upgrade',
    'upgrade',
    'upgrade',
    'current',
    'upgrade',
    'upgrade',
    'bricked',
    'upgrade',
    'upgrade',
    'flaky',
  ];
  return PATTERN[(n - 1) % PATTERN.length] ?? 'upgrade';
}

/** The fleet a {@link startDeviceServer} call serves, without starting anything (tests predict outcomes with it). */
export function createFleet(options: FleetOptions = {}): Device[] {
  const size = options.size ?? 20;
  const rand = mulberry32(options.seed ?? 7);
  const target = options.targetVersion ?? '2.0.0';
  const start = options.startVersion ?? '1.4.2';
  const endpoints: Endpoint[] = ['check', 'download', 'flash', 'rollback', 'reboot', 'health'];
  const devices: Device[] = [];
  for (let n = 1; n <= size; n++) {
    const fate = fateOf(n);
    const transient: Partial<Record<Endpoint, number>> = {};
    for (const e of endpoints) {
      const r = rand();
      // 0–2 leading 503s, never more than the workflow's retries absorb (reboot allows 3 attempts).
      const count = r < 0.6 ? 0 : r < 0.85 ? 1 : 2;
      if (count > 0) transient[e] = count;
    }
    devices.push({
      id: `dev-${String(n).padStart(2, '0')}`,
      model: n % 2 === 0 ? 'sensor-v2' : 'gateway-x',
      version: fate === 'current' ? target : start,
      fate,
      transient,
    });
  }
  return devices;
}

/** A running fleet server. */
export interface DeviceFleetServer {
  /** `http://127.0.0.1:<port>` */
  readonly baseUrl: string;
  readonly targetVersion: string;
  readonly devices: ReadonlyMap<string, Device>;
  /** Every request answered, oldest first. */
  readonly calls: readonly RecordedCall[];
  /** Makes a `flaky` device pass its health check from now on. */
  repair(deviceId: string): void;
  /** Lets the process exit while the server still listens (a host's plug-in). */
  unref(): void;
  close(): Promise<void>;
}

function send(
  res: http.ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

async function readJson(req: http.IncomingMessage): Promise<Record<string, unknown>> {
  let text = '';
  for await (const chunk of req) text += String(chunk);
  if (text.trim() === '') return {};
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

const ROUTES: Array<{ method: string; pattern: RegExp; endpoint: Endpoint }> = [
  { method: 'GET', pattern: /^\/devices\/([^/]+)$/, endpoint: 'check' },
  { method: 'POST', pattern: /^\/devices\/([^/]+)\/download$/, endpoint: 'download' },
  { method: 'POST', pattern: /^\/devices\/([^/]+)\/flash$/, endpoint: 'flash' },
  { method: 'POST', pattern: /^\/devices\/([^/]+)\/rollback$/, endpoint: 'rollback' },
  { method: 'POST', pattern: /^\/devices\/([^/]+)\/reboot$/, endpoint: 'reboot' },
  { method: 'GET', pattern: /^\/devices\/([^/]+)\/health$/, endpoint: 'health' },
];

/**
 * Starts the fleet server on 127.0.0.1 at `options.port` (default a free port).
 *
 * API (JSON in and out): `GET /devices/:id` → `{ id, model, version }`; `POST …/download`
 * `{ version }` → `{ version, checksum, sizeBytes }`; `POST …/flash` `{ version, checksum }` →
 * `{ previousVersion, version }`; `POST …/rollback` `{ version }` → `{ version }`; `POST …/reboot`
 * → `{ rebooted: true }`; `GET …/health` → `{ version, healthy: true }`. Unknown devices get 404,
 * a bad checksum 422.
 */
export async function startDeviceServer(options: FleetOptions = {}): Promise<DeviceFleetServer> {
  const targetVersion = options.targetVersion ?? '2.0.0';
  const devices = new Map(createFleet(options).map((d) => [d.id, d]));
  const calls: RecordedCall[] = [];
  const flashed = new Map<string, unknown>();

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const route = ROUTES.find((r) => r.method === req.method && r.pattern.test(url.pathname));
    const deviceId = route ? decodeURIComponent(route.pattern.exec(url.pathname)?.[1] ?? '') : undefined;
    const key = req.headers['idempotency-key'];
    const body = req.method === 'POST' ? await readJson(req) : {};
    const reply = (status: number, payload: unknown, headers?: Record<string, string>): void => {
      calls.push({
        method: req.method ?? '',
        path: url.pathname,
        deviceId,
        endpoint: route?.endpoint,
        status,
        idempotencyKey: typeof key === 'string' ? key : undefined,
        at: Date.now(),
      });
      send(res, status, payload, headers);
    };
    if (!route || deviceId === undefined) return reply(404, { error: 'no such endpoint' });
    const device = devices.get(deviceId);
    if (!device) return reply(404, { error: `no device ${deviceId}` });
    const left = device.transient[route.endpoint] ?? 0;
    if (left > 0) {
      device.transient[route.endpoint] = left - 1;
      return reply(503, { error: 'device busy, try again' });
    }
    switch (route.endpoint) {
      case 'check':
        return reply(200, { id: device.id, model: device.model, version: device.version });
      case 'download': {
        const version = typeof body.version === 'string' ? body.version : targetVersion;
        return reply(200, { version, checksum: `sha256-${version}-${device.model}`, sizeBytes: 1_048_576 });
      }
      case 'flash': {
        if (typeof key === 'string' && flashed.has(key))
          return reply(200, flashed.get(key), { 'idempotent-replay': 'true' });
        const version = typeof body.version === 'string' ? body.version : targetVersion;
        if (body.checksum !== `sha256-${version}-${device.model}`)
          return reply(422, { error: 'checksum mismatch' });
        const result = { previousVersion: device.version, version };
        device.previousVersion = device.version;
        device.version = version;
        if (typeof key === 'string') flashed.set(key, result);
        return reply(200, result);
      }
      case 'rollback': {
        const version =
          typeof body.version === 'string' ? body.version : (device.previousVersion ?? device.version);
        device.version = version;
        return reply(200, { version });
      }
      case 'reboot':
        if (device.fate === 'bricked')
          return reply(500, { error: 'device did not come back after the reboot' });
        return reply(200, { rebooted: true });
      case 'health':
        if (device.fate === 'flaky' && !device.repaired)
          return reply(503, { error: 'health check failed: watchdog resets' });
        return reply(200, { version: device.version, healthy: true });
    }
  };

  const server = http.createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) send(res, 500, { error: String(err) });
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    targetVersion,
    devices,
    calls,
    unref() {
      server.unref();
    },
    repair(deviceId) {
      const d = devices.get(deviceId);
      if (d) d.repaired = true;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
