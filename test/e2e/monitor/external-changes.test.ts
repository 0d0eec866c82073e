// End to end in Chromium: the page is open while ANOTHER engine on the same database file (as
// `npx runnel deploy` or `npx runnel demo --db` in another process would) deploys a workflow and
// runs an instance to COMPLETED. None of its events reach the host; the host's external-change
// watch (`store.changed`) does, and the page shows the new workflow in the sidebar and the row
// COMPLETED, without a reload.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteEngine } from '../../../engine/runtime/engine';
import {
  notReloaded,
  ROOT,
  startMonitorApp,
  waitText,
  waitUntil,
  type MonitorApp,
} from '../../helpers/monitor-app';

let app: MonitorApp;
let other: SqliteEngine | undefined;

beforeAll(async () => {
  // The host runs no worker: everything below happens in the other engine only.
  app = await startMonitorApp({ hostWorker: false });
});
afterAll(async () => {
  await other?.close();
  await app?.close();
});

describe('changes made by another process', () => {
  it('a workflow deployed and an instance completed elsewhere show up live', async () => {
    const { page } = app;
    await page.getByTestId('nav-instances').click();
    await waitUntil(
      () => page.getByTestId('workflow-list').getAttribute('data-status'),
      (s) => s === 'ready',
      'the sidebar to load',
    );
    expect(await page.getByTestId('workflow-item-api-quick').count()).toBe(0);

    // when another engine on the same file deploys and runs an instance to the end
    other = SqliteEngine.open(path.join(app.work, 'runnel.db'), { pollIntervalMs: 10 });
    await other.deploy(
      JSON.parse(fs.readFileSync(path.join(ROOT, 'test/fixtures/api-quick.workflow.json'), 'utf8')),
    );
    const id = await other.start('api-quick');
    await other.runUntil(async () => (await other?.isSettled(id)) ?? true, 20_000);
    expect((await other.getInstance(id)).status).toBe('COMPLETED');

    // then the sidebar lists the workflow and the row shows COMPLETED, without a reload
    await waitUntil(
      () => page.getByTestId('workflow-item-api-quick').count(),
      (n) => n === 1,
      'the deployed workflow in the sidebar',
    );
    await waitText(page.getByTestId(`instance-status-${id}`), 'COMPLETED');
    await waitUntil(
      () => page.getByTestId('status-counts').textContent(),
      (t) => (t ?? '').includes('1 completed'),
      'the status bar to count it',
    );
    expect(await notReloaded(page)).toBe(true);
    expect(app.errors).toEqual([]);
  });
});
