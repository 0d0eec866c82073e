// End to end in Chromium on PostgreSQL (issue 11: the browser host and the monitor work unchanged
// there, live updates from other processes included): the host serves the app over a real
// PostgreSQL database; a `runnel run` in another process, on the same database, deploys a
// workflow and runs an instance to COMPLETED. The page shows the workflow, the row COMPLETED and
// the status bar's count without a reload; then an instance started from the page runs to
// COMPLETED on the host's own worker.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../../engine/runtime/engine';
import { runBin } from '../../helpers/cli';
import { notReloaded, ROOT, startMonitorAppOn, waitText, waitUntil, type MonitorApp } from '../../helpers/monitor-app';
import { tempPostgres } from '../../helpers/postgres';

let app: MonitorApp<Engine>;
let db: Awaited<ReturnType<typeof tempPostgres>>;

beforeAll(async () => {
  db = await tempPostgres();
  app = await startMonitorAppOn(db.url);
});
afterAll(async () => {
  await app?.close();
  await db?.drop();
});

describe('the monitor on PostgreSQL', () => {
  it('shows what another process deploys and runs there, live, and runs what the page starts', async () => {
    const { page } = app;
    await page.getByTestId('nav-instances').click();
    await waitUntil(() => page.getByTestId('workflow-list').getAttribute('data-status'), (s) => s === 'ready', 'the sidebar to load');
    expect(await page.getByTestId('workflow-item-api-quick').count()).toBe(0);

    // when another process runs a workflow on the same database
    const file = path.join(app.work, 'api-quick.workflow.json');
    fs.copyFileSync(path.join(ROOT, 'test/fixtures/api-quick.workflow.json'), file);
    const r = await runBin(['run', file, '--db', db.url, '--json'], { timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(0);
    const id = (JSON.parse(r.stdout) as { id: number }).id;

    // then the page shows it without a reload
    await waitUntil(() => page.getByTestId('workflow-item-api-quick').count(), (n) => n === 1, 'the deployed workflow in the sidebar');
    await waitText(page.getByTestId(`instance-status-${id}`), 'COMPLETED');
    await waitUntil(() => page.getByTestId('status-counts').textContent(), (t) => (t ?? '').includes('1 completed'), 'the status bar to count it');
    expect(await notReloaded(page)).toBe(true);

    // and an instance started through the host runs on its worker, on PostgreSQL
    const started = await app.api<{ id: number }>('instance:start', { workflow: 'api-quick' });
    await waitText(page.getByTestId(`instance-status-${started.id}`), 'COMPLETED');
    await waitUntil(() => page.getByTestId('status-counts').textContent(), (t) => (t ?? '').includes('2 completed'), 'the status bar to count both');
    expect(app.errors).toEqual([]);
  });
});
