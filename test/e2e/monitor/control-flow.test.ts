// Parent and child instances and events in the monitor (issue 12), in real Chromium through the
// browser host: a map parent shows its children's counts by status; its link lists exactly its
// children (the parent filter, kept in the address as ?parent=<id>); a child links back to its
// parent. "Send event" on a waiting instance, prefilled from the event node it waits on, refuses
// data that is not JSON, completes the instance and says which node took the event; history
// shows the event received; an event sent to an instance that ended meanwhile is refused with
// INVALID_STATE in the dialog.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InstanceDetail, Output } from '../../../engine/api/contract';
import { attrOfAll, openFromList, rowIdsOnScreen, startMonitorApp, waitText, waitUntil, type MonitorApp } from '../../helpers/monitor-app';

let app: MonitorApp;

/** A device's upgrade: waits for the device to report ("done", keyed by its id). */
const deviceUpgrade = {
  format: 1,
  name: 'device-upgrade',
  nodes: [{ id: 'report', type: 'event', config: { name: 'done', key: '{{ item }}' }, output: 'report' }],
  edges: [],
};

/**
 * The fleet: one device-upgrade per device, all at once. (With fewer at once than devices, the
 * child started when one ends stays RUNNING on main at a5a3dec: an engine bug, reported.)
 */
const fleet = {
  format: 1,
  name: 'fleet-upgrade',
  nodes: [{ id: 'each', type: 'map', config: { items: 'devices', workflow: 'device-upgrade', maxConcurrency: 3 }, output: 'results' }],
  edges: [],
};

/** An order that waits for its payment, keyed by the order id. */
const order = {
  format: 1,
  name: 'order',
  nodes: [
    { id: 'paid', type: 'event', config: { name: 'payment', key: '{{ orderId }}' }, output: 'payment' },
    { id: 'ship', type: 'pass', config: { result: 'shipped' } },
  ],
  edges: [{ from: 'paid', to: 'ship' }],
};

beforeAll(async () => {
  app = await startMonitorApp({
    prepare: async (engine) => {
      for (const d of [deviceUpgrade, fleet, order]) await engine.deploy(d);
    },
  });
});
afterAll(async () => {
  await app?.close();
});

/** Instance `id` as the API has it. */
function get(id: number): Promise<InstanceDetail> {
  return app.api<InstanceDetail>('instance:get', { id });
}

/** Waits until instance `id`'s detail is the one on screen. */
async function detailOf(id: number): Promise<void> {
  await waitUntil(
    () => app.page.getByTestId('instance-detail').getAttribute('data-id', { timeout: 500 }),
    (v) => v === String(id),
    `the detail of #${id}`,
  );
}

/** The count shown for `key` in the children of node `node`. */
function childCount(node: string, key: string): Promise<string | null> {
  return app.page.getByTestId(`child-count-${node}-${key}`).getAttribute('data-count', { timeout: 500 });
}

