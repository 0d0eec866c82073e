// The Designer's test run (the Run dialog's "Test run") in real Chromium through the browser host (issue 15, "Beyond the
// anchors' basics"): a person types variables, pins the http node's result, starts the test run
// and watches it on the instance graph; a real HTTP server on 127.0.0.1 counts its requests and
// gets none; the run is marked a test run, left out of the default list, and the unpinned script
// ran for real on the pinned result; the Instances list's "test runs" chip shows it and one click
// deletes every ended test run.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Output } from '../../../engine/api/contract';
import { startDesignerApp, type DesignerApp } from '../../helpers/designer-e2e';

let app: DesignerApp;
let server: Server;
let requests = 0;

const FLOW = {
  format: 1,
  name: 'check-device',
  inputSchema: { type: 'object', required: ['baseUrl'], properties: { baseUrl: { type: 'string' } } },
  nodes: [
    { id: 'fetch', type: 'http', config: { method: 'GET', url: '{{ baseUrl }}/device' }, output: 'device' },
    { id: 'say', type: 'script', config: { code: 'return "version " + variables.device.body.version' }, output: 'said' },
  ],
  edges: [{ from: 'fetch', to: 'say' }],
};

beforeAll(async () => {
  server = createServer((_req, res) => {
    requests++;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"version":"live"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  app = await startDesignerApp({ deploy: [FLOW] });
});
afterAll(async () => {
  await app?.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('test run from the Designer', () => {
  it('pins the http node, starts a test run, shows it on the graph; the server is never called', async () => {
    const { page } = app;
    const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    await page.getByTestId('workflow-item-check-device').click();
    await page.locator('[data-testid="view-designer"][data-workflow="check-device"]').waitFor();
    // given the test run dialog with variables typed and the http node pinned
    await page.getByTestId('run-workflow').click();
    await page.getByTestId('run-dialog').waitFor();
    await page.getByTestId('run-vars').fill(JSON.stringify({ baseUrl }));
    expect(await page.getByTestId('run-pins').count()).toBe(0);
    await page.getByTestId('run-test').check();
    expect(await page.getByTestId('run-dialog').locator('h2').textContent()).toBe('Test run check-device');
    expect(await page.getByTestId('pin-value-fetch').count()).toBe(0);
    await page.getByTestId('pin-fetch').check();
    expect(JSON.parse(await page.getByTestId('pin-value-fetch').inputValue())).toEqual({ status: 200, headers: {}, body: {} });
    // a pin that is not JSON is named before the host sees it
    await page.getByTestId('pin-value-fetch').fill('{ "status": ');
    await page.getByTestId('run-start').click();
    await expect.poll(() => page.getByTestId('run-vars-error').textContent()).toMatch(/^The pinned result of "fetch" is not JSON/);
    await page.getByTestId('pin-value-fetch').fill('{ "status": 200, "headers": {}, "body": { "version": "pinned" } }');
    // when it starts
    await page.getByTestId('run-start').click();
    // then the instance opens, marked a test run, and its graph shows both nodes completed
    await page.getByTestId('instance-detail').waitFor();
    await expect.poll(() => page.getByTestId('detail-test').textContent()).toBe('test run · pinned: fetch');
    await expect.poll(() => page.getByTestId('graph-node-say').getAttribute('data-state'), { timeout: 15_000 }).toBe('completed');
    expect(await page.getByTestId('graph-node-fetch').getAttribute('data-state')).toBe('completed');
    await expect.poll(() => page.getByTestId('instance-detail').getAttribute('data-status')).toBe('COMPLETED');
    // and the server got no request; the script ran on the pinned result
    expect(requests).toBe(0);
    const id = Number(await page.getByTestId('instance-detail').getAttribute('data-id'));
    const detail = await app.api<Output<'instance:get'>>('instance:get', { id });
    expect(detail).toMatchObject({ test: true, pins: { fetch: { body: { version: 'pinned' } } }, variables: { said: 'version pinned' } });
    // left out of the default list, listed with test: true
    expect((await app.api<Output<'instance:list'>>('instance:list', {})).items).toEqual([]);
    expect((await app.api<Output<'instance:list'>>('instance:list', { test: true })).items.map((i) => i.id)).toEqual([id]);

    // the Instances list leaves it out; its "test runs" chip shows it, and one click deletes it
    await page.getByTestId('detail-back').click();
    await page.getByTestId('instances-table').waitFor();
    await expect.poll(() => page.getByTestId('instances-table').getAttribute('data-status')).not.toBe('loading');
    expect(await page.locator('[data-testid^="instance-row-"]').count()).toBe(0);
    await page.getByTestId('filter-test').click();
    await page.getByTestId(`instance-row-${id}`).waitFor();
    await page.getByTestId('delete-test-runs').click();
    await expect.poll(() => page.getByTestId('test-runs-deleted').textContent()).toBe('Deleted 1 test run');
    await expect.poll(() => page.locator('[data-testid^="instance-row-"]').count()).toBe(0);
    expect((await app.api<Output<'instance:list'>>('instance:list', { test: true })).items).toEqual([]);
    expect(app.consoleErrors).toEqual([]);
  });
});
