// End to end in Chromium through the browser host (real SQLite file): every view, workflow (and
// version), instance and instance tab has an address; Back and Forward walk them; a reload and a
// new tab opened on an address show the same thing; and "Run" in the Designer shows the instance
// it started, not the one looked at before (issue 15, items 3 and 1).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Output } from '../../../engine/api/contract';
import { startDesignerApp, type DesignerApp } from '../../helpers/designer-e2e';
import { waitUntil } from '../../helpers/monitor-app';

const DELAY = (ms: number) => ({
  name: 'e2e-delay',
  nodes: [
    { id: 'receive', type: 'pass' },
    { id: 'wait', type: 'delay', config: { durationMs: ms } },
  ],
  edges: [{ from: 'receive', to: 'wait' }],
});
/** A name that needs encoding in an address: a slash, a space, an emoji. */
const ODD = 'ops/nightly run 🎉';

let app: DesignerApp;
let done: number;

beforeAll(async () => {
  app = await startDesignerApp({
    deploy: [DELAY(60_000), DELAY(50), { name: ODD, nodes: [{ id: 'a', type: 'pass' }], edges: [] }],
    viewport: { width: 1440, height: 900 },
  });
  done = (await app.api<Output<'instance:start'>>('instance:start', { workflow: ODD })).id;
  await waitUntil(async () => (await app.api<Output<'instance:get'>>('instance:get', { id: done })).status, (s) => s === 'COMPLETED', 'the first instance to complete');
});
afterAll(async () => {
  await app?.close();
});

const hash = (): string => new URL(app.page.url()).hash;
const waitHash = (want: string) => waitUntil(async () => hash(), (h) => h === want, `the address #${want}`);
const detailOf = (id: number) => app.page.locator(`[data-testid="instance-detail"][data-id="${id}"][data-status]:not([data-status=""])`);
const selectedTab = () => app.page.locator('[data-testid^="detail-tab-"][aria-selected="true"]').getAttribute('data-testid');

