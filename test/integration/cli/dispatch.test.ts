/**
 * The CLI is a host of the contract: a command answers what the API's `dispatch` answers for the
 * same call, error text included. The API's answer is computed in this process on the same file;
 * the CLI runs as the real bin. (A name or node id above the contract's limits is BAD_REQUEST from
 * dispatch, where the engine alone would have said NOT_FOUND or INVALID_STATE.)
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Engine } from '../../../engine/api';
import { LIMITS, type Result } from '../../../engine/api/contract';
import { createHandlers, dispatch } from '../../../engine/api/handlers';
import { runBin } from '../../helpers/cli';
import { tempDir } from '../../helpers/temp-engine';

describe('runnel goes through dispatch', () => {
  let tmp: ReturnType<typeof tempDir>;
  let db: string;
  beforeEach(async () => {
    tmp = tempDir();
    db = path.join(tmp.dir, 'runnel.db');
    const wf = path.join(tmp.dir, 'ask.workflow.json');
    fs.writeFileSync(wf, JSON.stringify({ name: 'ask', nodes: [{ id: 'ask', type: 'approval' }] }));
    expect((await runBin(['run', wf, '--db', db])).code).toBe(3);
  });
  afterEach(() => tmp.cleanup());

  /** What the API answers on `channel` for `payload`, as the CLI prints an error. */
  async function apiError(channel: string, payload: unknown): Promise<string> {
    const engine = Engine.open(db);
    try {
      const r: Result<unknown> = await dispatch(createHandlers(engine), channel, payload);
      if (r.ok) throw new Error(`${channel} succeeded`);
      return `error: ${r.error.code}: ${r.error.message}\n`;
    } finally {
      await engine.close();
    }
  }

  it.each([
    ['show', ['show', '42'], 'instance:get', { id: 42 }],
    ['retry', ['retry', '42'], 'instance:retry', { id: 42 }],
    ['export', ['export', 'nope'], 'workflow:export', { name: 'nope' }],
    ['approve of a node that does not wait', ['approve', '1', 'other', '--approve'], 'instance:approve', { id: 1, nodeId: 'other', approved: true }],
    ['start of a workflow name above the limit', ['start', 'w'.repeat(LIMITS.id + 1)], 'instance:start', { workflow: 'w'.repeat(LIMITS.id + 1) }],
    ['approve of a node id above the limit', ['approve', '1', 'n'.repeat(LIMITS.nodeId + 1), '--approve'], 'instance:approve', { id: 1, nodeId: 'n'.repeat(LIMITS.nodeId + 1), approved: true }],
  ])('%s: the same typed error text as the API (exit 2)', async (_what, args, channel, payload) => {
    const expected = await apiError(channel, payload);
    const r = await runBin([...args, '--db', db]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toBe(expected);
  });

  it('a BAD_REQUEST names the field, as the API does', async () => {
    const r = await runBin(['start', 'w'.repeat(LIMITS.id + 1), '--db', db]);
    expect(r.stderr).toMatch(/^error: BAD_REQUEST: instance:start: workflow: /);
  });
});
