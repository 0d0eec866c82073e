/**
 * `runnel list` says in its NOTE what a live instance waits for (found in a newcomer's trial: an
 * instance waiting out a retry's backoff showed nothing): a retry (which node, which attempt comes,
 * when), a person's decision, a held start, a pause; the business key follows the note. Real database file;
 * the instances are brought there by the engine, then listed by the real CLI.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Engine } from '../../../engine/runtime/engine';
import { runCli } from '../../helpers/cli';
import { tempDir } from '../../helpers/temp-engine';

describe('runnel list NOTE', () => {
  let tmp: ReturnType<typeof tempDir> | undefined;
  afterEach(() => tmp?.cleanup());

  it('names the wait of each live instance, then its business key', async () => {
    tmp = tempDir();
    const db = `${tmp.dir}/runnel.db`;
    const engine = Engine.open(db);
    try {
      // given: a step that fails with a minute's backoff, an approval, and a start held by a limit of one
      await engine.deploy({
        name: 'flaky',
        nodes: [{ id: 'call', type: 'script', config: { code: 'throw new Error("down")' }, retry: { maxAttempts: 3, initialIntervalMs: 60_000 } }],
      });
      await engine.deploy({ name: 'ask', concurrency: { limit: 1 }, nodes: [{ id: 'ok', type: 'approval', config: {} }] });
      const flaky = await engine.start('flaky', { businessKey: 'order-7' });
      const asked = await engine.start('ask');
      const held = await engine.start('ask');
      await engine.runUntil(async () => (await engine.getInstance(flaky)).nodes.some((n) => n.status === 'RETRYING') && (await engine.getInstance(asked)).status === 'WAITING', 20_000);
      expect(held).toBe(asked + 1);
      // and a delay paused by a person
      await engine.deploy({ name: 'nap', nodes: [{ id: 'sleep', type: 'delay', config: { durationMs: 3_600_000 } }] });
      const nap = await engine.start('nap');
      await engine.runUntil(async () => (await engine.getInstance(nap)).status === 'WAITING', 20_000);
      await engine.pause(nap);
    } finally {
      await engine.close();
    }
    // when: listed
    const r = await runCli('list', '--db', db);
    expect(r.code, r.stderr).toBe(0);
    const notes = r.stdout
      .trimEnd()
      .split('\n')
      .slice(1)
      .map((l) => l.split(/ {2,}/).at(-1));
    // then: newest first, each says what it waits for
    expect(notes).toEqual([
      expect.stringMatching(/^paused since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} \(unpause to go on\); delay at "sleep"$/),
      'waits for a slot (concurrency limit)',
      `waits for a person's decision at "ok"`,
      expect.stringMatching(/^retry at "call" \(attempt 2 of 3\) in (59|60) s · key order-7$/),
    ]);
  });
});
