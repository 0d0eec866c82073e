import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDeviceServer, type DeviceFate, type DeviceFleetServer } from '../../../examples/device-server';
import { example, parseJson, runCli } from '../../helpers/cli';
import { tempDir } from '../../helpers/temp-engine';

interface InstanceJson {
  id: number;
  status: string;
  variables: Record<string, unknown>;
  suspension?: { nodeId: string; attempts: number };
  nodes: Array<{ id: string; status: string; attempt: number }>;
}

const OTA = example('ota-upgrade.workflow.json');

describe('example ota-upgrade: `runnel run` for every device of a fleet', () => {
  let fleet: DeviceFleetServer;
  let tmp: ReturnType<typeof tempDir>;
  let db: string;
  const results = new Map<string, { code: number; inst: InstanceJson; fate: DeviceFate }>();

  beforeAll(async () => {
    // Given a fleet of 20 devices (14 to upgrade, 2 current, 2 bricked, 2 flaky) and a fresh file
    fleet = await startDeviceServer({ size: 20 });
    tmp = tempDir();
    db = path.join(tmp.dir, 'runnel.db');
    // When each device is upgraded with `runnel run … --json`
    for (const d of fleet.devices.values()) {
      const vars = JSON.stringify({
        deviceId: d.id,
        baseUrl: fleet.baseUrl,
        targetVersion: fleet.targetVersion,
      });
      const r = await runCli('run', OTA, '--db', db, '--json', '--vars', vars);
      expect(r.stderr).toBe('');
      results.set(d.id, { code: r.code, inst: parseJson<InstanceJson>(r), fate: d.fate });
    }
  }, 60_000);

  afterAll(async () => {
    await fleet.close();
    tmp.cleanup();
  });

  it('ends with exactly 16 completed, 2 compensated and 2 suspended, with the matching exit codes', () => {
    const count = (pred: (r: { code: number; inst: InstanceJson }) => boolean) =>
      [...results.values()].filter(pred).length;
    expect(results.size).toBe(20);
    expect(count((r) => r.inst.status === 'COMPLETED' && r.code === 0)).toBe(16);
    expect(
      count(
        (r) =>
          r.inst.status === 'FAILED' &&
          r.code === 1 &&
          r.inst.nodes.some((n) => n.id === 'flash' && n.status === 'COMPENSATED'),
      ),
    ).toBe(2);
    expect(
      count((r) => r.inst.status === 'SUSPENDED' && r.code === 3 && r.inst.suspension?.nodeId === 'verify'),
    ).toBe(2);
  });

  it('gives each device its fate: upgraded, skipped when current, rolled back when bricked, suspended when flaky', () => {
    for (const [id, { inst, fate }] of results) {
      const device = fleet.devices.get(id);
      const node = (n: string) => inst.nodes.find((x) => x.id === n)?.status;
      if (fate === 'upgrade') {
        expect(inst.status).toBe('COMPLETED');
        expect(device?.version).toBe('2.0.0');
        expect(inst.variables.health).toEqual({ version: '2.0.0', healthy: true });
      } else if (fate === 'current') {
        expect(inst.status).toBe('COMPLETED');
        expect([node('download'), node('flash'), node('verify')]).toEqual(['SKIPPED', 'SKIPPED', 'SKIPPED']);
      } else if (fate === 'bricked') {
        expect(inst.status).toBe('FAILED');
        expect(node('reboot')).toBe('FAILED');
        expect(device?.version).toBe('1.4.2');
      } else {
        expect(inst.status).toBe('SUSPENDED');
        expect(inst.suspension?.attempts).toBe(5);
      }
    }
  });

  it('sends stable idempotency keys: every flash and rollback carries <instance>:<node>[:compensate]', () => {
    const byDevice = new Map([...results].map(([id, r]) => [id, r.inst.id]));
    const flashes = fleet.calls.filter((c) => c.endpoint === 'flash');
    const rollbacks = fleet.calls.filter((c) => c.endpoint === 'rollback');
    expect(flashes.length).toBeGreaterThanOrEqual(16);
    for (const c of flashes) expect(c.idempotencyKey).toBe(`${byDevice.get(c.deviceId ?? '')}:flash`);
    expect(rollbacks.filter((c) => c.status === 200)).toHaveLength(2);
    for (const c of rollbacks)
      expect(c.idempotencyKey).toBe(`${byDevice.get(c.deviceId ?? '')}:flash:compensate`);
  });

  it('retried the transient 503s: a device answered 503 and the step still completed', () => {
    const retried = [...results.values()].filter(
      (r) => r.fate === 'upgrade' && r.inst.nodes.some((n) => n.status === 'COMPLETED' && n.attempt > 1),
    );
    expect(retried.length).toBeGreaterThan(0);
    expect(fleet.calls.some((c) => c.status === 503)).toBe(true);
  });

  it('lets a person resume a suspended device after it was repaired: retry → COMPLETED (exit 0)', async () => {
    const [deviceId, flaky] = [...results].find(([, r]) => r.fate === 'flaky') ?? [];
    if (!flaky || !deviceId) throw new Error('no flaky device');
    fleet.repair(deviceId);
    const r = await runCli(
      'resume',
      String(flaky.inst.id),
      '--action',
      'retry',
      '--actor',
      'ops',
      '--wait',
      '--json',
      '--db',
      db,
    );
    expect(r.code).toBe(0);
    expect(parseJson<InstanceJson>(r).status).toBe('COMPLETED');
    const h = parseJson<{ history: Array<{ type: string; actor: string | null }> }>(
      await runCli('show', String(flaky.inst.id), '--history', '--json', '--db', db),
    );
    expect(h.history.some((e) => e.type === 'instance.resumed' && e.actor === 'ops')).toBe(true);
  });
});
