// End to end in Chromium through the browser host: a person starts the purchase approval from the
// UI, is told an approval waits (a notice), approves it in the Approvals inbox with data and a
// comment, and watches the instance reach COMPLETED in the list without reloading; history names
// the person (the actor field). A start whose variables fail the inputSchema names the field.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Output } from '../../../engine/api/contract';
import {
  notReloaded,
  openStartPanel,
  startFromUi,
  startMonitorApp,
  waitText,
  waitUntil,
  type MonitorApp,
} from '../../helpers/monitor-app';

let app: MonitorApp;

beforeAll(async () => {
  app = await startMonitorApp({
    workflows: ['examples/purchase-approval.workflow.json', 'examples/ota-upgrade.workflow.json'],
  });
});
afterAll(async () => {
  await app?.close();
});

describe('Approvals inbox', () => {
  it('start from the UI, approve in the inbox, and the row reaches COMPLETED without a reload', async () => {
    const { page } = app;
    // given a person who says who they are
    await page.getByTestId('nav-instances').click();
    await page.getByTestId('actor-name').fill('Grace');
    await page.getByTestId('actor-name').press('Enter');

    // when they start the purchase approval from the UI
    const id = await startFromUi(page, 'purchase-approval', '{"requester": "Ada"}');
    expect(id).toBeGreaterThan(0);
    // then its row waits for an approval, live
    await waitText(page.getByTestId(`instance-status-${id}`), 'WAITING');
    await waitText(page.getByTestId(`instance-waiting-${id}`).locator('.wait'), 'approval');
    expect(await page.getByTestId(`instance-current-${id}`).textContent()).toBe('approve');
    // and a notice says an approval was requested
    const notice = page.locator(`[data-testid^="notice-"][data-kind="approval"][data-instance="${id}"]`);
    await waitUntil(
      () => notice.count(),
      (n) => n === 1,
      'the approval notice',
    );
    expect(await notice.textContent()).toContain('Approve 3 line item(s) for 2321 EUR requested by Ada?');
    await notice.locator('[data-testid^="notice-dismiss-"]').click();

    // when they open the Approvals tab (its badge counts 1) and approve with data and a comment
    await waitText(page.getByTestId('approvals-badge'), '1');
    await page.getByTestId('nav-approvals').click();
    const suffix = `${id}-approve`;
    await waitUntil(
      () => page.getByTestId(`approval-item-${suffix}`).count(),
      (n) => n === 1,
      'the inbox item',
    );
    expect(await page.getByTestId(`approval-item-${suffix}`).textContent()).toContain('requested by Ada');
    // the approval's form schema is rendered as fields (no JSON box)
    expect(await page.getByTestId(`approval-data-${suffix}`).count()).toBe(0);
    await page.locator(`[id="approval-${suffix}_costCenter"]`).fill('CC-7');
    await page.getByTestId(`approval-comment-${suffix}`).fill('within budget');
    await page.getByTestId(`approval-approve-${suffix}`).click();
    // then it leaves the inbox
    await waitUntil(
      () => page.getByTestId(`approval-item-${suffix}`).count(),
      (n) => n === 0,
      'the item to leave the inbox',
    );
    await waitUntil(
      () => page.getByTestId('approvals-empty').count(),
      (n) => n === 1,
      'an empty inbox',
    );

    // and back in the list the row reaches COMPLETED, without any reload
    await page.getByTestId('nav-instances').click();
    await waitText(page.getByTestId(`instance-status-${id}`), 'COMPLETED');
    expect(await notReloaded(page)).toBe(true);

    // and the engine recorded the decision, its data and who took it
    const inst = await app.api<Output<'instance:get'>>('instance:get', { id });
    expect(inst.variables).toMatchObject({
      decision: { approved: true, data: { costCenter: 'CC-7' }, comment: 'within budget', actor: 'Grace' },
      order: { status: 'placed' },
    });
    const history = await app.api<Output<'instance:history'>>('instance:history', { id });
    expect(history.events.find((e) => e.type === 'approval.decided')?.actor).toBe('Grace');
    expect(history.events.find((e) => e.type === 'instance.created')?.actor).toBe('Grace');

    // and the detail shows the decision in its history, by Grace
    await page.getByTestId(`instance-row-${id}`).click();
    await page.getByTestId('detail-tab-history').click();
    const decided = page.locator('[data-testid^="history-row-"][data-type="approval.decided"]');
    await waitUntil(
      () => decided.count(),
      (n) => n === 1,
      'the decision in history',
    );
    expect(await decided.locator('[data-testid^="history-actor-"]').textContent()).toBe('Grace');
    await page.getByTestId('detail-back').click();
  });

  it('a rejection from the instance detail takes the other branch', async () => {
    const { page } = app;
    const id = await startFromUi(page, 'purchase-approval', '{}');
    await waitText(page.getByTestId(`instance-status-${id}`), 'WAITING');
    await page.getByTestId(`instance-row-${id}`).click();
    const suffix = `${id}-approve`;
    await waitUntil(
      () => page.getByTestId(`approval-form-${suffix}`).count(),
      (n) => n === 1,
      'the approval form in the detail',
    );
    await page.getByTestId(`approval-comment-${suffix}`).fill('too expensive');
    await page.getByTestId(`approval-reject-${suffix}`).click();
    await waitText(page.getByTestId('detail-status'), 'COMPLETED');
    await waitUntil(
      () => page.getByTestId('graph-node-notify-rejection').getAttribute('data-state'),
      (s) => s === 'completed',
      'notify-rejection to be completed',
    );
    expect(await page.getByTestId('graph-node-order').getAttribute('data-state')).toBe('skipped');
    await page.getByTestId('detail-back').click();
  });

  it('variables that fail the inputSchema are refused, naming the field, beside the editor', async () => {
    const { page } = app;
    await page.getByTestId('workflow-item-ota-upgrade').click();
    await waitText(page.getByTestId('selected-workflow'), 'ota-upgrade');
    await openStartPanel(page);
    // the schema's required fields are shown, and a template fills them in
    await waitUntil(
      () => page.getByTestId('start-schema-hint').textContent(),
      (t) => (t ?? '').includes('deviceId*'),
      'the schema hint',
    );
    await page.getByTestId('start-vars').fill('{"baseUrl": "http://127.0.0.1:1"}');
    await page.getByTestId('start-instance').click();
    await waitUntil(
      () => page.getByTestId('start-vars-error').textContent(),
      (t) => /INVALID_VARIABLES/.test(t ?? '') && /deviceId/.test(t ?? ''),
      'the refusal naming deviceId',
    );
    // shown there, and only there: no toast repeats it
    await page.waitForTimeout(200);
    expect(await page.getByTestId('toast').count()).toBe(0);
    await page.getByTestId('start-template').click();
    // the template meets the schema: minLength 1, and a match of ^https?://
    expect(JSON.parse(await page.getByTestId('start-vars').inputValue())).toEqual({
      deviceId: 'x',
      baseUrl: 'http://',
      targetVersion: 'x',
    });
  });

  it('ran without page errors', () => {
    // a refused call is a result (and a toast), never a page error
    expect(app.errors).toEqual([]);
  });
});
