// Issue 4, "Done when": a new user draws the OTA example from an empty canvas through the
// Designer's forms only (the http bodies are the only values typed as JSON), saves it, runs it
// against the example device fleet to COMPLETED, and exports a file that `runnel run` accepts.
import fs from 'node:fs';
import path from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Output } from '../../../engine/api/contract';
import { canonicalJson, normalizeWorkflow } from '../../../engine/dsl';
import { startDeviceServer, type DeviceFleetServer } from '../../../examples/device-server';
import { runCli } from '../../helpers/cli';
import { addNode, canvasCentre, connect, exampleText, exportViaUi, openWorkflowSettings, saveViaUi, selectNode, startDesignerApp, type DesignerApp } from '../../helpers/designer-e2e';

let app: DesignerApp;
let fleet: DeviceFleetServer;

beforeAll(async () => {
  [app, fleet] = await Promise.all([startDesignerApp(), startDeviceServer({ size: 3 })]);
});

afterAll(async () => {
  await app?.close();
  await fleet?.close();
});

/** Fills the retry fields with prefix `prefix` (`retry`, `workflow-retry`, `compensate-retry`). */
/**
 * Checks a checkbox of the properties panel. Twice in fresh-clone CI runs (once in 20) the click
 * right after filling the field above it left the box unchecked ("Clicking the checkbox did not
 * change its state"); the cause is not found (the panel's fields commit on change, no remount
 * was seen). The click is tried again, at most twice, once the panel has had 200 ms to settle,
 * and the box must end checked.
 */
async function checkBox(box: Locator): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await box.check({ timeout: 10_000 });
      break;
    } catch (err) {
      if (attempt >= 3 || !/did not change its state/.test(String(err))) throw err;
      await box.page().waitForTimeout(200);
    }
  }
  expect(await box.isChecked()).toBe(true);
}

async function retry(page: Page, prefix: string, values: Partial<Record<'maxAttempts' | 'initialIntervalMs' | 'backoffCoefficient' | 'maxIntervalMs', number>>): Promise<void> {
  for (const [key, v] of Object.entries(values)) await page.getByTestId(`prop-${prefix}-${key}`).fill(String(v));
}

/** Sets an http node's config through its form. */
async function http(page: Page, method: string, url: string, body?: string, prefix = 'config'): Promise<void> {
  await page.getByTestId(`prop-${prefix}-method`).selectOption(method);
  await page.getByTestId(`prop-${prefix}-url`).fill(url);
  await page.getByTestId(`prop-${prefix}-timeoutMs`).fill('2000');
  if (body !== undefined) await page.getByTestId(`prop-${prefix}-body`).fill(body);
}

/** The meaning of a definition: normalised, without `ui` and the fields the test does not draw. */
function meaning(def: unknown): string {
  const n = normalizeWorkflow(def) as Record<string, unknown>;
  for (const key of ['ui', 'name', 'description', 'inputSchema']) delete n[key];
  return canonicalJson(n);
}

