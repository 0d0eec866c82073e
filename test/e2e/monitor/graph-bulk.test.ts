// End to end in Chromium through the browser host:
// - the graph overlay of a finished instance colours exactly the nodes that ran, failed and were
//   skipped, draws the path taken, and the timeline has a bar per attempt;
// - a bulk cancel of a filtered set, previewed with its count, touches exactly that set (not an
//   instance started after the preview, not one outside the filter).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Output } from '../../../engine/api/contract';
import {
  computedStyle,
  notReloaded,
  openFromList,
  rowIdsOnScreen,
  startMonitorApp,
  waitText,
  waitUntil,
  type MonitorApp,
} from '../../helpers/monitor-app';

let app: MonitorApp;

beforeAll(async () => {
  app = await startMonitorApp({
    workflows: [
      'test/fixtures/monitor-overlay.workflow.json',
      'test/fixtures/monitor-wait.workflow.json',
      'examples/purchase-approval.workflow.json',
    ],
  });
});
afterAll(async () => {
  await app?.close();
});

const waitStatus = (id: number, status: string) =>
  waitUntil(
    () => app.api<Output<'instance:get'>>('instance:get', { id }),
    (i) => i.status === status,
    `#${id} ${status}`,
  );

describe('graph overlay of a finished instance', () => {
  it('colours exactly the nodes that ran, failed and were skipped, and draws the path taken', async () => {
    const { page } = app;
    // given an instance that ended COMPLETED with a node failed (handled by its error edge) and three skipped
    const { id } = await app.api<Output<'instance:start'>>('instance:start', { workflow: 'monitor-overlay' });
    await waitStatus(id, 'COMPLETED');
    await openFromList(page, id);
    await waitText(page.getByTestId('detail-status'), 'COMPLETED');
    // then each node shows its end, and only a, b and c ran
    const expected: Record<string, [string, string]> = {
      a: ['completed', 'true'],
      b: ['failed', 'true'],
      c: ['completed', 'true'],
      d: ['skipped', 'false'],
      e: ['skipped', 'false'],
      f: ['skipped', 'false'],
    };
    for (const [nodeId, [state, ran]] of Object.entries(expected)) {
      const node = page.getByTestId(`graph-node-${nodeId}`);
      await waitUntil(
        () => node.getAttribute('data-state'),
        (s) => s === state,
        `${nodeId} to be ${state}`,
      );
      expect(await node.getAttribute('data-ran'), nodeId).toBe(ran);
    }
    expect(await page.getByTestId('graph-node-b').getAttribute('data-attempt')).toBe('2');
    // and the colours are the states' own: one per kind of end
    const border = (nodeId: string) =>
      computedStyle(page.getByTestId(`graph-node-${nodeId}`), 'borderTopColor');
    const colours = Object.fromEntries(
      await Promise.all(Object.keys(expected).map(async (n) => [n, await border(n)] as const)),
    );
    expect(new Set([colours.a, colours.c]).size).toBe(1);
    expect(new Set([colours.d, colours.e, colours.f]).size).toBe(1);
    expect(new Set([colours.a, colours.b, colours.d]).size).toBe(3);
    expect(colours.a).toBe('rgb(22, 163, 74)');
    expect(colours.b).toBe('rgb(220, 38, 38)');
    // and the path taken: a → b, then b's error edge to c; the others not taken
    const edge = (edgeId: string) => page.getByTestId(`rf__edge-${edgeId}`).getAttribute('class');
    expect(await edge('a->b')).toContain('edge-taken');
    expect(await edge('b-!>c')).toContain('edge-taken');
    for (const idle of ['b->e', 'a->d', 'd->f']) expect(await edge(idle), idle).toContain('edge-idle');
    // and the timeline: a bar per attempt of b (both failed, with the backoff between), none for the skipped
    for (const bar of ['a-1-completed', 'b-1-failed', 'b-1-backoff', 'b-2-failed', 'c-1-completed']) {
      expect(await page.getByTestId(`gantt-bar-${bar}`).count(), bar).toBe(1);
    }
    expect(
      await page
        .locator(
          '[data-testid^="gantt-bar-d-"], [data-testid^="gantt-bar-e-"], [data-testid^="gantt-bar-f-"]',
        )
        .count(),
    ).toBe(0);
    expect(await page.getByTestId('gantt-marker-node.skipped').count()).toBe(3);
    // and the node panel of b lists both attempts with their error
    await page.getByTestId('graph-node-b').click();
    await waitUntil(
      () => page.getByTestId('node-panel').getAttribute('data-node'),
      (n) => n === 'b',
      'the panel of b',
    );
    expect(await page.getByTestId('node-attempts-count').textContent()).toBe('2 of 2');
    expect(await page.getByTestId('node-attempts').locator('li').count()).toBe(2);
    expect(await page.getByTestId('node-error').textContent()).toContain('b always fails');
    await page.getByTestId('detail-back').click();
  });
});

