// Pausing instances in the monitor (issue 13), in real Chromium through the browser host: Pause
// on a live instance shows it paused (badge, "Paused since" banner) and holds it past its delay;
// the list's Paused chip (kept in the address as ?paused) finds it, with a PAUSED badge on its row;
// Unpause clears both and the instance runs on to COMPLETED, its history saying how long it was
// paused. The bulk bar pauses, after a dry-run count, exactly the live instances the filter
// matches, and unpauses them again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InstanceDetail, Output } from '../../../engine/api/contract';
import { openFromList, rowIdsOnScreen, startMonitorApp, waitText, waitUntil, type MonitorApp } from '../../helpers/monitor-app';

let app: MonitorApp;

/** A step, a 2 s delay, a step: the delay is long enough to pause in, short enough to wait out. */
const slow = {
  format: 1,
  name: 'pause-slow',
  nodes: [
    { id: 'first', type: 'pass', config: { result: 1 } },
    { id: 'wait', type: 'delay', config: { durationMs: 2000 } },
    { id: 'second', type: 'pass', config: { result: 2 }, output: 'second' },
  ],
  edges: [
    { from: 'first', to: 'wait' },
    { from: 'wait', to: 'second' },
  ],
};

/** A step after a minute's delay: live for the whole test. */
const long = {
  format: 1,
  name: 'pause-long',
  nodes: [
    { id: 'wait', type: 'delay', config: { durationMs: 60_000 } },
    { id: 'after', type: 'pass' },
  ],
  edges: [{ from: 'wait', to: 'after' }],
};

