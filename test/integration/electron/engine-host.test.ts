// The desktop app's engine worker thread, through its main-side host (no Electron involved):
// a real worker thread (the TypeScript source, through tsx) on a real temp database.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { EventBatch } from '../../../engine/api/contract';
import { SqliteEngine } from '../../../engine/runtime/engine';
import { EngineHost } from '../../../electron/main/engine-host';
import { tempDir } from '../../helpers/temp-engine';

const workerUrl = new URL('../../helpers/engine-worker-tsx.mjs', import.meta.url);

const quick = {
  name: 'host-quick',
  nodes: [
    { id: 'a', type: 'pass', config: { result: { n: 1 } }, output: 'a' },
    { id: 'b', type: 'pass' },
  ],
  edges: [{ from: 'a', to: 'b' }],
};

let cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
});

async function startHost(onEvents?: (b: EventBatch) => void) {
  const t = tempDir('runnel-host-');
  const dbPath = path.join(t.dir, 'runnel.db');
  const host = await EngineHost.start({ dbPath, workerUrl, pollIntervalMs: 10, ...(onEvents ? { onEvents } : {}) });
  cleanups.push(async () => {
    await host.close();
    t.cleanup();
  });
  return { host, dbPath, dir: t.dir };
}

describe('EngineHost + engine worker', () => {
  it('given a saved workflow, starts an instance in the worker and streams its events to COMPLETED', async () => {
    const batches: EventBatch[] = [];
    const { host } = await startHost((b) => batches.push(b));
    const saved = await host.invoke('workflow:save', { definition: quick });
    expect(saved).toMatchObject({ ok: true, value: { name: 'host-quick', version: 1, created: true } });
    const started = await host.invoke('instance:start', { workflow: 'host-quick' });
    expect(started.ok).toBe(true);
    const id = started.ok ? (started.value as { id: number }).id : -1;
    const deadline = Date.now() + 15_000;
    const finished = () => batches.some((b) => b.events.some((e) => e.type === 'instance.finished' && e.instanceId === id));
    while (!finished() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(batches.flatMap((b) => b.events).find((e) => e.type === 'instance.finished')).toEqual({ type: 'instance.finished', instanceId: id, status: 'COMPLETED' });
    expect(batches.flatMap((b) => b.events).some((e) => e.type === 'instance.created' && e.instanceId === id)).toBe(true);
    await expect(host.invoke('instance:get', { id })).resolves.toMatchObject({ ok: true, value: { status: 'COMPLETED' } });
  });

  it('parses every payload in the worker before a handler runs: bad input and unknown channels are data', async () => {
    const { host } = await startHost();
    await expect(host.invoke('instance:get', { id: 'one' })).resolves.toMatchObject({ ok: false, error: { code: 'BAD_REQUEST', message: expect.stringContaining('id') } });
    await expect(host.invoke('no:such', {})).resolves.toMatchObject({ ok: false, error: { code: 'UNKNOWN_CHANNEL' } });
    await expect(host.invoke('instance:get', { id: 999 })).resolves.toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
    await expect(host.invoke('workflow:list', () => 1)).resolves.toMatchObject({ ok: false, error: { code: 'BAD_REQUEST' } });
    await expect(host.invoke('workflow:list', undefined)).resolves.toEqual({ ok: true, value: [] });
  });

  it('shuts down gracefully: in-flight calls finish, later ones are refused, the file is closed and checkpointed', async () => {
    const { host, dbPath } = await startHost();
    await host.invoke('workflow:save', { definition: quick });
    const inFlight = host.invoke('instance:start', { workflow: 'host-quick' });
    const closing = host.close();
    await expect(host.invoke('workflow:list', undefined)).resolves.toMatchObject({ ok: false, error: { code: 'CANCELLED' } });
    expect((await inFlight).ok).toBe(true);
    await closing;
    await expect(host.invoke('workflow:list', undefined)).resolves.toMatchObject({ ok: false });
    // The WAL was checkpointed into the main file, and no lease is held by the stopped worker.
    expect(fs.existsSync(`${dbPath}-wal`) ? fs.statSync(`${dbPath}-wal`).size : 0).toBe(0);
    const engine = SqliteEngine.open(dbPath);
    try {
      expect((await engine.listWorkflows()).map((w: { name: string }) => w.name)).toEqual(['host-quick']);
      const leased = engine.db.raw.prepare(`SELECT count(*) AS n FROM schedule WHERE lease_owner IS NOT NULL`).get() as { n: number };
      expect(leased.n).toBe(0);
    } finally {
      await engine.close();
    }
  });

  it('given a database it cannot open, rejects with the engine\'s code', async () => {
    const t = tempDir('runnel-host-');
    cleanups.push(t.cleanup);
    const dbPath = path.join(t.dir, 'broken.db');
    fs.writeFileSync(dbPath, 'this is not a SQLite file, not even close'.repeat(200));
    await expect(EngineHost.start({ dbPath, workerUrl })).rejects.toThrow(/DATABASE_CORRUPT/);
  });
});