describe('bulk actions', () => {
  it('a bulk cancel of a filtered set shows the count first, then touches exactly that set', async () => {
    const { page } = app;
    // given three instances waiting on a timer, one already cancelled, and two approvals waiting
    const waiting: number[] = [];
    for (let i = 0; i < 4; i++)
      waiting.push(
        (await app.api<Output<'instance:start'>>('instance:start', { workflow: 'monitor-wait' })).id,
      );
    const approvals = [
      (await app.api<Output<'instance:start'>>('instance:start', { workflow: 'purchase-approval' })).id,
      (await app.api<Output<'instance:start'>>('instance:start', { workflow: 'purchase-approval' })).id,
    ];
    for (const id of [...waiting, ...approvals]) await waitStatus(id, 'WAITING');
    const cancelledBefore = waiting.pop() ?? 0;
    await app.api('instance:cancel', { id: cancelledBefore });

    // when the person filters the list to monitor-wait instances that are WAITING
    await page.getByTestId('nav-instances').click();
    if (await page.getByTestId('filter-clear').isEnabled()) await page.getByTestId('filter-clear').click();
    await page.getByTestId('filter-workflow').selectOption('monitor-wait');
    await page.getByTestId('status-chip-WAITING').click();
    const rows = () => rowIdsOnScreen(page);
    await waitUntil(rows, (ids) => ids.length === 3, 'three filtered rows');
    expect((await rows()).sort()).toEqual([...waiting].sort());
    expect(await page.getByTestId('status-chip-WAITING').getAttribute('data-count')).toBe('3');
    expect(await page.getByTestId('status-chip-CANCELLED').getAttribute('data-count')).toBe('1');

    // and asks for a bulk cancel: the preview counts the set first
    await page.getByTestId('bulk-menu').click();
    await page.getByTestId('bulk-cancel').click();
    await waitUntil(
      () => page.getByTestId('bulk-preview').getAttribute('data-count'),
      (c) => c === '3',
      'the preview count',
    );
    expect(await page.getByTestId('bulk-preview').textContent()).toContain(`#${Math.min(...waiting)}`);
    // and another instance starts before they confirm
    const late = (await app.api<Output<'instance:start'>>('instance:start', { workflow: 'monitor-wait' })).id;
    await waitStatus(late, 'WAITING');
    await page.getByTestId('bulk-confirm').click();
    await waitUntil(
      () => page.getByTestId('bulk-result').getAttribute('data-affected'),
      (a) => a === '3',
      'the bulk result',
    );

    // then exactly those three are CANCELLED; the late one, the approvals and the earlier cancel are untouched
    for (const id of waiting)
      expect((await app.api<Output<'instance:get'>>('instance:get', { id })).status).toBe('CANCELLED');
    expect((await app.api<Output<'instance:get'>>('instance:get', { id: late })).status).toBe('WAITING');
    for (const id of approvals)
      expect((await app.api<Output<'instance:get'>>('instance:get', { id })).status).toBe('WAITING');
    for (const id of waiting) {
      const h = await app.api<Output<'instance:history'>>('instance:history', { id });
      expect(h.events.filter((e) => e.type === 'instance.cancel_requested').map((e) => e.actor)).toEqual([
        'you',
      ]);
    }
    const before = await app.api<Output<'instance:history'>>('instance:history', { id: cancelledBefore });
    expect(before.events.filter((e) => e.type === 'instance.cancel_requested')).toHaveLength(1);
    // and the list shows the new statuses, live
    await page.getByTestId('status-chip-WAITING').click();
    await page.getByTestId('status-chip-CANCELLED').click();
    await waitUntil(
      () => page.getByTestId('status-chip-CANCELLED').getAttribute('data-count'),
      (c) => c === '4',
      'four cancelled',
    );
    expect(await notReloaded(page)).toBe(true);
    await page.getByTestId('filter-clear').click();
  });

  it('ran without page errors', () => {
    expect(app.errors).toEqual([]);
  });
});
