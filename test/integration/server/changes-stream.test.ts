/**
 * The browser host's change feed stream (`GET /api/changes`, server/changes-stream.ts) over a real
 * HTTP server on 127.0.0.1 and a real database of the run's backend (this file is in the
 * integration-pg project too): every entry once, in cursor order, each message's `id` its
 * cursor; a reconnect with `Last-Event-ID` (or `?after=`) resumes after it, skipping and
 * repeating nothing; entries committed while it is open arrive; `?workflow=` filters;
 * `?consumer=` acknowledges what it sent; the token is required.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ChangeEntrySchema, type ChangeEntry, type Output } from '../../../engine/api/contract';
import { eventually, startTestHost, type TestHost } from '../../helpers/browser-host';
import { runToSettled } from '../../helpers/temp-engine';

/** One server-sent message as read off the wire. */
interface Message {
  id: string | undefined;
  event: string | undefined;
  data: string;
}

/** An open event stream: messages as they arrive, read until a condition holds. */
interface Stream {
  /** Every message received so far (comments left out). */
  messages: Message[];
  /** Reads until `done(messages)` holds (or fails after `timeoutMs`). */
  until(done: (messages: Message[]) => boolean, timeoutMs?: number): Promise<Message[]>;
  /** Drops the connection (as a client that goes away does). */
  close(): Promise<void>;
}

async function open(res: Response): Promise<Stream> {
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
  if (!res.body) throw new Error('no body');
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  const messages: Message[] = [];
  let buffer = '';
  return {
    messages,
    async until(done, timeoutMs = 20_000) {
      const t0 = Date.now();
      while (!done(messages)) {
        if (Date.now() - t0 > timeoutMs) throw new Error(`timed out with ${messages.length} messages`);
        const { done: ended, value } = await reader.read();
        if (ended) throw new Error(`stream ended after ${messages.length} messages`);
        buffer += decoder.decode(value, { stream: true });
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const lines = buffer.slice(0, cut).split('\n');
          buffer = buffer.slice(cut + 2);
          const field = (name: string) => lines.filter((l) => l.startsWith(`${name}:`)).map((l) => l.slice(name.length + 1).trimStart());
          const data = field('data');
          if (data.length > 0) messages.push({ id: field('id')[0], event: field('event')[0], data: data.join('\n') });
        }
      }
      return messages;
    },
    close: async () => reader.cancel().catch(() => undefined),
  };
}

const entriesOf = (messages: Message[]): ChangeEntry[] => messages.map((m) => ChangeEntrySchema.parse(JSON.parse(m.data)));

const twoSteps = (name: string) => ({
  name,
  nodes: [
    { id: 'a', type: 'pass', config: {} },
    { id: 'b', type: 'pass', config: {} },
  ],
  edges: [{ from: 'a', to: 'b' }],
});

let h: TestHost;
/** GET /api/changes with the token in the query (as EventSource sends it) and `query`. */
const get = (query: string, headers: Record<string, string> = {}) =>
  fetch(`${h.base}/api/changes?token=${encodeURIComponent(h.server.token)}${query}`, { headers });
/** Every history id of instances `ids`, ascending. */
async function historyIds(ids: number[]): Promise<number[]> {
  const all: number[] = [];
  for (const id of ids) all.push(...(await h.engine.history(id, 0, 10_000)).map((e) => e.id));
  return all.sort((x, y) => x - y);
}
/** Starts an instance of `workflow` and runs it to its end; answers its id. */
async function run(workflow: string): Promise<number> {
  const id = await h.engine.start(workflow);
  await runToSettled(h.engine, id);
  return id;
}

beforeEach(async () => {
  h = await startTestHost({ startWorker: false, changesPollMs: 50 });
  await h.engine.deploy(twoSteps('orders'));
  await h.engine.deploy(twoSteps('refunds'));
});
afterEach(async () => h.close());