beforeAll(async () => {
  app = await startMonitorApp({
    prepare: async (engine) => {
      for (const d of [slow, long]) await engine.deploy(d);
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

/** Starts one instance of `workflow`; its id. */
async function start(workflow: string): Promise<number> {
  return (await app.api<Output<'instance:start'>>('instance:start', { workflow })).id;
}

describe('monitor: pausing instances', () => {
  it('Pause holds an instance, the Paused chip finds it, Unpause lets it run on to COMPLETED', async () => {
    const { page } = app;
    // given: an instance in its delay, and another one that is not paused
    const id = await start('pause-slow');
    const other = await start('pause-long');
    await waitUntil(() => get(id), (d) => d.nodes.some((n) => n.id === 'wait' && n.status === 'WAITING'), 'the delay to start');
    await openFromList(page, id);
    expect(await page.getByTestId('action-unpause').count()).toBe(0);

    // when: Pause is clicked
    await page.getByTestId('action-pause').click();
    // then: the instance says it is paused, since when, and offers Unpause instead of Pause
    await page.getByTestId('paused-banner').waitFor();
    const pausedAt = (await get(id)).pausedAt;
    expect(pausedAt).toEqual(expect.any(Number));
    expect(await page.getByTestId('paused-banner').getAttribute('data-paused-at')).toBe(String(pausedAt));
    expect(await page.getByTestId('paused-banner').textContent()).toContain('Paused since');
    await page.getByTestId('detail-paused').waitFor();
    await page.getByTestId('action-unpause').waitFor();
    expect(await page.getByTestId('action-pause').count()).toBe(0);
    // and it holds past its delay: the second step does not start
    await new Promise((r) => setTimeout(r, 3000));
    const held = await get(id);
    expect(held.endedAt).toBeNull();
    expect(held.nodes.find((n) => n.id === 'second')?.status ?? 'PENDING').not.toBe('COMPLETED');

    // when: the list's Paused chip is pressed
    await page.getByTestId('detail-back').click();
    await page.getByTestId('filter-paused').click();
    // then: only the paused instance is listed, with a PAUSED badge, and the address keeps the filter
    await waitUntil(() => rowIdsOnScreen(page), (ids) => ids.length === 1 && ids[0] === id, 'only the paused row');
    expect(await page.getByTestId(`instance-paused-${id}`).textContent()).toMatch(/paused/i);
    expect(await page.getByTestId('filter-paused').getAttribute('aria-pressed')).toBe('true');
    await waitUntil(() => page.evaluate(() => location.hash), (h) => h === '#/instances?paused', 'the filtered address');
    // and the address loaded afresh filters the same way
    await page.evaluate(() => {
      location.hash = '#/instances';
    });
    await waitUntil(() => rowIdsOnScreen(page), (ids) => ids.includes(other), 'every row');
    await page.evaluate(() => {
      location.hash = '#/instances?paused';
    });
    await waitUntil(() => rowIdsOnScreen(page), (ids) => ids.length === 1 && ids[0] === id, 'only the paused row again');

    // when: it is opened and Unpause is clicked
    await page.getByTestId(`instance-row-${id}`).click();
    await page.getByTestId('action-unpause').click();
    // then: the pause is gone and it runs on to COMPLETED
    await waitText(page.getByTestId('detail-status'), 'COMPLETED');
    expect(await page.getByTestId('paused-banner').count()).toBe(0);
    expect((await get(id)).variables).toMatchObject({ second: 2 });
    // and history names the pause and how long it lasted
    await page.getByTestId('detail-tab-history').click();
    await page.locator('[data-testid^="history-row-"][data-type="instance.paused"]').waitFor();
    const unpaused = page.locator('[data-testid^="history-row-"][data-type="instance.unpaused"]');
    expect(await unpaused.textContent()).toMatch(/unpaused after \d+(\.\d)? s paused/);
    // and the list no longer marks it paused, and the Paused chip, pressed afresh, no longer finds it
    await page.getByTestId('detail-back').click();
    await page.getByTestId('filter-paused').click();
    await waitUntil(() => rowIdsOnScreen(page), (ids) => ids.includes(id) && ids.includes(other), 'every row');
    expect(await page.getByTestId(`instance-paused-${id}`).count()).toBe(0);
    await page.getByTestId('filter-paused').click();
    await page.getByTestId('instances-empty').waitFor();
    expect(app.errors).toEqual([]);
  });

  it('the bulk bar pauses the live instances the filter matches, after a dry-run count, and unpauses them', async () => {
    const { page } = app;
    // given: three live pause-long instances, one ended, and a live instance of another workflow
    const live = [await start('pause-long'), await start('pause-long'), await start('pause-long')];
    const ended = await start('pause-long');
    await app.api('instance:cancel', { id: ended, compensate: false });
    const outside = await start('pause-slow');
    await openFromList(page, live[0] ?? 0);
    await page.getByTestId('detail-back').click();
    await page.getByTestId('filter-workflow').selectOption('pause-long');
    await waitUntil(() => rowIdsOnScreen(page), (ids) => live.every((i) => ids.includes(i)) && !ids.includes(outside), 'the pause-long rows');
    const before = (await app.api<Output<'instance:list'>>('instance:list', { workflow: 'pause-long', paused: false })).items.filter(
      (i) => i.endedAt === null,
    ).length;

    // when: Pause live… is clicked
    await page.getByTestId('bulk-menu').click();
    await page.getByTestId('bulk-pause').click();
    // then: a dry run counts the live, unpaused ones of the filter, and nothing is paused yet
    const preview = page.getByTestId('bulk-preview');
    await preview.waitFor();
    expect(await preview.getAttribute('data-action')).toBe('pause');
    expect(await preview.getAttribute('data-count')).toBe(String(before));
    expect((await get(live[0] ?? 0)).pausedAt ?? null).toBeNull();
    expect(await page.getByTestId('bulk-confirm').textContent()).toContain('Pause');

    // when: it is confirmed
    await page.getByTestId('bulk-confirm').click();
    // then: those are paused, with a badge each, and the rest are not
    await page.getByTestId('bulk-result').waitFor();
    expect(await page.getByTestId('bulk-result').getAttribute('data-affected')).toBe(String(before));
    expect(await page.getByTestId('bulk-result').textContent()).toContain('Paused');
    for (const i of live) {
      expect((await get(i)).pausedAt).toEqual(expect.any(Number));
      await page.getByTestId(`instance-paused-${i}`).waitFor();
    }
    expect((await get(ended)).pausedAt ?? null).toBeNull();
    expect((await get(outside)).pausedAt ?? null).toBeNull();

    // when: Unpause… is clicked and confirmed
    await page.getByTestId('bulk-unpause').click();
    await preview.waitFor();
    expect(await preview.getAttribute('data-action')).toBe('unpause');
    expect(await preview.getAttribute('data-count')).toBe(String(before));
    await page.getByTestId('bulk-confirm').click();
    // then: none is paused any more
    await waitUntil(() => page.getByTestId('bulk-result').textContent(), (t) => (t ?? '').includes('Unpaused'), 'the unpause result');
    for (const i of live) {
      expect((await get(i)).pausedAt ?? null).toBeNull();
      await waitUntil(() => page.getByTestId(`instance-paused-${i}`).count(), (n) => n === 0, `#${i}'s badge to go`);
    }
    expect(app.errors).toEqual([]);
  });
});
