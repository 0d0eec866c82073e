/**
 * Time travel's record on SQLite derives the state a transaction ends with from its writes
 * (engine/store/state-effects.ts) instead of reading it again; the test suite runs with
 * RUNNEL_CHECK_STATE_RECORD=1, so every transaction of every test compares the derived state with
 * the stored one. Here: that check is armed and catches a change the writes did not make, and a
 * savepoint rolled back takes its effects with it. Real SQLite file.
 */
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openSqliteStorage, type SqliteStorage } from '../../../engine/db/sqlite-storage';
import { tempDir } from '../../helpers/temp-engine';

describe('time travel: the state derived from the writes', () => {
  let storage: SqliteStorage | undefined;
  let cleanup: (() => void) | undefined;
  afterEach(async () => {
    await storage?.close();
    storage = undefined;
    cleanup?.();
  });

  /** A storage on a fresh file with one workflow and a RUNNING instance of one RUNNING node `a`. */
  async function oneInstance(): Promise<{ s: SqliteStorage; id: number }> {
    const dir = tempDir();
    cleanup = dir.cleanup;
    const s = openSqliteStorage(path.join(dir.dir, 'runnel.db'));
    storage = s;
    const id = await s.write((q) => {
      const wf = q.workflows.insert({ name: 'w', version: 1, dslJson: '{"name":"w","nodes":[],"edges":[]}', hash: 'h', now: 1000, nodes: [] });
      const instanceId = q.instances.insert({ workflowId: wf, status: 'RUNNING', variablesJson: '{"x":1}', now: 1000, deadlineAt: null, businessKey: null });
      q.nodes.insert({ instanceId, nodeId: 'a', status: 'RUNNING', attemptLimit: 3, pendingIn: 0, now: 1000 });
      q.history.append({ instanceId, nodeId: null, type: 'instance.created', at: 1000 });
      return instanceId;
    });
    return { s, id };
  }

  it('is checked in tests: a change no write of the families made fails the transaction, and nothing of it is committed', async () => {
    expect(process.env.RUNNEL_CHECK_STATE_RECORD).toBe('1');
    const { s, id } = await oneInstance();
    // When a transaction completes `a` through the node family but also edits the row behind its back
    const write = s.write((q) => {
      q.nodes.complete({ instanceId: id, nodeId: 'a', output: { ok: true }, now: 2000, seq: 1 });
      s.db.raw.prepare(`UPDATE node_state SET attempt = 7 WHERE instance_id = ? AND node_id = 'a'`).run(id);
    });
    // Then the check names the instance and the field, and the transaction rolled back
    await expect(write).rejects.toThrow(/time travel's record: instance \d+ .*"a":\{"a":7\}/);
    expect(s.db.raw.prepare(`SELECT status, attempt FROM node_state WHERE instance_id = ?`).get(id)).toEqual({ status: 'RUNNING', attempt: 1 });
  });

  it('a savepoint rolled back takes its effects with it; the record holds what committed', async () => {
    const { s, id } = await oneInstance();
    // When one savepoint pauses the instance, parks the node and throws, and the transaction then completes the node
    await s.write((q) => {
      expect(() =>
        q.savepoint(() => {
          q.instances.pause({ id, now: 1500 });
          q.nodes.park({ instanceId: id, nodeId: 'a', status: 'WAITING', wait: { kind: 'timer', until: 9000 } });
          q.history.append({ instanceId: id, nodeId: 'a', type: 'node.waiting', at: 1500 });
          throw new Error('rolled back');
        }),
      ).toThrow('rolled back');
      q.nodes.complete({ instanceId: id, nodeId: 'a', output: 5, now: 2000, seq: 1 });
      q.history.append({ instanceId: id, nodeId: 'a', type: 'node.completed', at: 2000 });
    });
    // Then the patch of that transaction is keyed by the entry that committed and holds the completion only
    const rows = s.db.raw.prepare(`SELECT history_id AS h, patch_json AS p FROM history_state WHERE instance_id = ? ORDER BY history_id`).all(id) as { h: number; p: string }[];
    const entries = s.db.raw.prepare(`SELECT id, type FROM history WHERE instance_id = ? ORDER BY id`).all(id) as { id: number; type: string }[];
    expect(entries.map((e) => e.type)).toEqual(['instance.created', 'node.completed']);
    expect(rows.map((r) => r.h)).toEqual(entries.map((e) => e.id));
    expect(JSON.parse(rows[1]!.p)).toEqual({ n: { a: { s: 'C', o: [5], f: 1000, q: 1 } } });
  });
});
