/**
 * Example ota-fleet: a map over a list of devices, each an ota-upgrade child instance against the
 * simulated fleet (examples/device-server.ts). A bricked device is rolled back by its child's
 * compensation and tolerated (its result is null); a second failure fails the rollout and cancels
 * the upgrades still running.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDeviceServer, type DeviceFleetServer } from '../../../examples/device-server';
import { example, parseJson, runCli } from '../../helpers/cli';
import { tempDir } from '../../helpers/temp-engine';

describe('example ota-fleet: one rollout maps ota-upgrade over the devices', () => {
  let fleet: DeviceFleetServer;
  let tmp: ReturnType<typeof tempDir>;
  let db: string;
  beforeAll(async () => {
    fleet = await startDeviceServer({ size: 20 });
    tmp = tempDir();
    db = path.join(tmp.dir, 'runnel.db');
    expect((await runCli('deploy', example('ota-upgrade.workflow.json'), '--db', db)).code).toBe(0);
    expect((await runCli('deploy', example('ota-fleet.workflow.json'), '--db', db)).code).toBe(0);
  });
  afterAll(async () => {
    await fleet.close();
    tmp.cleanup();
  });

  const ids = (fates: string[]) => [...fleet.devices.values()].filter((d) => fates.includes(d.fate)).map((d) => d.id);

  it('upgrades the healthy devices and tolerates one bricked device (rolled back, null result)', async () => {
    const devices = [...ids(['upgrade', 'current']).slice(0, 5), ...ids(['bricked']).slice(0, 1)];
    const vars = JSON.stringify({ devices, baseUrl: fleet.baseUrl, targetVersion: fleet.targetVersion });
    const r = await runCli('start', 'ota-fleet', '--vars', vars, '--wait', '--db', db, '--json');
    const inst = parseJson<{ id: number; status: string; variables: { upgrades: unknown[]; summary: unknown } }>(r);
    expect(inst.status).toBe('COMPLETED');
    expect(inst.variables.upgrades).toHaveLength(6);
    expect(inst.variables.upgrades[5]).toBeNull();
    expect(inst.variables.summary).toEqual({ devices: 6, upgraded: 5, failed: 1 });
    const children = parseJson<{ businessKey: string | null; status: string; parentNodeId: string }[]>(await runCli('list', '--parent', String(inst.id), '--db', db, '--json'));
    expect(children.map((c) => c.status).sort()).toEqual(['COMPLETED', 'COMPLETED', 'COMPLETED', 'COMPLETED', 'COMPLETED', 'FAILED']);
    expect(children.every((c) => c.parentNodeId === 'rollout')).toBe(true);
  });

  it('fails the rollout at the second failure and cancels the upgrades still running', async () => {
    const devices = [...ids(['bricked']), ...ids(['upgrade'])];
    const vars = JSON.stringify({ devices, baseUrl: fleet.baseUrl, targetVersion: fleet.targetVersion });
    const r = await runCli('start', 'ota-fleet', '--vars', vars, '--wait', '--db', db, '--json');
    const inst = parseJson<{ id: number; status: string; error: { code: string; details: { failed: number; tolerated: number } } }>(r);
    expect(inst.status).toBe('FAILED');
    expect(inst.error).toMatchObject({ code: 'CHILD_FAILED', details: { failed: 2, tolerated: 1 } });
    const children = parseJson<{ status: string }[]>(await runCli('list', '--parent', String(inst.id), '--db', db, '--json'));
    expect(children.some((c) => ['RUNNING', 'WAITING', 'PENDING'].includes(c.status))).toBe(false);
  });
});
