/**
 * Deploying and starting workflows, on real database files: an inputSchema Ajv cannot compile is
 * refused at deploy, and a stored one fails start as a user error (never INTERNAL); saving with
 * only the designer positions moved updates the latest version's ui in place.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { EngineError } from '../../../engine/errors';
import { runToSettled, tempSqliteEngine } from '../../helpers/temp-engine';

async function rejected(promise: Promise<unknown>): Promise<EngineError> {
  const err: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(EngineError);
  return err as EngineError;
}

describe('an inputSchema Ajv cannot compile', () => {
  let ctx: ReturnType<typeof tempSqliteEngine>;
  afterEach(async () => ctx.close());

  it('is refused at deploy with INVALID_INPUT_SCHEMA, and a stored one fails start with INVALID_WORKFLOW, never INTERNAL', async () => {
    ctx = tempSqliteEngine();
    const { engine } = ctx;
    // given: deploy refuses the schema outright
    const refused = await rejected(engine.deploy({ name: 'buy', inputSchema: { type: 'objekt' }, nodes: [{ id: 'a', type: 'pass' }] }));
    expect(refused.code).toBe('INVALID_WORKFLOW');
    expect(refused.details).toEqual([expect.objectContaining({ code: 'INVALID_INPUT_SCHEMA', path: ['inputSchema'] })]);
    // and: a version stored before deploy compiled schemas
    await engine.deploy({ name: 'old', inputSchema: { type: 'object' }, nodes: [{ id: 'a', type: 'pass' }] });
    const row = (await engine.workflowRow('old'));
    const dsl = JSON.parse(row.dslJson) as Record<string, unknown>;
    dsl['inputSchema'] = { type: 'objekt' };
    engine.db.raw.prepare('UPDATE workflow SET dsl_json = ? WHERE id = ?').run(JSON.stringify(dsl), row.id);
    // when it is started, twice (the failed compile is cached, not retried into an Ajv stack trace)
    for (let i = 0; i < 2; i++) {
      const err = await rejected(engine.start('old', { variables: {} }));
      // then the start is refused as a user error naming the schema, and nothing was written
      expect(err.code).toBe('INVALID_WORKFLOW');
      expect(err.kind).toBe('user');
      expect(err.message).toMatch(/inputSchema is not a valid JSON Schema/);
    }
    expect((await engine.listInstances())).toEqual([]);
  });
});

describe('deploying moved nodes (only ui changed)', () => {
  let ctx: ReturnType<typeof tempSqliteEngine>;
  afterEach(async () => ctx.close());

  it('updates the latest version’s ui in place (uiUpdated), exports the new positions, and leaves instances alone', async () => {
    ctx = tempSqliteEngine();
    const { engine } = ctx;
    const definition = (x: number) => ({
      name: 'moved',
      nodes: [
        { id: 'a', type: 'pass', config: { result: 1 }, output: 'one' },
        { id: 'b', type: 'pass' },
      ],
      edges: [{ from: 'a', to: 'b' }],
      ui: { positions: { a: { x, y: 0 }, b: { x, y: 120 } } },
    });
    const first = await engine.deploy(definition(0));
    const id = await engine.start('moved');
    const before = await runToSettled(engine, id);

    // when the same definition is saved with the nodes moved
    const moved = await engine.deploy(definition(300));

    // then no version is made, but the positions are kept and say so
    expect(moved).toEqual({ workflowId: first.workflowId, name: 'moved', version: 1, created: false, uiUpdated: true });
    expect((await engine.listVersions('moved'))).toHaveLength(1);
    expect((await engine.exportWorkflow('moved')).ui).toEqual({ positions: { a: { x: 300, y: 0 }, b: { x: 300, y: 120 } } });
    // and saving the same again, or without ui, changes nothing
    expect(await engine.deploy(definition(300))).toEqual({ workflowId: first.workflowId, name: 'moved', version: 1, created: false });
    const { ui: _ui, ...withoutUi } = definition(999);
    expect((await engine.deploy(withoutUi)).uiUpdated).toBeUndefined();
    expect((await engine.exportWorkflow('moved')).ui).toEqual({ positions: { a: { x: 300, y: 0 }, b: { x: 300, y: 120 } } });
    // and the instance is as it was: same version, status, variables and history
    const after = (await engine.getInstance(id));
    expect(after).toEqual(before);
    // and a new instance still runs on version 1
    const next = await runToSettled(engine, await engine.start('moved'));
    expect(next).toMatchObject({ status: 'COMPLETED', workflowVersion: 1, workflowId: first.workflowId });
  });
});
