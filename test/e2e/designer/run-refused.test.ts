// The designer's Run dialog when the host refuses the start, in real Chromium through the browser
// host: the refusal shows in place, in the dialog (its code, its message and the field it names),
// with no toast beside it (it said "see the message in the corner" and left the words to a toast);
// the dialog stays open with the variables as typed, and once fixed the start goes through.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Output } from '../../../engine/api/contract';
import { exampleText, startDesignerApp, type DesignerApp } from '../../helpers/designer-e2e';

let app: DesignerApp;

beforeAll(async () => {
  app = await startDesignerApp({
    deploy: [JSON.parse(exampleText('purchase-approval'))],
    viewport: { width: 1280, height: 720 },
  });
});
afterAll(async () => {
  await app?.close();
});

describe('the Run dialog', () => {
  it('shows the host refusing the start in place, naming the field, with no toast', async () => {
    const { page } = app;
    // given: purchase-approval open, Run asked for
    await page.getByTestId('workflow-item-purchase-approval').click();
    await page.locator('[data-testid="view-designer"][data-workflow="purchase-approval"]').waitFor();
    await page.getByTestId('run-workflow').click();
    // when: the variables pass the input schema here but carry a key the host refuses
    const vars = '{ "requester": "Ada", "currency": "EUR", "__proto__": { "admin": true } }';
    await page.getByTestId('run-vars').fill(vars);
    await page.getByTestId('run-start').click();
    // then: the dialog says what the host said, where the user is looking
    const refusal = page.getByTestId('run-dialog').getByTestId('run-vars-error');
    await expect.poll(() => refusal.getAttribute('data-code')).toBe('BAD_REQUEST');
    expect(await page.getByTestId('run-error-code').textContent()).toBe('BAD_REQUEST');
    expect(await page.getByTestId('run-error-message').textContent()).toMatch(
      /a "__proto__" key at variables\.__proto__ is not accepted/,
    );
    expect(await page.getByTestId('run-error-field').textContent()).toBe('Field: variables.__proto__');
    expect(await refusal.textContent()).not.toContain('corner');
    expect(await page.getByTestId('run-vars').getAttribute('aria-invalid')).toBe('true');
    // and no toast says it a second time
    expect(await page.getByTestId('toast').count()).toBe(0);
    // and the dialog is still open with the variables as typed, nothing started
    expect(await page.getByTestId('run-vars').inputValue()).toBe(vars);
    expect((await app.api<Output<'instance:list'>>('instance:list', {})).items).toHaveLength(0);
    await page.screenshot({ path: '/tmp/ui15b-shots/run-refused-1280.png' });
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.screenshot({ path: '/tmp/ui15b-shots/run-refused-1440.png' });
    await page.setViewportSize({ width: 1280, height: 720 });

    // when: the key is renamed and Start clicked again
    await page
      .getByTestId('run-vars')
      .fill('{ "requester": "Ada", "currency": "EUR", "proto": { "admin": true } }');
    await page.getByTestId('run-start').click();
    // then: the instance starts and shows
    await expect.poll(() => page.getByTestId('nav-instances').getAttribute('aria-selected')).toBe('true');
    const list = await app.api<Output<'instance:list'>>('instance:list', {});
    expect(list.items.map((i) => i.workflow)).toEqual(['purchase-approval']);
    await expect
      .poll(() => page.getByTestId('instance-detail').getAttribute('data-id'))
      .toBe(String(list.items[0]?.id));
    expect(app.consoleErrors).toEqual([]);
  });
});
