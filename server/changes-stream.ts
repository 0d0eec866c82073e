/**
 * The browser host's change feed stream: `GET /api/changes` as server-sent events
 * (engine/runtime/change-feed.ts has the feed and its delivery rule).
 *
 * - Each entry is one message: `id: <cursor>` (the history id), `data: <ChangeEntry as JSON>`.
 * - Where it starts: after the `Last-Event-ID` header (what EventSource sends when it
 *   reconnects), else `?after=`, else consumer `?consumer=`'s cursor, else the start (0).
 * - `?workflow=NAME` sends only that workflow's entries; `?limit=` is the page read at a time
 *   (1–10,000, default 500).
 * - `?consumer=NAME` acknowledges as it sends: once a page has been written to the socket, the
 *   consumer's cursor moves to the page's cursor (registering it when new), so retention keeps
 *   what it has not had. A client that dies between the write and the ack gets those entries
 *   again on reconnect, with the same ids: it drops an id at or below the last it holds.
 * - While nothing is new it reads again after each engine event of this process, and at least
 *   every `pollMs` (other processes' commits); `: ping` comments every 15 s keep proxies from
 *   closing an idle stream.
 * - Bad input (a cursor that is not a whole number, a bad name) answers the channel's typed error
 *   with HTTP 400 before the stream opens (any other error of the first read: 503); a read that fails later ends the stream with an
 *   `event: error` message holding the error (EventSource reconnects after `retry`, resuming from
 *   the last id it received). PostgreSQL's DATABASE_BUSY (the feed's lock waited too long) is
 *   read again instead.
 */
import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { Engine } from '../engine/api';
import { err, type ApiError, type Handlers, type Output, type Result } from '../engine/api/contract';
import { dispatch } from '../engine/api/handlers';

/** Entries read (and sent) per page, by default. */
export const CHANGES_PAGE = 500;

/** How often an idle stream reads the feed again at least, ms, by default. */
export const CHANGES_POLL_MS = 250;

/** What {@link serveChanges} takes. */
export interface ChangesStreamOptions {
  engine: Engine;
  handlers: Handlers;
  /** Least often an idle stream reads again, ms (default {@link CHANGES_POLL_MS}). */
  pollMs?: number;
  /** Called with an ender for each open stream (the host ends them all on close); returns its remover. */
  track(end: () => void): () => void;
}

/** A whole non-negative number given as text stays text unless it is one (so the schema names the field). */
function numberOr(text: string | undefined): number | string | undefined {
  if (text === undefined || text === '') return undefined;
  return /^\d{1,16}$/.test(text) ? Number(text) : text;
}

/**
 * Answers `GET /api/changes` on `c` (see the module doc): a `text/event-stream` response, or a
 * typed error (HTTP 400) when the query or the Last-Event-ID header is bad.
 */
export async function serveChanges(c: Context, o: ChangesStreamOptions): Promise<Response> {
  const lastEventId = c.req.header('last-event-id')?.trim();
  if (lastEventId !== undefined && lastEventId !== '' && !/^\d{1,16}$/.test(lastEventId)) {
    return c.json(err('INVALID_INPUT', `Last-Event-ID: "${lastEventId.slice(0, 40)}" is not a change feed cursor (a history id)`, { field: 'Last-Event-ID' }), 400);
  }
  const input: Record<string, unknown> = {
    after: lastEventId ? Number(lastEventId) : numberOr(c.req.query('after')),
    limit: numberOr(c.req.query('limit')) ?? CHANGES_PAGE,
    workflow: c.req.query('workflow') || undefined,
    consumer: c.req.query('consumer') || undefined,
  };
  for (const k of Object.keys(input)) if (input[k] === undefined) delete input[k];
  // The first page is read before the stream opens: bad input is refused as a plain answer.
  const first = (await dispatch(o.handlers, 'changes:read', input)) as Result<Output<'changes:read'>>;
  if (!first.ok) return c.json(first, first.error.code === 'INVALID_INPUT' || first.error.code === 'BAD_REQUEST' ? 400 : 503);
  const consumer = input.consumer as string | undefined;
  const workflow = input.workflow as string | undefined;
  const limit = input.limit as number;
  const pollMs = o.pollMs ?? CHANGES_POLL_MS;

  return streamSSE(c, async (stream) => {
    let open = true;
    let wake: () => void = () => undefined;
    const end = () => {
      open = false;
      wake();
    };
    const untrack = o.track(end);
    stream.onAbort(end);
    // Engine events of this process wake an idle stream at once; one during a read makes the next read come at once.
    let dirty = false;
    const unlisten = o.engine.on(() => {
      dirty = true;
      wake();
    });
    const ping = setInterval(() => void stream.write(': ping\n\n').catch(end), 15_000);
    let page: Output<'changes:read'> = first.value;
    let acked = -1;
    try {
      await stream.write('retry: 2000\n: connected\n\n');
      while (open) {
        for (const e of page.entries) {
          await stream.writeSSE({ id: String(e.cursor), data: JSON.stringify(e) });
        }
        // Acknowledged once written (the first page registers the consumer); idle reads ack nothing.
        if (consumer !== undefined && page.cursor > acked) {
          const ack = (await dispatch(o.handlers, 'changes:ack', { consumer, cursor: page.cursor })) as Result<Output<'changes:ack'>>;
          if (!ack.ok) throw ack.error;
          acked = ack.value.cursor;
        }
        if (page.entries.length < limit && open && !dirty) {
          // Caught up: wait for an engine event or the poll, whichever comes first.
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, pollMs);
            wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
          wake = () => undefined;
        }
        if (!open) break;
        dirty = false;
        const next = (await dispatch(o.handlers, 'changes:read', {
          after: page.cursor,
          limit,
          ...(workflow === undefined ? {} : { workflow }),
        })) as Result<Output<'changes:read'>>;
        if (next.ok) page = next.value;
        else if (next.error.code === 'DATABASE_BUSY') page = { entries: [], cursor: page.cursor, head: page.head };
        else throw next.error;
      }
    } catch (e) {
      if (open) {
        const error: ApiError = typeof (e as ApiError).code === 'string' ? (e as ApiError) : { code: 'INTERNAL', message: (e as Error).message };
        await stream.writeSSE({ event: 'error', data: JSON.stringify(error) }).catch(() => undefined);
      }
    } finally {
      clearInterval(ping);
      unlisten();
      untrack();
      await stream.close().catch(() => undefined);
    }
  });
}
