/**
 * The progress log of `--wait` (run, start, resume, approve, retry) leaves out no step another
 * process did (found in a newcomer's trial: with a worker beside it, `start --wait` went from
 * "stuck RETRYING after attempt 1" to "spin RUNNING (attempt 2)", missing what the worker did).
 * Here one engine follows an instance it never works, while a second engine on the same file (a
 * connection of its own, as another process's) works it: every step's end still reaches the log.
 * Real SQLite file.
 */
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { clientOf } from '../../../engine/cli/host';
import { Progress } from '../../../engine/cli/output';
import { followInstance } from '../../../engine/cli/report';
import { Engine } from '../../../engine/runtime/engine';
import { tempDir } from '../../helpers/temp-engine';

describe('the --wait progress log', () => {
  let tmp: ReturnType<typeof tempDir> | undefined;
  const engines: Engine[] = [];
  afterEach(async () => {
    for (const e of engines.splice(0)) await e.close();
    tmp?.cleanup();
  });

  it("says each step's end when another process works the instance", async () => {
    // given: a → b (a script) → c, started; one engine follows it, another works it
    tmp = tempDir();
    const db = path.join(tmp.dir, 'runnel.db');
    const follower = Engine.open(db);
    engines.push(follower);
    await follower.deploy({
      name: 'relay',
      nodes: [
        { id: 'a', type: 'pass' },
        { id: 'b', type: 'script', config: { code: 'return 1' } },
        { id: 'c', type: 'pass' },
      ],
      edges: [
        { from: 'a', to: 'b' },
        { from: 'b', to: 'c' },
      ],
    });
    const id = await follower.start('relay');
    const lines: string[] = [];
    const progress = new Progress({ stdout: () => undefined, stderr: (text) => lines.push(text.trimEnd()) }, true);
    const stop = followInstance(follower, clientOf(follower, { stdout: () => undefined, stderr: () => undefined }), progress, () => id);
    const worker = Engine.open(db, { pollIntervalMs: 10 });
    engines.push(worker);
    // when: the other engine works it to its end
    worker.startWorker();
    const t0 = Date.now();
    while ((await follower.getInstance(id)).status !== 'COMPLETED' && Date.now() - t0 < 20_000) await new Promise((r) => setTimeout(r, 20));
    expect((await follower.getInstance(id)).status).toBe('COMPLETED');
    // and the follower stops at once, as --wait does when the instance settles (its last look
    // reads what the other engine committed since the one before)
    await stop();
    // then: every step's end is in the log, and the instance's
    const said = lines.map((l) => l.replace(/^ {2}\+\d+\.\d+s {2}/, ''));
    expect(said).toEqual(expect.arrayContaining(['a  COMPLETED', 'b  COMPLETED', 'c  COMPLETED', 'instance COMPLETED']));
    expect(said.filter((l) => l === 'instance COMPLETED')).toHaveLength(1);
  });
});
