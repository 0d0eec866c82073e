/**
 * `runnel --read-only` on a real database file: list, show and export work; every command that
 * would change the file exits 2 with DATABASE_READONLY, and the file is untouched.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseJson, runCli } from '../../helpers/cli';
import { tempDir } from '../../helpers/temp-engine';

const APPROVAL_YAML = `name: appr
inputSchema:
  type: object
  required: [amount]
  properties:
    amount: { type: number, minimum: 0 }
nodes:
  - id: total
    type: pass
    config: { result: "{{ amount }}" }
    output: total
`;

const sha = (file: string) => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');

describe('runnel on a read-only database', () => {
  let tmp: ReturnType<typeof tempDir>;
  let db: string;
  beforeEach(async () => {
    tmp = tempDir();
    db = path.join(tmp.dir, 'r.db');
    const appr = path.join(tmp.dir, 'appr.yaml');
    fs.writeFileSync(appr, APPROVAL_YAML);
    expect((await runCli('run', appr, '--db', db, '--vars', '{"amount":5}')).code).toBe(0);
  });
  afterEach(() => tmp.cleanup());

  it('list, show and export work; commands that change it exit 2 with DATABASE_READONLY; the file is untouched', async () => {
    const digest = sha(db);
    expect((await runCli('list', '--db', db, '--read-only')).stdout).toContain('appr v1');
    expect(parseJson(await runCli('show', '1', '--db', db, '--read-only', '--json'))).toMatchObject({ status: 'COMPLETED' });
    expect(parseJson(await runCli('export', 'appr', '--db', db, '--read-only'))).toMatchObject({ name: 'appr' });
    for (const args of [['start', 'appr', '--vars', '{"amount":1}'], ['cancel', '1'], ['worker', '--until-idle'], ['deploy', path.join(tmp.dir, 'appr.yaml')]]) {
      const r = await runCli(...args, '--db', db, '--read-only');
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(/^error: DATABASE_READONLY: .* is open read-only \(--read-only was given\)/);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
    expect(sha(db)).toBe(digest);
  });
});
