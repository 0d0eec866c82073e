/**
 * What `runnel approve` and `runnel signal` say once the decision is recorded: "a worker carries it
 * on" only while a worker has something to do. An approval that was the instance's last step ends
 * it in the same transaction (a newcomer's trial saw "now COMPLETED (a worker carries it on …)").
 * Real bin, real file.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runBin } from '../../helpers/cli';
import { tempDir } from '../../helpers/temp-engine';

describe('runnel approve: what it says after the decision', () => {
  let tmp: ReturnType<typeof tempDir>;
  let db: string;
  beforeEach(() => {
    tmp = tempDir();
    db = path.join(tmp.dir, 'runnel.db');
  });
  afterEach(() => tmp.cleanup());

  /** Runs `definition` to its wait for a person (exit 3); returns the instance id. */
  async function waiting(definition: unknown): Promise<number> {
    const wf = path.join(tmp.dir, 'wf.json');
    fs.writeFileSync(wf, JSON.stringify(definition));
    const run = await runBin(['run', wf, '--db', db]);
    expect(run.code, run.stderr).toBe(3);
    return Number(/^instance (\d+) /.exec(run.stdout)?.[1]);
  }

  it('says nothing of a worker when the approval ended the instance', async () => {
    const id = await waiting({ name: 'last-ask', nodes: [{ id: 'ask', type: 'approval', config: { prompt: 'ok?' } }], edges: [] });
    const r = await runBin(['approve', String(id), 'ask', '--approve', '--db', db]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(`instance ${id}: "ask" approved; now COMPLETED\n`);
  });

  it('says a worker carries it on when steps follow the approval', async () => {
    const id = await waiting({
      name: 'ask-then-pass',
      nodes: [
        { id: 'ask', type: 'approval', config: { prompt: 'ok?' } },
        { id: 'after', type: 'pass' },
      ],
      edges: [{ from: 'ask', to: 'after' }],
    });
    const r = await runBin(['approve', String(id), 'ask', '--approve', '--db', db]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(`instance ${id}: "ask" approved; now RUNNING (a worker carries it on: npx runnel worker, or pass --wait)\n`);
  });
});
