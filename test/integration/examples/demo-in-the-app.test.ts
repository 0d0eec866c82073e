/**
 * The demo's file as the app finds it (issue 15, item 5): a host opened on it with the demo's
 * plug-in (`npm run web`, `serve --plugin examples/demo-plugin.ts`) knows the csv-pipeline's
 * node types and serves the device fleet again on the demo's port, so the OTA instances the demo
 * left SUSPENDED reach their devices when a person acts on them (here: cancel with compensation,
 * the path their deadline takes too) instead of compensating against a closed port and
 * suspending again. A real demo run on a real file, the real fleet server, the contract's dispatch.
 */
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHandlers, dispatch } from '../../../engine/api/handlers';
import { loadRegistry } from '../../../engine/cli/host';
import { Engine } from '../../../engine/runtime/engine';
import { REPO_ROOT, runCli } from '../../helpers/cli';
import { tempDir } from '../../helpers/temp-engine';

/** A TCP port free on 127.0.0.1 right now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

describe('the demo file in a host with the demo plug-in', () => {
  let tmp: ReturnType<typeof tempDir>;
  let db: string;
  let port: number;
  const before = process.env.RUNNEL_DEMO_FLEET_PORT;
  beforeAll(async () => {
    tmp = tempDir();
    db = path.join(tmp.dir, 'runnel.db');
    port = await freePort();
    process.env.RUNNEL_DEMO_FLEET_PORT = String(port);
    const r = await runCli('demo', '--db', db, '--devices', '10');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`fleet of 10 devices at http://127.0.0.1:${port}`);
    expect(r.stdout).toContain(`look at it in the app: npx runnel serve --open --plugin examples/demo-plugin.ts --db ${db}`);
  }, 120_000);
  afterAll(() => {
    if (before === undefined) delete process.env.RUNNEL_DEMO_FLEET_PORT;
    else process.env.RUNNEL_DEMO_FLEET_PORT = before;
    tmp.cleanup();
  });

  it('without the plug-in the pipeline names what is missing; with it the pipeline is valid and a suspended OTA instance compensates against a live fleet', async () => {
    const plain = Engine.open(db, { registry: await loadRegistry([]) });
    try {
      const def = (await plain.exportWorkflow('csv-pipeline')) as unknown;
      const r = await dispatch(createHandlers(plain), 'workflow:validate', { definition: def });
      expect(r.ok && (r.value as { problems: { code: string; message: string }[] }).problems.map((p) => [p.code, p.message])).toEqual([
        ['UNKNOWN_TYPE', 'node "extract": type "csv.read" is not a known node type (not built in, and no loaded plug-in registers it)'],
        ['UNKNOWN_TYPE', 'node "load": type "sqlite.load" is not a known node type (not built in, and no loaded plug-in registers it)'],
      ]);
    } finally {
      await plain.close();
    }

    const registry = await loadRegistry([path.join(REPO_ROOT, 'examples', 'demo-plugin.ts')]);
    const engine = Engine.open(db, { registry, pollIntervalMs: 10 });
    try {
      const def = (await engine.exportWorkflow('csv-pipeline')) as unknown;
      const r = await dispatch(createHandlers(engine), 'workflow:validate', { definition: def });
      expect(r).toMatchObject({ ok: true, value: { ok: true, problems: [] } });

      // The fleet answers on the demo's port again (a device may answer its first calls 503, as the demo's did).
      let res = await fetch(`http://127.0.0.1:${port}/devices/dev-09`);
      for (let i = 0; i < 3 && res.status === 503; i++) res = await fetch(`http://127.0.0.1:${port}/devices/dev-09`);
      expect(res.status).toBe(200);
      expect(((await res.json()) as { id: string }).id).toBe('dev-09');

      const [suspended] = await engine.listInstances({ status: ['SUSPENDED'], workflow: 'ota-upgrade' });
      expect(suspended).toBeDefined();
      const id = suspended!.id;
      await engine.cancel(id, { compensate: true, actor: 'test' });
      await engine.runUntil(async () => !['COMPENSATING', 'RUNNING'].includes((await engine.instanceState(id)).status), 30_000);
      const after = await engine.getInstance(id);
      expect(after.status).toBe('CANCELLED');
      expect(after.nodes.find((n) => n.id === 'flash')?.status).toBe('COMPENSATED');
    } finally {
      await engine.close();
    }
  });
});
