// End to end in Chromium through the browser host: instances that stop for a person show why in
// the list; a person edits the variables in the resume panel (with a diff preview), chooses
// retry, and the instance goes on — an incident to COMPLETED; a failed compensation on to the end
// of its chain (FAILED, its original failure, as DESIGN.md section 4 says). History shows the
// edit as a diff with the person's name.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Output } from '../../../engine/api/contract';
import {
  notReloaded,
  openFromList,
  rowIdsOnScreen,
  startFromUi,
  startMonitorApp,
  waitText,
  waitUntil,
  type MonitorApp,
} from '../../helpers/monitor-app';

let app: MonitorApp;

beforeAll(async () => {
  app = await startMonitorApp({
    workflows: ['test/fixtures/monitor-resume.workflow.json', 'test/fixtures/monitor-refund.workflow.json'],
  });
  await app.page.getByTestId('nav-instances').click();
  await app.page.getByTestId('actor-name').fill('Linus');
  await app.page.getByTestId('actor-name').press('Enter');
});
afterAll(async () => {
  await app?.close();
});

/** Opens the resume panel of the open instance, replaces the variables, checks the preview, confirms `action`. */
async function resumeInUi(
  edit: (vars: Record<string, unknown>) => Record<string, unknown>,
  action: 'retry' | 'skip' | 'fail',
  expectDiff: RegExp[],
  result?: string,
): Promise<void> {
  const { page } = app;
  await page.getByTestId('action-resume').click();
  const vars = JSON.parse(await page.getByTestId('resume-vars').inputValue()) as Record<string, unknown>;
  await page.getByTestId('resume-vars').fill(JSON.stringify(edit(vars), null, 2));
  const diff = (await page.getByTestId('resume-diff').textContent()) ?? '';
  for (const re of expectDiff) expect(diff).toMatch(re);
  await page.getByTestId(`resume-action-${action}`).check();
  if (result !== undefined) await page.getByTestId('resume-result').fill(result);
  await page.getByTestId('resume-confirm').click();
}

describe('resume by hand', () => {
  it('an incident: the list shows why; edit a variable, retry, and it reaches COMPLETED; history shows the diff and who', async () => {
    const { page } = app;
    // given an instance suspended at `check` because `ok` is not true
    const id = await startFromUi(page, 'monitor-resume', '{"order": 42}');
    await waitText(page.getByTestId(`instance-status-${id}`), 'SUSPENDED');
    // then the list says why, what it waits for, and where
    await waitUntil(
      () => page.getByTestId(`instance-reason-${id}`).textContent(),
      (t) => /^"check" failed after 1 attempt: .*stock check failed: ok is not true$/.test(t ?? ''),
      'the reason in the list',
    );
    expect(await page.getByTestId(`instance-waiting-${id}`).locator('.wait').textContent()).toBe('person');
    expect(await page.getByTestId(`instance-current-${id}`).textContent()).toBe('check');
    // and a notice told the person; clicking it opens the instance
    const notice = page.locator(`[data-testid^="notice-"][data-kind="suspended"][data-instance="${id}"]`);
    await waitUntil(
      () => notice.count(),
      (n) => n === 1,
      'the suspension notice',
    );
    await notice.locator('[data-testid^="notice-open-"]').click();
    await waitUntil(
      () => page.getByTestId('instance-detail').getAttribute('data-id'),
      (v) => v === String(id),
      'the detail to open from the notice',
    );
    expect(await page.getByTestId('suspension-reason').textContent()).toMatch(/stock check failed/);
    expect(await page.getByTestId('graph-node-check').getAttribute('data-state')).toBe('failed');

    // when the person sets ok = true and retries the failed step
    await resumeInUi((v) => ({ ...v, ok: true }), 'retry', [/\+ ok: true/]);
    // then it goes on to COMPLETED, live
    await waitText(page.getByTestId('detail-status'), 'COMPLETED');
    await waitUntil(
      () => page.getByTestId('graph-node-ship').getAttribute('data-state'),
      (s) => s === 'completed',
      'ship to complete',
    );
    expect(await page.getByTestId('graph-node-hold').getAttribute('data-state')).toBe('skipped');
    // and history shows the edit as a diff, with its actor
    await page.getByTestId('detail-tab-history').click();
    const resumed = page.locator('[data-testid^="history-row-"][data-type="instance.resumed"]');
    await waitUntil(
      () => resumed.count(),
      (n) => n === 1,
      'the resume in history',
    );
    expect(await resumed.locator('[data-testid^="history-actor-"]').textContent()).toBe('Linus');
    const diff = resumed.locator('[data-testid^="history-diff-"]');
    expect(await diff.locator('.diff-added').getAttribute('data-key')).toBe('ok');
    expect(await diff.textContent()).toContain('+ ok: true');
    expect(await notReloaded(page)).toBe(true);

    const history = await app.api<Output<'instance:history'>>('instance:history', { id });
    expect(history.events.find((e) => e.type === 'instance.resumed')).toMatchObject({
      actor: 'Linus',
      data: { action: 'retry', diff: { added: { ok: true }, removed: [], changed: {} } },
    });
    await page.getByTestId('detail-back').click();
  });

  it('a failed compensation: SUSPENDED with its reason in the list; edit, retry, and the chain ends as DESIGN.md says', async () => {
    const { page } = app;
    // given an instance whose shipping failed and whose refund (the charge's compensation) failed too
    const id = await startFromUi(page, 'monitor-refund', '{}');
    await waitText(page.getByTestId(`instance-status-${id}`), 'SUSPENDED');
    await waitUntil(
      () => page.getByTestId(`instance-reason-${id}`).textContent(),
      (t) =>
        /^compensation of "charge" failed after 1 attempt: .*refund refused: refundOk is not true$/.test(
          t ?? '',
        ),
      'the compensation reason in the list',
    );
    expect(await page.getByTestId(`instance-current-${id}`).textContent()).toBe('charge');
    // and the list's filters find it: waiting for a person, text of its error
    await page.getByTestId('filter-waiting').selectOption('person');
    await page.getByTestId('filter-text').fill('refundOk');
    await waitUntil(
      () => rowIdsOnScreen(page),
      (ids) => ids.length === 1 && ids[0] === id,
      'the filtered list to hold only it',
    );
    await openFromList(page, id);
    expect(await page.getByTestId('graph-node-charge').getAttribute('data-state')).toBe('compensating');

    // when the person sets refundOk and retries the compensation
    await resumeInUi((v) => ({ ...v, refundOk: true }), 'retry', [/\+ refundOk: true/]);
    // then the refund runs and the instance ends FAILED with its original failure, the charge compensated
    await waitText(page.getByTestId('detail-status'), 'FAILED');
    await waitUntil(
      () => page.getByTestId('graph-node-charge').getAttribute('data-state'),
      (s) => s === 'compensated',
      'the charge to be compensated',
    );
    expect(await page.getByTestId('failure-banner').textContent()).toMatch(/carrier down/);
    const inst = await app.api<Output<'instance:get'>>('instance:get', { id });
    expect(inst.variables).toMatchObject({ refundOk: true });
    const history = await app.api<Output<'instance:history'>>('instance:history', { id });
    expect(history.events.find((e) => e.type === 'instance.resumed')).toMatchObject({
      actor: 'Linus',
      data: { action: 'retry', reason: 'compensation' },
    });
    await page.getByTestId('detail-back').click();
  });

  it('ran without page errors', () => {
    expect(app.errors).toEqual([]);
  });
});
