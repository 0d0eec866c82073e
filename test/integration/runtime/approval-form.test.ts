// An approval's `form` (a JSON Schema) is checked by the engine too, whoever sends the decision:
// data it refuses is refused with each field named, and the approval still waits; data it takes
// goes on. As in the UI, an approval without data is checked as an empty form (a required field
// refuses it), and a rejection without data goes on.
import { afterEach, describe, expect, it } from 'vitest';
import { rejectionOf } from '../../helpers/engine-errors';
import { tempEngine } from '../../helpers/temp-engine';

let t: ReturnType<typeof tempEngine> | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const FORM = {
  type: 'object',
  required: ['costCenter'],
  properties: { costCenter: { type: 'string', pattern: '^CC-[0-9]+$' }, amount: { type: 'number', minimum: 1 } },
};

describe('approval form', () => {
  it('refuses data the form refuses, naming the fields; takes valid data and no data', async () => {
    // given: two instances waiting at an approval with a form
    t = tempEngine();
    const { engine } = t;
    await engine.deploy({ name: 'ask', nodes: [{ id: 'ask', type: 'approval', config: { form: FORM }, output: 'decision' }] });
    const a = await engine.start('ask');
    const b = await engine.start('ask');
    await engine.runUntil(async () => (await engine.isSettled(a)) && (await engine.isSettled(b)), 10_000);
    // when: data the form refuses
    const err = await rejectionOf(engine.approve(a, 'ask', { approved: true, data: { costCenter: '7', amount: 0 } }));
    // then: INVALID_INPUT naming each field, and the approval still waits
    expect(err.code).toBe('INVALID_INPUT');
    expect(err.message).toMatch(/form of node "ask"/);
    expect(err.details).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'costCenter' }), expect.objectContaining({ field: 'amount' })]));
    expect((await engine.getInstance(a)).status).toBe('WAITING');
    // when: an approval with no data at all (the CLI's approve without --data, the API without `data`)
    const none = await rejectionOf(engine.approve(a, 'ask', { approved: true }));
    // then: refused too, naming the required field, and the approval still waits
    expect(none.code).toBe('INVALID_INPUT');
    expect(none.message).toBe('data: none was given, and the form of node "ask" needs it: costCenter is required');
    expect(none.details).toEqual([expect.objectContaining({ field: 'costCenter' })]);
    expect((await engine.getInstance(a)).status).toBe('WAITING');
    // when: valid data, and a rejection without data
    await engine.approve(a, 'ask', { approved: true, data: { costCenter: 'CC-7', amount: 3 } });
    await engine.approve(b, 'ask', { approved: false });
    await engine.runUntil(async () => (await engine.isSettled(a)) && (await engine.isSettled(b)), 10_000);
    // then: both go on
    expect((await engine.getInstance(a)).variables).toMatchObject({ decision: { approved: true, data: { costCenter: 'CC-7', amount: 3 } } });
    expect((await engine.getInstance(b)).status).toBe('COMPLETED');
  });

  it('takes an approval without data when the form requires nothing', async () => {
    t = tempEngine();
    const { engine } = t;
    await engine.deploy({ name: 'ask', nodes: [{ id: 'ask', type: 'approval', config: { form: { type: 'object', properties: { note: { type: 'string' } } } }, output: 'decision' }] });
    const a = await engine.start('ask');
    await engine.runUntil(() => engine.isSettled(a), 10_000);
    await engine.approve(a, 'ask', { approved: true });
    await engine.runUntil(() => engine.isSettled(a), 10_000);
    expect((await engine.getInstance(a)).status).toBe('COMPLETED');
    expect((await engine.getInstance(a)).variables).toMatchObject({ decision: { approved: true } });
  });
});