describe('GET /api/changes', () => {
  it('streams every entry from the start once, in cursor order with id = cursor, then the entries committed while it is open', async () => {
    // given: three ended instances of two workflows
    const ids = [await run('orders'), await run('refunds'), await run('orders')];
    const want = await historyIds(ids);

    // when: the stream is opened with no cursor
    const s = await open(await get(''));
    const got = await s.until((m) => m.length >= want.length);

    // then: each entry once, ascending, each message's id its cursor, the data as changes:read answers it
    expect(got.map((m) => Number(m.id))).toEqual(want);
    const entries = entriesOf(got);
    expect(entries.map((e) => e.cursor)).toEqual(want);
    expect(got.every((m) => m.event === undefined)).toBe(true);
    const page = await h.value<Output<'changes:read'>>('changes:read', {});
    expect(entries).toEqual(page.entries);

    // when: another instance runs while the stream is open (and idle)
    const late = await run('refunds');
    const more = await historyIds([late]);

    // then: its entries follow, nothing else
    await s.until((m) => m.length >= want.length + more.length);
    expect(s.messages.slice(want.length).map((m) => Number(m.id))).toEqual(more);
    await s.close();

    // and: ?workflow= sends that workflow's entries only
    const f = await open(await get('&workflow=refunds'));
    const refunds = await historyIds([ids[1] as number, late]);
    expect((await f.until((m) => m.length >= refunds.length)).map((m) => Number(m.id))).toEqual(refunds);
    expect(entriesOf(f.messages).every((e) => e.workflow === 'refunds')).toBe(true);
    await f.close();
  });

  it('resumes after Last-Event-ID across a reconnect, skipping and repeating nothing; ?after= and a consumer do the same', async () => {
    const ids = [await run('orders'), await run('orders')];
    const all = await historyIds(ids);
    expect(all.length).toBeGreaterThanOrEqual(6);

    // given: a client that received three entries, then lost its connection
    const first = await open(await get('&limit=2'));
    const head = (await first.until((m) => m.length >= 3)).slice(0, 3);
    await first.close();
    const lastId = head[2]?.id as string;

    // when: it reconnects with the last id it received (what EventSource does), and more commits meanwhile
    const later = await run('refunds');
    const want = [...all, ...(await historyIds([later]))];
    const second = await open(await get('', { 'Last-Event-ID': lastId }));
    const rest = await second.until((m) => m.length >= want.length - 3);
    await second.close();

    // then: together they are every entry, once each, in order
    expect([...head, ...rest].map((m) => Number(m.id))).toEqual(want);
    // and: ?after= resumes the same way (the header wins over it)
    const after = await open(await get(`&after=${lastId}`));
    expect((await after.until((m) => m.length >= want.length - 3)).map((m) => Number(m.id))).toEqual(want.slice(3));
    await after.close();
    const both = await open(await get(`&after=0`, { 'Last-Event-ID': String(want[want.length - 2]) }));
    expect((await both.until((m) => m.length >= 1)).map((m) => Number(m.id))).toEqual(want.slice(-1));
    await both.close();

    // when: a named consumer reads the stream, drops, and comes back without any cursor
    const c1 = await open(await get('&consumer=exporter&limit=4'));
    await c1.until((m) => m.length >= 4);
    // acknowledged as sent: the consumer's cursor is at least the first page's
    const seen = await h.value<Output<'changes:consumers'>>('changes:consumers');
    expect(seen.consumers.find((c) => c.name === 'exporter')?.cursor).toBeGreaterThanOrEqual(want[3] as number);
    const c1Ids = (await c1.until((m) => m.length >= want.length)).map((m) => Number(m.id));
    await c1.close();
    expect(c1Ids).toEqual(want);
    // the last page's ack lands just after its last message
    const cursor = await eventually(async () => {
      const c = (await h.value<Output<'changes:consumers'>>('changes:consumers')).consumers.find((x) => x.name === 'exporter');
      return c !== undefined && c.cursor === want[want.length - 1] ? c.cursor : undefined;
    }, 5000, "the exporter's cursor at the head");
    expect(cursor).toBe(want[want.length - 1]);
    // then: it resumes after its cursor: only what committed since
    const newer = await run('orders');
    const c2 = await open(await get('&consumer=exporter'));
    const fresh = await historyIds([newer]);
    expect((await c2.until((m) => m.length >= fresh.length)).map((m) => Number(m.id))).toEqual(fresh);
    await c2.close();
  });

  it('requires the token, and refuses a bad cursor with a typed error naming it', async () => {
    const none = await fetch(`${h.base}/api/changes`);
    expect(none.status).toBe(401);
    expect(await none.json()).toMatchObject({ ok: false, error: { code: 'UNAUTHORIZED', message: 'the API token is missing' } });
    const wrong = await fetch(`${h.base}/api/changes?token=not-the-token`);
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toMatchObject({ ok: false, error: { code: 'UNAUTHORIZED', message: 'the API token is wrong' } });
    // the header works as on every /api call
    await run('orders');
    const byHeader = await open(await fetch(`${h.base}/api/changes`, { headers: { authorization: `Bearer ${h.server.token}` } }));
    expect((await byHeader.until((m) => m.length >= 1))[0]?.id).toBeDefined();
    await byHeader.close();

    const badHeader = await get('', { 'Last-Event-ID': 'yesterday' });
    expect(badHeader.status).toBe(400);
    expect(await badHeader.json()).toMatchObject({ ok: false, error: { code: 'INVALID_INPUT', details: { field: 'Last-Event-ID' } } });
    const badAfter = await get('&after=-3');
    expect(badAfter.status).toBe(400);
    const body = (await badAfter.json()) as { ok: false; error: { message: string } };
    expect(body).toMatchObject({ ok: false });
    expect(body.error.message).toContain('after');
  });
});
