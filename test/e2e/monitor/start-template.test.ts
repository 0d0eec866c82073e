// The start panel's "fill template" in Chromium through the browser host (issue 15, item 10): for
// an input schema with a pattern, an enum, bounds, lengths, required nested objects and arrays
// with minItems, the template passes the engine's own check on start; the one field it cannot
// derive (a pattern too rich to write a match for) is named for the person to fill in, and is all
// a start of the template as it is gets refused for.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Output } from '../../../engine/api/contract';
import { openStartPanel, startMonitorApp, waitText, waitUntil, type MonitorApp } from '../../helpers/monitor-app';

let app: MonitorApp;

beforeAll(async () => {
  app = await startMonitorApp({ workflows: ['test/fixtures/start-template.workflow.json'] });
});
afterAll(async () => {
  await app?.close();
});

describe('fill template', () => {
  it('fills variables the input schema accepts, names what it cannot, and the filled template starts', async () => {
    const { page } = app;
    await page.getByTestId('nav-instances').click();
    await page.getByTestId('workflow-item-start-template').click();
    await waitText(page.getByTestId('selected-workflow'), 'start-template');
    await openStartPanel(page);
    // when the person fills the template
    await page.getByTestId('start-template').click();
    const filled = JSON.parse(await page.getByTestId('start-vars').inputValue()) as Record<string, unknown>;
    // then every constraint the schema has is met where a value can be derived
    expect(filled).toEqual({
      deviceId: 'd-000',
      mode: 'canary',
      batch: 10,
      label: 'xxxx',
      owner: '<fill in: matches ^\\p{Lu}\\p{Ll}+$>',
      target: { region: 'eu-west', window: { hours: 1 } },
      tags: ['xx', 'xx'],
      ports: [1024, 1025],
      notes: '',
    });
    // and the one it cannot is named
    expect(await page.getByTestId('start-template-todo').textContent()).toBe('Fill in before starting: owner must match the pattern ^\\p{Lu}\\p{Ll}+$');

    // given the template as it is: the engine refuses it for that field only
    await page.getByTestId('start-instance').click();
    const refusal = await waitUntil(
      () => page.getByTestId('start-vars-error').textContent({ timeout: 500 }),
      (t) => t !== null && /INVALID_VARIABLES/.test(t),
      'the refusal',
    );
    expect(refusal).toMatch(/owner/);
    for (const other of ['deviceId', 'mode', 'batch', 'label', 'target', 'tags', 'ports', 'notes']) expect(refusal).not.toContain(other);

    // when the person fills that one field in and starts
    await page.getByTestId('start-vars').fill(JSON.stringify({ ...filled, owner: 'Ada' }, null, 2));
    await page.getByTestId('start-instance').click();
    const started = await waitUntil(
      () => page.getByTestId('start-result').textContent({ timeout: 500 }),
      (t) => t !== null && /#\d+/.test(t),
      'the start',
    );
    // then it started with no validation error, with those variables, and completes
    expect(await page.getByTestId('start-vars-error').count()).toBe(0);
    const id = Number(/#(\d+)/.exec(started ?? '')?.[1]);
    const detail = await waitUntil(
      () => app.api<Output<'instance:get'>>('instance:get', { id }),
      (d) => d.status === 'COMPLETED',
      'the instance to complete',
    );
    expect(detail.variables).toEqual({ ...filled, owner: 'Ada' });
  });

  it('ran without page errors', () => {
    expect(app.errors).toEqual([]);
  });
});
