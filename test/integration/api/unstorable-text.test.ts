/**
 * Text kept in a column of its own must be stored alike on both backends: PostgreSQL's text holds
 * no U+0000, and a lone surrogate is stored as U+FFFD by one backend and as bytes by the other.
 * A newcomer's trial sent a business key with a NUL through the API: SQLite kept it, PostgreSQL
 * answered INTERNAL with the driver's stack. Now every way such text comes in names its field,
 * on both backends (this file runs in the PostgreSQL conformance project too): a business key
 * (start, signal, the list's filter), the list's search text, a concurrency key from an
 * expression. And an event node whose evaluated name or key a signal refuses fails at once
 * instead of waiting for an event nobody could send (the same trial's instance waited for good).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createHandlers, dispatch } from '../../../engine/api/handlers';
import { EngineError } from '../../../engine/errors';
import { runToSettled, tempEngine } from '../../helpers/temp-engine';

let ctx: ReturnType<typeof tempEngine> | undefined;
afterEach(async () => {
  await ctx?.close();
  ctx = undefined;
});

const BAD_KEYS = ['a\u0000b', 'a\ud800b', 'a\udc00'];

describe('text a backend cannot store as given', () => {
  it('a business key with a NUL or a lone surrogate is refused naming businessKey: start, signal and the list filter; nothing is started', async () => {
    ctx = tempEngine();
    const { engine } = ctx;
    const handlers = createHandlers(engine);
    await engine.deploy({ name: 'plain', nodes: [{ id: 'p', type: 'pass' }] });
    for (const key of BAD_KEYS) {
      const start = await dispatch(handlers, 'instance:start', { workflow: 'plain', businessKey: key });
      expect(start).toMatchObject({ ok: false, error: { code: 'BAD_REQUEST', message: expect.stringMatching(/businessKey: must (not hold U\+0000|be well-formed Unicode)/) } });
      const signal = await dispatch(handlers, 'instance:signal', { businessKey: key, name: 'go' });
      expect(signal).toMatchObject({ ok: false, error: { code: 'BAD_REQUEST', message: expect.stringMatching(/businessKey/) } });
      const list = await dispatch(handlers, 'instance:list', { businessKey: key });
      expect(list).toMatchObject({ ok: false, error: { code: 'BAD_REQUEST', message: expect.stringMatching(/businessKey/) } });
      const search = await dispatch(handlers, 'instance:list', { text: key });
      expect(search).toMatchObject({ ok: false, error: { code: 'BAD_REQUEST', message: expect.stringMatching(/text/) } });
      // the engine's own API refuses it too (the CLI and plug-ins call it)
      const err = await engine.start('plain', { businessKey: key }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(EngineError);
      expect((err as EngineError).code).toBe('INVALID_INPUT');
      expect((err as EngineError).message).toMatch(/^businessKey: /);
    }
    expect(await engine.countByStatus({})).toEqual({});
    // other control characters stay allowed in a business key (they are printed escaped)
    const id = await engine.start('plain', { businessKey: 'tab\there' });
    expect((await runToSettled(engine, id)).status).toBe('COMPLETED');
  });

  it('a concurrency key whose expression yields a NUL is refused naming concurrency.key', async () => {
    ctx = tempEngine();
    const { engine } = ctx;
    await engine.deploy({ name: 'limited', concurrency: { limit: 1, key: 'k' }, nodes: [{ id: 'p', type: 'pass' }] });
    const err = await engine.start('limited', { variables: { k: 'a\u0000b' } }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(EngineError);
    expect((err as EngineError).code).toBe('INVALID_VARIABLES');
    expect((err as EngineError).message).toMatch(/concurrency\.key .* must not hold U\+0000/);
    expect(await engine.countByStatus({})).toEqual({});
  });

  it('an event node whose evaluated name or key a signal refuses fails at once, naming the field', async () => {
    ctx = tempEngine();
    const { engine } = ctx;
    await engine.deploy({ name: 'keyed', nodes: [{ id: 'e', type: 'event', config: { name: '{{ n }}', key: '{{ k }}' } }] });
    const cases: [Record<string, string>, RegExp][] = [
      [{ n: 'ping', k: 'a\u202eb' }, /config\.key .* holds control characters/s],
      [{ n: 'ping', k: 'line\u2028two' }, /config\.key .* holds control characters/s],
      [{ n: 'pi\tng', k: 'k1' }, /config\.name .* holds control characters/s],
    ];
    for (const [variables, message] of cases) {
      const id = await engine.start('keyed', { variables });
      const done = await runToSettled(engine, id);
      expect(done.status).toBe('FAILED');
      const error = done.error as { code?: string; message?: string } | null;
      expect(error?.code).toBe('INVALID_INPUT');
      expect(error?.message).toMatch(message);
    }
    // a key a signal can carry still waits, and the signal reaches it
    const ok = await engine.start('keyed', { variables: { n: 'ping', k: 'device-7 🚀' } });
    expect((await runToSettled(engine, ok)).status).toBe('WAITING');
    await engine.signal({ id: ok }, { event: 'ping', data: { v: 1 }, key: 'device-7 🚀' });
    expect((await runToSettled(engine, ok)).status).toBe('COMPLETED');
  });
});
