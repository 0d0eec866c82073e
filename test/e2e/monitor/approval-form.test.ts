// End to end in Chromium through the browser host: an approval's `form` (a JSON Schema) is a form
// of fields, not a JSON box (issue 15, item 8), checked in the page before the decision is sent:
// Approve with a required field empty, or a value the schema refuses, names the field and sends
// nothing; valid data is sent as typed values and becomes the node's result. Under the page's
// Content-Security-Policy (no 'unsafe-eval'), without a page or console error.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Output } from '../../../engine/api/contract';
import { startMonitorApp, waitText, waitUntil, type MonitorApp } from '../../helpers/monitor-app';

let app: MonitorApp;

const FORM = {
  type: 'object',
  required: ['costCenter', 'amount'],
  properties: {
    costCenter: { type: 'string', title: 'Cost center', pattern: '^CC-[0-9]+$' },
    amount: { type: 'number', title: 'Amount', minimum: 1 },
    priority: { type: 'string', title: 'Priority', enum: ['low', 'high'] },
    urgent: { type: 'boolean', title: 'Urgent' },
  },
};
const WORKFLOW = {
  format: 1,
  name: 'form-approval',
  nodes: [{ id: 'ask', type: 'approval', config: { prompt: 'Book it?', form: FORM }, output: 'decision' }],
  edges: [],
};

beforeAll(async () => {
  app = await startMonitorApp({ prepare: (engine) => engine.deploy(WORKFLOW).then(() => undefined) });
});
afterAll(async () => {
  await app?.close();
});

describe('an approval form from its JSON Schema', () => {
  it('renders fields, refuses what the schema refuses before sending, and sends typed data', async () => {
    const { page } = app;
    const { id } = await app.api<Output<'instance:start'>>('instance:start', { workflow: 'form-approval' });
    await page.getByTestId('nav-approvals').click();
    const suffix = `${id}-ask`;
    const field = (name: string) => page.locator(`[id="approval-${suffix}_${name}"]`);
    // then: one field per property, labelled from the schema, and no JSON box
    await field('costCenter').waitFor();
    expect(await page.getByTestId(`approval-data-${suffix}`).count()).toBe(0);
    expect(await page.getByTestId(`approval-fields-${suffix}`).textContent()).toMatch(/Cost center.*Amount.*Priority.*Urgent/s);
    expect(await field('amount').getAttribute('type')).toBe('number');
    expect(await field('priority').evaluate((e) => (e as unknown as { tagName: string }).tagName)).toBe('SELECT');

    // when: Approve with nothing filled in
    await page.getByTestId(`approval-approve-${suffix}`).click();
    // then: the required fields are named, and nothing was sent
    await waitUntil(() => page.getByTestId(`approval-fields-${suffix}`).textContent(), (t) => (t ?? '').includes('is required'), 'the required fields to be named');
    expect(await page.getByTestId(`approval-error-${suffix}`).textContent()).toMatch(/Fill in the form/);
    // when: a cost center the pattern refuses
    await field('costCenter').fill('7');
    await field('amount').fill('250');
    await page.getByTestId(`approval-approve-${suffix}`).click();
    await waitUntil(() => page.getByTestId(`approval-fields-${suffix}`).textContent(), (t) => /pattern|match/i.test(t ?? ''), 'the pattern to be named');
    expect((await app.api<Output<'instance:get'>>('instance:get', { id })).status).toBe('WAITING');

    // when: valid data
    await field('costCenter').fill('CC-7');
    await field('priority').selectOption('high');
    await field('urgent').check();
    await page.getByTestId(`approval-comment-${suffix}`).fill('booked');
    await page.getByTestId(`approval-approve-${suffix}`).click();
    // then: it leaves the inbox, and the decision carries the typed data
    await waitUntil(() => page.getByTestId(`approval-item-${suffix}`).count(), (n) => n === 0, 'the item to leave the inbox');
    await waitUntil(() => app.api<Output<'instance:get'>>('instance:get', { id }).then((d) => d.status), (s) => s === 'COMPLETED', 'COMPLETED');
    const inst = await app.api<Output<'instance:get'>>('instance:get', { id });
    expect(inst.variables).toMatchObject({ decision: { approved: true, data: { costCenter: 'CC-7', amount: 250, priority: 'high', urgent: true }, comment: 'booked' } });
    await waitText(page.getByTestId('approvals-count'), '0');
    expect(app.errors).toEqual([]);
  });
});
