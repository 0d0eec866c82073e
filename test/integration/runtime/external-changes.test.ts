// Another process (here: a second Engine on the same database, as `npx runnel demo --db` or `deploy`
// would be) commits changes the first engine never sees as events; `watchExternalChanges` turns
// them into one `store.changed` event, and the host's batcher forwards it at most once per batch.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Engine } from '../../../engine/runtime/engine';
import type { EngineEvent } from '../../../engine/runtime/events';
import { EventBatcher } from '../../../engine/api/event-batcher';
import { ContractEventSchema, type EventBatch } from '../../../engine/api/contract';
import { runToSettled, tempEngine } from '../../helpers/temp-engine';

const QUICK = JSON.parse(
  fs.readFileSync(path.join(import.meta.dirname, '../../fixtures/api-quick.workflow.json'), 'utf8'),
) as Record<string, unknown>;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function waitFor(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const t0 = Date.now();
  return new Promise((resolve) => {
    const tick = () => {
      if (check()) resolve(true);
      else if (Date.now() - t0 > timeoutMs) resolve(false);
      else setTimeout(tick, 20);
    };
    tick();
  });
}

describe('Engine.watchExternalChanges', () => {
  it('emits store.changed within ~2 s when a second engine on the file starts and completes an instance', async () => {
    const first = tempEngine();
    cleanups.push(first.close);
    const seen: EngineEvent[] = [];
    cleanups.push(first.engine.on((e) => seen.push(e)));
    const stop = first.engine.watchExternalChanges(100);
    cleanups.push(stop);
    // its own writes are not "external"
    await first.engine.deploy(QUICK);
    await new Promise((r) => setTimeout(r, 300));
    expect(seen.filter((e) => e.type === 'store.changed')).toEqual([]);

    const second = Engine.open(first.file, { pollIntervalMs: 10 });
    cleanups.push(() => second.close());
    const id = await second.start('api-quick');
    const done = await runToSettled(second, id);
    expect(done.status).toBe('COMPLETED');

    const t0 = Date.now();
    expect(await waitFor(() => seen.some((e) => e.type === 'store.changed'), 2000)).toBe(true);
    expect(Date.now() - t0).toBeLessThan(2000);
    // no instance event crossed processes: only the change notice did
    expect(seen.filter((e) => e.type !== 'store.changed')).toEqual([]);
    // and the first engine reads the result
    expect((await first.engine.getInstance(id)).status).toBe('COMPLETED');

    // stopped: no more notices
    stop();
    const before = seen.length;
    await second.start('api-quick');
    await new Promise((r) => setTimeout(r, 400));
    expect(seen.length).toBe(before);
  });

  it('is coalesced to one store.changed per batch, as a contract event', () => {
    const batches: EventBatch[] = [];
    const b = new EventBatcher({ intervalMs: 1000, onBatch: (x) => batches.push(x) });
    b.push({ type: 'store.changed' });
    b.push({ type: 'instance.changed', instanceId: 1, status: 'RUNNING' });
    b.push({ type: 'store.changed' });
    b.flush();
    expect(batches).toHaveLength(1);
    const events = batches[0]?.events ?? [];
    expect(events.filter((e) => e.type === 'store.changed')).toHaveLength(1);
    for (const e of events) expect(ContractEventSchema.parse(e)).toEqual(e);
    b.close();
  });
});