describe('drawing the OTA example from an empty canvas', () => {
  it('draws, saves, runs to COMPLETED, and exports a file `runnel run` accepts', async () => {
    const { page } = app;
    // the workflow's own settings, input variables included
    await openWorkflowSettings(page);
    await page.getByTestId('prop-workflow-name').fill('ota-drawn');
    await page.getByTestId('prop-deadlineMs').fill('600000');
    await retry(page, 'workflow-retry', { maxAttempts: 5, initialIntervalMs: 50, backoffCoefficient: 2, maxIntervalMs: 400 });
    for (const [i, name] of ['deviceId', 'baseUrl', 'targetVersion'].entries()) {
      await page.getByTestId('input-field-add').click();
      await page.getByTestId(`input-field-${i}-name`).fill(name);
      await page.getByTestId(`input-field-${i}-name`).press('Enter');
    }

    // six nodes from the palette
    const c = await canvasCentre(page);
    const at = (i: number) => ({ x: c.x - 260 + (i % 3) * 260, y: c.y - 140 + Math.floor(i / 3) * 180 });
    const base = '{{ baseUrl }}/devices/{{ deviceId }}';
    await addNode(page, 'http', 'check', at(0));
    await page.getByTestId('prop-name').fill('Check version');
    await http(page, 'GET', base);
    await page.getByTestId('prop-output').fill("{ 'device': $result.body }");
    await page.getByTestId('prop-timeoutMs').fill('5000');

    await addNode(page, 'http', 'download', at(1));
    await page.getByTestId('prop-name').fill('Download firmware');
    await http(page, 'POST', `${base}/download`, '{ "version": "{{ targetVersion }}" }');
    await page.getByTestId('prop-output').fill("{ 'image': $result.body }");
    await page.getByTestId('prop-timeoutMs').fill('5000');

    await addNode(page, 'http', 'flash', at(2));
    await page.getByTestId('prop-name').fill('Flash firmware');
    await http(page, 'POST', `${base}/flash`, '{ "version": "{{ targetVersion }}", "checksum": "{{ image.checksum }}" }');
    await page.getByTestId('prop-output').fill("{ 'flashed': $result.body }");
    await page.getByTestId('prop-timeoutMs').fill('5000');
    await checkBox(page.getByTestId('prop-compensate'));
    expect(await page.getByTestId('prop-compensate-type').inputValue()).toBe('http');
    await page.getByTestId('prop-compensate-name').fill('Roll back firmware');
    await http(page, 'POST', `${base}/rollback`, '{ "version": "{{ device.version }}" }', 'compensate-config');
    await retry(page, 'compensate-retry', { maxAttempts: 5, initialIntervalMs: 50, backoffCoefficient: 2, maxIntervalMs: 400 });

    await addNode(page, 'http', 'reboot', at(3));
    await page.getByTestId('prop-name').fill('Reboot into the new firmware');
    await http(page, 'POST', `${base}/reboot`);
    await retry(page, 'retry', { maxAttempts: 3 });
    await page.getByTestId('prop-timeoutMs').fill('5000');

    await addNode(page, 'delay', 'settle', at(4));
    await page.getByTestId('prop-name').fill('Let the device boot');
    await page.getByTestId('prop-config-durationMs').fill('200');

    await addNode(page, 'http', 'verify', at(5));
    await page.getByTestId('prop-name').fill('Verify health');
    await http(page, 'GET', `${base}/health`);
    await page.getByTestId('prop-output').fill("{ 'health': $result.body }");
    await page.getByTestId('prop-timeoutMs').fill('5000');
    await page.getByTestId('prop-onFailure').selectOption('suspend');

    // connected handle to handle; the first edge gets its condition and label
    for (const [from, to] of [
      ['check', 'download'],
      ['download', 'flash'],
      ['flash', 'reboot'],
      ['reboot', 'settle'],
      ['settle', 'verify'],
    ] as const)
      await connect(page, from, to);
    await page.locator('.react-flow__edge[data-id="check->download"] path.react-flow__edge-interaction').dispatchEvent('click');
    await page.getByTestId('prop-when').fill('device.version != targetVersion');
    await page.getByTestId('prop-label').fill('needs the upgrade');
    await page.getByTestId('auto-layout').click();
    await expect.poll(() => page.getByTestId('problems-count').textContent()).toBe('0');

    // saved: the same workflow as the example, but for what was not drawn
    expect(await saveViaUi(page)).toBe('Saved ota-drawn as version 1');
    const saved = await app.api<Output<'workflow:get'>>('workflow:get', { name: 'ota-drawn' });
    expect(meaning(saved.definition)).toBe(meaning(JSON.parse(exampleText('ota-upgrade'))));
    expect(saved.definition.inputSchema).toEqual({ type: 'object', properties: { deviceId: { type: 'string' }, baseUrl: { type: 'string' }, targetVersion: { type: 'string' } }, required: ['deviceId', 'baseUrl', 'targetVersion'] });

    // run from the Designer: the instance completes against the fleet
    const vars = { deviceId: 'dev-01', baseUrl: fleet.baseUrl, targetVersion: fleet.targetVersion };
    await page.getByTestId('run-workflow').click();
    expect(JSON.parse(await page.getByTestId('run-vars').inputValue())).toEqual({ deviceId: '', baseUrl: '', targetVersion: '' });
    await page.getByTestId('run-vars').fill(JSON.stringify(vars));
    await page.getByTestId('run-start').click();
    await expect.poll(() => page.getByTestId('nav-instances').getAttribute('aria-selected')).toBe('true');
    const [started] = (await app.api<Output<'instance:list'>>('instance:list', { workflow: 'ota-drawn' })).items;
    await expect.poll(async () => (await app.api<Output<'instance:get'>>('instance:get', { id: started!.id })).status, { timeout: 20_000 }).toBe('COMPLETED');

    // the export runs with the CLI
    await page.getByTestId('nav-designer').click();
    await page.locator('[data-testid="view-designer"][data-workflow="ota-drawn"]').waitFor();
    const file = path.join(app.work, 'ota-drawn.workflow.json');
    fs.writeFileSync(file, await exportViaUi(page));
    const r = await runCli('run', file, '--db', path.join(app.work, 'cli.db'), '--json', '--vars', JSON.stringify({ ...vars, deviceId: 'dev-02' }));
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: 'COMPLETED' });
    // selecting a node still works after all that
    await selectNode(page, 'verify');
    expect(app.consoleErrors).toEqual([]);
  });
});