describe('monitor: parent and child instances', () => {
  it('a map parent shows its children by status, lists them through the parent filter, and a child links back', async () => {
    const { page } = app;
    // given: a fleet of three devices; one device reports
    const parent = (await app.api<Output<'instance:start'>>('instance:start', { workflow: 'fleet-upgrade', variables: { devices: ['d1', 'd2', 'd3'] } })).id;
    // an unrelated instance, which the parent filter must leave out
    const other = (await app.api<Output<'instance:start'>>('instance:start', { workflow: 'order', variables: { orderId: 'X' } })).id;
    await waitUntil(() => get(parent), (d) => d.children?.[0]?.waiting === 3, 'three children waiting');
    const first = (await app.api<Output<'instance:list'>>('instance:list', { parentId: parent })).items.map((i) => i.id);
    await app.api('instance:signal', { id: Math.min(...first), event: 'done', key: 'd1', data: { ok: true } });
    await waitUntil(() => get(parent), (d) => d.children?.[0]?.completed === 1 && d.children[0].waiting === 2, 'one child done');

    // when: the parent is opened
    await openFromList(page, parent);
    // then: its map node's children are counted by status
    await page.getByTestId('child-group-each').waitFor();
    expect(await page.getByTestId('child-group-each').getAttribute('data-total')).toBe('3');
    await waitUntil(
      async () => Promise.all(['completed', 'failed', 'running', 'waiting', 'queued'].map((k) => childCount('each', k))),
      (v) => JSON.stringify(v) === JSON.stringify(['1', '0', '0', '2', '0']),
      'the children counts',
    );
    expect(await page.getByTestId('child-group-each').textContent()).toContain('device-upgrade v1');
    expect(await page.getByTestId('detail-parent').count()).toBe(0);

    // when: its link to the children is followed
    await page.getByTestId('child-list-each').click();
    // then: the list shows exactly its three children, under a parent chip, and the address says so
    await page.getByTestId('filter-parent').waitFor();
    expect(await page.getByTestId('filter-parent').getAttribute('data-parent')).toBe(String(parent));
    const children = (await app.api<Output<'instance:list'>>('instance:list', { parentId: parent })).items.map((i) => i.id);
    expect(children).toHaveLength(3);
    await waitUntil(() => rowIdsOnScreen(page), (ids) => JSON.stringify([...ids].sort()) === JSON.stringify([...children].sort()), 'the children rows');
    expect(await rowIdsOnScreen(page)).not.toContain(other);
    await waitUntil(() => page.evaluate(() => location.hash), (h) => h === `#/instances?parent=${parent}`, 'the filtered address');
    const waiting = await attrOfAll(page.locator('[data-testid^="instance-waiting-"] .wait'), 'class');
    expect(waiting.filter((c) => c?.includes('wait-event'))).toHaveLength(2);

    // when: a child is opened
    const child = Math.max(...children.filter((c) => c !== Math.min(...first)));
    await page.getByTestId(`instance-row-${child}`).click();
    await detailOf(child);
    // then: it names its parent and the node that started it, and the link opens the parent
    await waitText(page.getByTestId('detail-parent'), `child of #${parent} at each`);
    await page.getByTestId('detail-parent-open').click();
    await detailOf(parent);

    // when: the filtered list's address is loaded afresh
    await page.evaluate((p) => {
      location.hash = `#/instances?parent=${p}`;
    }, parent);
    // then: the list is filtered by the parent again (the chip's × clears it)
    await page.getByTestId('filter-parent').waitFor();
    await waitUntil(() => rowIdsOnScreen(page), (ids) => ids.length === 3 && !ids.includes(other), 'the children rows again');
    await page.getByTestId('filter-parent-clear').click();
    await waitUntil(() => rowIdsOnScreen(page), (ids) => ids.includes(other) && ids.includes(parent), 'every row');
    await waitUntil(() => page.evaluate(() => location.hash), (h) => h === '#/instances', 'the unfiltered address');
  });

  it('Send event, prefilled from the waiting node, completes the instance; an ended instance refuses it', async () => {
    const { page } = app;
    // given: an order waiting for its payment
    const id = (await app.api<Output<'instance:start'>>('instance:start', { workflow: 'order', variables: { orderId: 'A-17' } })).id;
    await waitUntil(() => get(id), (d) => d.status === 'WAITING', 'the order to wait');
    await openFromList(page, id);
    await waitText(page.getByTestId('detail-status'), 'WAITING');

    // when: Send event is opened
    await page.getByTestId('action-send-event').click();
    const dialog = page.getByTestId('send-event-dialog');
    await dialog.waitFor();
    // then: name and key are those the node waits for
    expect(await page.getByTestId('send-event-name').inputValue()).toBe('payment');
    expect(await page.getByTestId('send-event-key').inputValue()).toBe('A-17');
    expect(await page.getByTestId('send-event-wait-paid').textContent()).toContain('payment (key A-17)');
    // and data that is not JSON is refused before sending
    await page.getByTestId('send-event-data').fill('{ amount: 12 }');
    await page.getByTestId('send-event-data-error').waitFor();
    expect(await page.getByTestId('send-event-confirm').isDisabled()).toBe(true);

    // when: JSON data is given and sent
    await page.getByTestId('send-event-data').fill('{ "amount": 12 }');
    await page.getByTestId('send-event-confirm').click();
    // then: the dialog says which node took it, and the instance completes with the data as the node's result
    await page.getByTestId('send-event-result').waitFor();
    expect(await page.getByTestId('send-event-result').getAttribute('data-consumed-by')).toBe('paid');
    expect(await page.getByTestId('send-event-result').textContent()).toContain('taken by node paid');
    await waitText(page.getByTestId('detail-status'), 'COMPLETED');
    expect((await get(id)).variables).toMatchObject({ payment: { amount: 12 } });
    await page.getByTestId('send-event-close').click();
    expect(await page.getByTestId('action-send-event').count()).toBe(0);
    // and history shows the event, taken by the node
    await page.getByTestId('detail-tab-history').click();
    const row = page.locator('[data-testid^="history-row-"][data-type="event.received"]');
    await row.waitFor();
    expect(await row.textContent()).toContain('event payment key A-17 → taken by paid');

    // given: another order, whose dialog is open when it is cancelled elsewhere
    const late = (await app.api<Output<'instance:start'>>('instance:start', { workflow: 'order', variables: { orderId: 'B-2' } })).id;
    await waitUntil(() => get(late), (d) => d.status === 'WAITING', 'the second order to wait');
    await openFromList(page, late);
    await waitText(page.getByTestId('detail-status'), 'WAITING');
    await page.getByTestId('action-send-event').click();
    await app.api('instance:cancel', { id: late, compensate: false });
    // when: the event is sent
    await page.getByTestId('send-event-confirm').click();
    // then: the refusal is in the dialog
    await page.getByTestId('send-event-error').waitFor();
    expect(await page.getByTestId('send-event-error').getAttribute('data-code')).toBe('INVALID_STATE');
    expect(await page.getByTestId('toast').count()).toBe(0);
    expect(app.errors).toEqual([]);
  });
});
