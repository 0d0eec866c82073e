// The Database view (issue 14), in real Chromium through the browser host: it shows the file's
// size, free pages and auto_vacuum mode, instances by age and the retention in force at
// `#/database`; a backup to a path on the host writes a copy that opens (a second one to the same
// path is refused until "replace" is ticked), the check says the file is sound, and giving free
// pages back empties the freelist — each with its progress bar at the end and its outcome shown.
// The Dashboard's card of the host's worker shows the numbers GET /metrics serves.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Locator } from 'playwright-core';
import { startMonitorApp, waitText, waitUntil, type MonitorApp } from '../../helpers/monitor-app';

/** Waits until `locator`'s text holds `part`. */
const waitContains = (locator: Locator, part: string): Promise<string | null> =>
  waitUntil(() => locator.textContent({ timeout: 500 }), (t) => (t ?? '').includes(part), `text holding "${part}"`);

let app: MonitorApp;
const RUNS = 12;

beforeAll(async () => {
  app = await startMonitorApp({
    engine: { retention: { completedDays: 14 } },
    prepare: async (engine) => {
      await engine.deploy({ format: 1, name: 'kept-a-week', retention: { completedDays: 7 }, nodes: [{ id: 'a', type: 'pass', config: {} }] });
      await engine.startMany(
        'kept-a-week',
        Array.from({ length: RUNS }, (_, i) => ({ i })),
      );
      // Free pages inside the file: a table filled and dropped (auto_vacuum=INCREMENTAL keeps them until given back).
      const raw = engine.db.raw;
      raw.exec(`CREATE TABLE scratch (x TEXT)`);
      const insert = raw.prepare(`INSERT INTO scratch VALUES (?)`);
      raw.transaction(() => {
        for (let i = 0; i < 2500; i++) insert.run('z'.repeat(3000));
      })();
      raw.exec(`DROP TABLE scratch`);
    },
  });
});
afterAll(async () => {
  await app?.close();
});

describe('the Database view', () => {
  it('shows the file, the instances by age and the retention; backs up, checks and gives free pages back with progress', async () => {
    const { page } = app;
    await page.getByTestId('nav-database').click();
    await waitUntil(() => Promise.resolve(page.url()), (u) => u.endsWith('#/database'), 'the address');
    await page.getByTestId('view-database').waitFor();

    // the file and its free pages, the instances (run by the host's worker) by age, the policies
    await waitText(page.getByTestId('db-backend'), 'SQLite');
    expect(await page.getByTestId('db-location').textContent()).toBe(path.join(app.work, 'runnel.db'));
    await waitText(page.getByTestId('db-auto-vacuum'), 'incremental');
    const free = Number(await page.getByTestId('db-free-pages').getAttribute('data-count'));
    expect(free).toBeGreaterThan(1500);
    await waitUntil(() => page.getByTestId('db-age-day').getAttribute('data-ended'), (n) => n === String(RUNS), 'the ended instances counted (refreshed every 5 s)', 15_000);
    expect(await page.getByTestId('db-age-day').getAttribute('data-live')).toBe('0');
    await waitContains(page.getByTestId('db-retention'), 'completed 14 days, failed for ever, cancelled 30 days');
    await waitContains(page.getByTestId('db-retention-kept-a-week'), 'completed 7 days');
    await waitContains(page.getByTestId('db-consumers'), 'No change-feed consumer');

    // a backup to a path on the host: the copy opens and holds every instance
    const dest = path.join(app.work, 'backup.db');
    await page.getByTestId('db-backup-dest').fill(dest);
    await page.getByTestId('db-backup').click();
    await waitUntil(() => page.getByTestId('db-result-backup').getAttribute('data-ok'), (ok) => ok === 'true', 'the backup');
    await waitContains(page.getByTestId('db-result-backup'), `Backed up to ${dest}`);
    const bar = page.getByTestId('db-progress-backup');
    expect(await bar.getAttribute('value')).toBe(await bar.getAttribute('max'));
    const copy = new Database(dest, { readonly: true });
    try {
      expect((copy.prepare(`SELECT count(*) AS n FROM instance`).get() as { n: number }).n).toBe(RUNS);
    } finally {
      copy.close();
    }
    // the same path again: refused, the outcome says why; with "replace" it goes through
    await page.getByTestId('db-backup').click();
    await waitUntil(() => page.getByTestId('db-result-backup').getAttribute('data-ok'), (ok) => ok === 'false', 'the refusal');
    await waitContains(page.getByTestId('db-result-backup'), 'exists');
    // shown once, on the card: no toast over the page
    expect(await page.getByTestId('toast').count()).toBe(0);
    await page.getByTestId('db-backup-force').check();
    await page.getByTestId('db-backup').click();
    await waitUntil(() => page.getByTestId('db-result-backup').getAttribute('data-ok'), (ok) => ok === 'true', 'the forced backup');

    // the check
    await page.getByTestId('db-check').click();
    await waitContains(page.getByTestId('db-result-check'), `No problem found: ${RUNS} instances`);
    expect(await page.getByTestId('db-result-check').getAttribute('data-ok')).toBe('true');

    // giving free pages back: progress to the end, and the freelist is empty
    await page.getByTestId('db-vacuum').click();
    await waitContains(page.getByTestId('db-result-vacuum'), 'pages given back');
    const vbar = page.getByTestId('db-progress-vacuum');
    await waitUntil(() => vbar.getAttribute('value'), (v) => v === String(free), 'the vacuum progress at its end');
    await waitUntil(() => page.getByTestId('db-free-pages').getAttribute('data-count'), (n) => n === '0', 'no free page left');
    expect(fs.existsSync(dest)).toBe(true);
    expect(app.errors).toEqual([]);
  });

  it("the Dashboard shows the host worker's own numbers, the ones GET /metrics serves", async () => {
    const { page } = app;
    await page.getByTestId('nav-dashboard').click();
    await waitUntil(() => page.getByTestId('dash-runtime-claimed').getAttribute('data-count', { timeout: 500 }), (n) => n === String(RUNS), 'the steps claimed');
    expect(await page.getByTestId('dash-runtime-type-pass').getAttribute('data-count')).toBe(String(RUNS));
    expect(Number(await page.getByTestId('dash-runtime-turns').getAttribute('data-count'))).toBeGreaterThan(0);
    await waitText(page.getByTestId('dash-runtime-failures'), 'none');
    // the same count in the Prometheus text
    const res = await fetch(`http://127.0.0.1:${app.server.port}/metrics`, { headers: { Authorization: `Bearer ${app.server.token}` } });
    expect(await res.text()).toContain(`runnel_node_attempts_total{type="pass",outcome="completed"} ${RUNS}`);
  });
});