describe('addresses', () => {
  it('every view, workflow, version, instance and tab has one; Back and Forward walk them', async () => {
    const { page } = app;
    // the Designer opened on the first workflow: its address names it
    await page.getByTestId(`workflow-item-${ODD}`).click();
    await page.locator(`[data-testid="view-designer"][data-workflow="${ODD}"]`).waitFor();
    await waitHash(`#/designer/${encodeURIComponent(ODD)}`);
    await page.getByTestId('workflow-item-e2e-delay').click();
    await page.locator('[data-testid="view-designer"][data-workflow="e2e-delay"][data-version="2"]').waitFor();
    await waitHash('#/designer/e2e-delay');
    await page.getByTestId('version-picker').selectOption('1');
    await page.locator('[data-testid="view-designer"][data-version="1"][data-readonly="true"]').waitFor();
    await waitHash('#/designer/e2e-delay/v/1');
    for (const view of ['approvals', 'dashboard', 'instances']) {
      await page.getByTestId(`nav-${view}`).click();
      await waitHash(`#/${view}`);
    }
    expect(await page.title()).toBe('Instances · Runnel');
    await page.getByTestId(`instance-row-${done}`).click();
    await detailOf(done).waitFor();
    await waitHash(`#/instances/${done}`);
    await page.getByTestId('detail-tab-history').click();
    await waitHash(`#/instances/${done}/history`);
    await page.getByTestId('detail-tab-variables').click();
    await waitHash(`#/instances/${done}/variables`);

    // Back: tab by tab, to the list, through the views, to the version shown read-only
    await page.goBack();
    await waitHash(`#/instances/${done}/history`);
    expect(await selectedTab()).toBe('detail-tab-history');
    await page.goBack();
    await waitHash(`#/instances/${done}`);
    expect(await selectedTab()).toBe('detail-tab-timeline');
    await page.goBack();
    await waitHash('#/instances');
    await page.getByTestId('instances-table').waitFor();
    expect(await page.getByTestId('instance-detail').count()).toBe(0);
    await page.goBack();
    await waitHash('#/dashboard');
    await page.getByTestId('view-dashboard').waitFor();
    await page.goBack();
    await page.goBack();
    await waitHash('#/designer/e2e-delay/v/1');
    await page.locator('[data-testid="view-designer"][data-workflow="e2e-delay"][data-version="1"][data-readonly="true"]').waitFor();
    await page.goBack();
    await waitHash('#/designer/e2e-delay');
    await page.locator('[data-testid="view-designer"][data-workflow="e2e-delay"][data-version="2"][data-readonly="false"]').waitFor();
    await page.goBack();
    await page.locator(`[data-testid="view-designer"][data-workflow="${ODD}"]`).waitFor();
    // Forward again
    await page.goForward();
    await page.goForward();
    await page.locator('[data-testid="view-designer"][data-version="1"][data-readonly="true"]').waitFor();
    await page.goForward();
    await waitHash('#/approvals');
    await page.getByTestId('view-approvals').waitFor();
  });

  it('a reload shows the same instance and tab, and the token survives it', async () => {
    const { page } = app;
    await page.goto(`http://127.0.0.1:${app.server.port}/#/instances/${done}/variables`);
    await detailOf(done).waitFor();
    expect(await selectedTab()).toBe('detail-tab-variables');
    await page.reload();
    await detailOf(done).waitFor();
    expect(await selectedTab()).toBe('detail-tab-variables');
    expect(hash()).toBe(`#/instances/${done}/variables`);
    expect(page.url()).not.toContain('token=');
  });

  it('an address opened in a new tab opens the same thing', async () => {
    const tab = await app.context.newPage();
    try {
      await tab.goto(`http://127.0.0.1:${app.server.port}/#/designer/e2e-delay/v/1`);
      await tab.locator('[data-testid="view-designer"][data-workflow="e2e-delay"][data-version="1"][data-readonly="true"]').waitFor();
      // the latest version named by its number: shown editable, and the address stays (no entry of its own)
      const entries = await tab.evaluate(() => history.length);
      await tab.goto(`http://127.0.0.1:${app.server.port}/#/designer/e2e-delay/v/2`);
      await tab.locator('[data-testid="view-designer"][data-workflow="e2e-delay"][data-version="2"][data-readonly="false"]').waitFor();
      await tab.waitForTimeout(300);
      expect(new URL(tab.url()).hash).toBe('#/designer/e2e-delay/v/2');
      expect(await tab.evaluate(() => history.length)).toBe(entries + 1);
      await tab.goto(`http://127.0.0.1:${app.server.port}/#/instances/${done}/history`);
      await tab.locator(`[data-testid="instance-detail"][data-id="${done}"][data-status="COMPLETED"]`).waitFor();
      expect(await tab.locator('[data-testid="detail-tab-history"][aria-selected="true"]').count()).toBe(1);
      // an address that names nothing is replaced by what is shown
      await tab.goto(`http://127.0.0.1:${app.server.port}/#/nowhere/7`);
      await waitUntil(async () => new URL(tab.url()).hash, (h) => h === `#/instances/${done}/history`, 'the address of what is shown');
    } finally {
      await tab.close();
    }
    // … and in a fresh tab, the default view's
    const missing = await app.context.newPage();
    try {
      // an instance that does not exist: the view says why, once (no toast besides), and its back
      // button keeps its own width
      await missing.goto(`http://127.0.0.1:${app.server.port}/#/instances/999999`);
      const said = missing.getByTestId('detail-load-error');
      await waitUntil(async () => said.textContent(), (t) => t !== 'Loading…', 'the open to fail');
      expect(await said.textContent()).toBe('Instance 999999 could not be loaded: NOT_FOUND: instance 999999 does not exist');
      await missing.waitForTimeout(300);
      expect(await missing.getByTestId('toast').count()).toBe(0);
      const back = await missing.getByTestId('detail-back').boundingBox();
      expect(back && back.width).toBeLessThan(200);
    } finally {
      await missing.close();
    }
    const fresh = await app.context.newPage();
    try {
      await fresh.goto(`http://127.0.0.1:${app.server.port}/#/nowhere/7`);
      await fresh.getByTestId('instances-table').waitFor();
      expect(new URL(fresh.url()).hash).toBe('#/instances');
    } finally {
      await fresh.close();
    }
  });
});

describe('Run in the Designer', () => {
  it('shows the instance it started, not the one viewed before', async () => {
    const { page } = app;
    // given: another instance's detail was open in the Instances view
    await page.getByTestId('nav-instances').click();
    if ((await page.getByTestId('instance-detail').count()) > 0) await page.getByTestId('detail-back').click();
    await page.getByTestId(`instance-row-${done}`).click();
    await detailOf(done).waitFor();
    // when: the latest e2e-delay is run from the Designer
    await page.getByTestId('nav-designer').click();
    await page.getByTestId('workflow-item-e2e-delay').click();
    await page.locator('[data-testid="view-designer"][data-workflow="e2e-delay"][data-version="2"][data-readonly="false"]').waitFor();
    await page.getByTestId('run-workflow').click();
    await page.getByTestId('run-start').click();
    // then: the Instances view shows the new instance, at its address
    const started = await waitUntil(
      async () => (await app.api<Output<'instance:list'>>('instance:list', { workflow: 'e2e-delay' })).items[0]?.id,
      (id) => id !== undefined,
      'the started instance',
    );
    await detailOf(started as number).waitFor();
    expect(await page.getByTestId('nav-instances').getAttribute('aria-selected')).toBe('true');
    await waitHash(`#/instances/${started}`);
    expect(await page.getByTestId('detail-title').textContent()).toMatch(new RegExp(`^#${started} · e2e-delay v2`));
    // and Back returns to the Designer it was run from
    await page.goBack();
    await page.locator('[data-testid="view-designer"][data-workflow="e2e-delay"]').waitFor();
  });

  it('ran without page errors', () => {
    expect(app.consoleErrors.filter((e) => !/status of 4\d\d/.test(e))).toEqual([]);
  });
});
