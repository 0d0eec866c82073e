// Time travel in the monitor (issue 14), in real Chromium through the browser host: the scrubber
// over an instance's history shows, at each entry, the graph's node states and the variables tree
// as they were right after it (what `instance:stateAt` answers), step by step and by the slider;
// "Start a copy from here" starts a fork from that entry and opens it, and the copy runs only
// what was not done.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HistoryEvent, InstanceDetail, Output } from '../../../engine/api/contract';
import { openFromList, startMonitorApp, waitUntil, type MonitorApp } from '../../helpers/monitor-app';

let app: MonitorApp;

const flow = {
  format: 1,
  name: 'tt-monitor',
  nodes: [
    { id: 'seed', type: 'pass', config: { result: { n: 20 } }, output: 'seed' },
    { id: 'double', type: 'script', config: { code: 'return input.seed.n * 2' }, output: 'answer' },
    { id: 'finish', type: 'pass', config: { result: 'done' }, output: 'finished' },
  ],
  edges: [
    { from: 'seed', to: 'double' },
    { from: 'double', to: 'finish' },
  ],
};

beforeAll(async () => {
  app = await startMonitorApp({ prepare: async (engine) => void (await engine.deploy(flow)) });
});
afterAll(async () => {
  await app?.close();
});

const get = (id: number) => app.api<InstanceDetail>('instance:get', { id });
const history = async (id: number) =>
  (await app.api<{ events: HistoryEvent[] }>('instance:history', { id })).events;
const state = (id: string) => app.page.getByTestId(`graph-node-${id}`).getAttribute('data-state');

describe('monitor: time travel', () => {
  it('the scrubber replays the graph and the variables entry by entry, and a copy starts from the chosen one', async () => {
    const { page } = app;
    // given: a run to its end, open in the monitor
    const id = (await app.api<Output<'instance:start'>>('instance:start', { workflow: 'tt-monitor' })).id;
    await waitUntil(
      () => get(id),
      (d) => d.status === 'COMPLETED',
      'the run to end',
    );
    const events = await history(id);
    await openFromList(page, id);
    await page.getByTestId('detail-tab-variables').click();

    // when: time travel is turned on, it stands at the last entry: the state now
    await page.getByTestId('time-travel-toggle').click();
    const bar = page.getByTestId('time-travel');
    await waitUntil(
      () => bar.getAttribute('data-entry-id'),
      (v) => v === String(events.at(-1)?.id),
      'the last entry',
    );
    expect(await state('finish')).toBe('completed');
    expect(await page.getByTestId('variables-tree').textContent()).toContain('finished');

    // when: stepping back to the entry where `seed` completed
    const seeded = events.find((e) => e.type === 'node.completed' && e.nodeId === 'seed') as HistoryEvent;
    const steps = events.length - 1 - events.indexOf(seeded);
    for (let k = 0; k < steps; k++) await page.getByTestId('time-travel-prev').click();
    await waitUntil(
      () => bar.getAttribute('data-entry-id'),
      (v) => v === String(seeded.id),
      'the seed entry',
    );
    // then: the graph and the variables are as stateAt has them there
    const then = (await app.api<Output<'instance:stateAt'>>('instance:stateAt', { id, at: seeded.id }))
      .instance;
    for (const n of then.nodes)
      await waitUntil(
        () => state(n.id),
        (s) => s === n.status.toLowerCase(),
        `${n.id} drawn ${n.status}`,
      );
    expect(await state('seed')).toBe('completed');
    expect(await state('double')).not.toBe('completed');
    const tree = (await page.getByTestId('variables-tree').textContent()) ?? '';
    expect(tree).toContain('seed');
    expect(tree).not.toContain('answer');
    expect(await page.getByTestId('time-travel-entry').textContent()).toContain(
      `${events.indexOf(seeded) + 1} of ${events.length}`,
    );

    // the slider moves too: to the first entry, where nothing has run
    await page.getByTestId('time-travel-slider').fill('0');
    await waitUntil(
      () => bar.getAttribute('data-entry-id'),
      (v) => v === String(events[0]?.id),
      'the first entry',
    );
    await waitUntil(
      () => state('seed'),
      (s) => s !== 'completed',
      'seed not yet run',
    );
    // and back to the seed entry, one step at a time
    for (let k = 0; k < events.indexOf(seeded); k++) await page.getByTestId('time-travel-next').click();
    await waitUntil(
      () => bar.getAttribute('data-entry-id'),
      (v) => v === String(seeded.id),
      'the seed entry again',
    );

    // when: "Start a copy from here" is clicked
    await page.getByTestId('time-travel-fork').click();
    // then: the copy opens, runs to its end, with seed's result kept and only the rest run
    await waitUntil(
      () => page.getByTestId('instance-detail').getAttribute('data-id', { timeout: 500 }),
      (v) => v !== null && v !== String(id),
      'the copy to open',
    );
    const copyId = Number(await page.getByTestId('instance-detail').getAttribute('data-id'));
    const copy = await waitUntil(
      () => get(copyId),
      (d) => d.status === 'COMPLETED',
      'the copy to end',
    );
    expect(copy.variables).toEqual({ seed: { n: 20 }, answer: 40, finished: 'done' });
    expect(copy.nodes.find((n) => n.id === 'seed')).toMatchObject({ status: 'COMPLETED', attempt: 0 });
    expect(copy.nodes.find((n) => n.id === 'double')).toMatchObject({ status: 'COMPLETED', attempt: 1 });
    expect((await history(copyId))[0]).toMatchObject({
      type: 'instance.created',
      data: { forkedFrom: { id, at: seeded.id } },
    });
    await waitUntil(
      () => page.getByTestId('detail-status').textContent(),
      (t) => t === 'COMPLETED',
      'the copy shown COMPLETED',
    );
    // the scrubber is off on the copy
    expect(await page.getByTestId('time-travel').count()).toBe(0);
    expect(app.errors).toEqual([]);
  });
});
