/**
 * `runnel resume --vars` means what the API's `instance:resume` means: the variables given
 * REPLACE the instance's, so a variable not given is gone, and history's diff says so. Real bin,
 * real file.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseJson, runBin } from '../../helpers/cli';
import { tempDir } from '../../helpers/temp-engine';

/** Suspends at `boom` until `fixed` is true; `seed`'s output is a variable too. */
const INCIDENT = {
  name: 'incident',
  nodes: [
    { id: 'seed', type: 'pass', config: { result: 7 }, output: 'seed' },
    {
      id: 'boom',
      type: 'script',
      config: { code: 'if (!input.fixed) throw new Error("not fixed yet"); return input.region' },
      retry: { maxAttempts: 1 },
      onFailure: 'suspend',
      output: 'boom',
    },
  ],
  edges: [{ from: 'seed', to: 'boom' }],
};

interface InstanceJson {
  id: number;
  status: string;
  variables: Record<string, unknown>;
  history: Array<{ type: string; actor: string | null; data?: { action?: string; diff?: unknown } }>;
}

describe('runnel resume --vars', () => {
  let tmp: ReturnType<typeof tempDir>;
  let db: string;
  let wf: string;
  beforeEach(() => {
    tmp = tempDir();
    db = path.join(tmp.dir, 'runnel.db');
    wf = path.join(tmp.dir, 'incident.workflow.json');
    fs.writeFileSync(wf, JSON.stringify(INCIDENT));
  });
  afterEach(() => tmp.cleanup());

  async function suspended(): Promise<number> {
    const run = await runBin(['run', wf, '--db', db, '--json', '--vars', '{"fixed": false, "region": "eu", "note": "old"}']);
    expect(run.code, run.stderr).toBe(3);
    const inst = parseJson<InstanceJson>(run);
    expect(inst.variables).toEqual({ fixed: false, region: 'eu', note: 'old', seed: 7 });
    return inst.id;
  }

  it('replaces the variables: one not given is gone (a node output too), and the diff lists it as removed', async () => {
    const id = await suspended();
    const resumed = await runBin([
      'resume', String(id), '--action', 'retry', '--vars', '{"fixed": true, "region": "us"}', '--actor', 'ops', '--wait', '--json', '--db', db,
    ]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(parseJson<InstanceJson>(resumed)).toMatchObject({ status: 'COMPLETED', variables: { fixed: true, region: 'us', boom: 'us' } });
    const after = parseJson<InstanceJson>(await runBin(['show', String(id), '--history', '--json', '--db', db]));
    expect(after.variables).toEqual({ fixed: true, region: 'us', boom: 'us' });
    expect(after.variables).not.toHaveProperty('note');
    expect(after.variables).not.toHaveProperty('seed');
    const event = after.history.find((h) => h.type === 'instance.resumed');
    expect(event?.actor).toBe('ops');
    expect(event?.data?.diff).toEqual({
      added: {},
      removed: ['note', 'seed'],
      changed: { fixed: { from: false, to: true }, region: { from: 'eu', to: 'us' } },
    });
  });

  it('--vars-file and --vars together make the one replacing object (--vars keys win); no --vars keeps the variables', async () => {
    const id = await suspended();
    const file = path.join(tmp.dir, 'vars.json');
    fs.writeFileSync(file, JSON.stringify({ fixed: true, region: 'file', seed: 7 }));
    const resumed = await runBin([
      'resume', String(id), '--action', 'retry', '--vars-file', file, '--vars', '{"region": "flag"}', '--wait', '--json', '--db', db,
    ]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(parseJson<InstanceJson>(resumed).variables).toEqual({ fixed: true, region: 'flag', seed: 7, boom: 'flag' });

    const other = await suspended();
    const skipped = await runBin(['resume', String(other), '--action', 'skip', '--result', '"by hand"', '--wait', '--json', '--db', db]);
    expect(skipped.code, skipped.stderr).toBe(0);
    expect(parseJson<InstanceJson>(skipped).variables).toEqual({ fixed: false, region: 'eu', note: 'old', seed: 7, boom: 'by hand' });
  });

  it('--help says the variables replace the globals', async () => {
    const help = await runBin(['resume', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout.replace(/\s+/g, ' ')).toContain("variables that REPLACE the instance's variables first");
  });
});
