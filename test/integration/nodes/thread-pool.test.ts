/**
 * The thread pool on real worker threads (engine/nodes/thread-pool.ts): what crosses to a
 * thread, the FIFO queue, aborts while queued and while running, and threads that die.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EngineError } from '../../../engine/errors';
import { ThreadPool, type ThreadFailure } from '../../../engine/nodes/thread-pool';
import type { NodeResult } from '../../../engine/nodes/types';
import { makeContext, type TestNodeContext } from '../../helpers/node-context';
import { tempDir } from '../../helpers/temp-engine';
import { THREAD_NODE, type ThreadNodeConfig } from '../../helpers/thread-node';
import { rejectionOf } from '../../helpers/engine-errors';

const MODULE = (THREAD_NODE.module as URL).href;
const FAILURE: ThreadFailure = { code: 'HANDLER_ERROR', what: 'node type "test.thread"' };

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function pool(options: ConstructorParameters<typeof ThreadPool>[0] = {}): ThreadPool {
  const p = new ThreadPool(options);
  cleanups.push(() => p.close());
  return p;
}

function ctx(config: ThreadNodeConfig, key = 'k'): TestNodeContext<ThreadNodeConfig> {
  return makeContext<ThreadNodeConfig>({ config, idempotencyKey: key });
}

/** The rejection of `promise` (fails the test when it resolves). */

function markFile(): string {
  const t = tempDir('runnel-pool-');
  cleanups.push(t.cleanup);
  return path.join(t.dir, 'marks.txt');
}

function marks(file: string): string[] {
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter((l) => l !== '') : [];
}

describe('thread pool', () => {
  it('sizes itself to the machine by default and refuses a size below 1', () => {
    expect(pool().size).toBeGreaterThanOrEqual(1);
    expect(() => new ThreadPool({ size: 0 })).toThrow(/size must be a whole number ≥ 1/);
  });

  it('runs the module in a thread on a copy of the context: data, ids, clock and logs cross; the signal there never aborts', async () => {
    // given a context with data, a clock and a logging spin of 0 ms first
    const p = pool({ size: 1 });
    const spin = ctx({ action: 'spin', ms: 0 });
    await p.run(MODULE, spin, FAILURE);
    expect(spin.logs).toEqual([{ message: 'spinning' }]);
    const c = makeContext<ThreadNodeConfig>({
      config: { action: 'echo' },
      instanceId: 7,
      nodeId: '节点-🚀',
      attempt: 2,
      input: { a: [1, 'två'] },
      variables: { v: true },
      steps: { prev: { n: 1 } },
    });
    c.setNow(Date.UTC(2030, 0, 1));
    // when it runs in the pool
    const result = await p.run(MODULE, c, FAILURE);
    // then the thread saw the same values (as copies)
    expect(result).toEqual({
      output: {
        input: { a: [1, 'två'] },
        variables: { v: true },
        steps: { prev: { n: 1 } },
        config: { action: 'echo' },
        instanceId: 7,
        nodeId: '节点-🚀',
        attempt: 2,
        now: Date.UTC(2030, 0, 1),
        aborted: false,
      },
    });
    expect(p.threads).toBe(1);
  });

  it('queues attempts FIFO while every thread is busy; one aborted while queued fails at once and never runs', async () => {
    // given one thread busy for 600 ms and three marking attempts queued behind it
    const p = pool({ size: 1 });
    const file = markFile();
    const busy = p.run(MODULE, ctx({ action: 'spin', ms: 600 }), FAILURE);
    const b = ctx({ action: 'mark', file }, 'b');
    const c = ctx({ action: 'mark', file }, 'c');
    const d = ctx({ action: 'mark', file }, 'd');
    const runs = [b, c, d].map((x) => p.run(MODULE, x, FAILURE));
    expect(p.queued).toBe(3);
    // when the middle one is aborted while queued
    const started = performance.now();
    c.controller.abort(new EngineError('TIMEOUT', 'attempt timed out after 50 ms'));
    const aborted = await rejectionOf(runs[1] as Promise<NodeResult>);
    const abortedAfter = performance.now() - started;
    // then it fails at once with the signal's reason, the others run in order, and it never ran
    expect(aborted.code).toBe('TIMEOUT');
    expect(aborted.message).toBe('attempt timed out after 50 ms');
    expect(abortedAfter).toBeLessThan(100);
    expect(p.queued).toBe(2);
    await busy;
    await runs[0];
    await runs[2];
    expect(marks(file)).toEqual(['b', 'd']);
  });

  it('an abort while running terminates the thread at once, rejects with the reason, and a fresh thread runs the next attempt', async () => {
    // given a thread spinning for 20 s
    const p = pool({ size: 1 });
    const spin = ctx({ action: 'spin', ms: 20_000 });
    const running = p.run(MODULE, spin, FAILURE);
    await waitUntil(() => spin.logs.length === 1);
    // when its attempt is aborted (as the worker does at timeoutMs)
    const started = performance.now();
    spin.controller.abort(new EngineError('TIMEOUT', 'attempt timed out after 300 ms'));
    const error = await rejectionOf(running);
    // then it ends now with that reason, and the next attempt runs on a fresh thread
    expect(performance.now() - started).toBeLessThan(200);
    expect(error.code).toBe('TIMEOUT');
    expect(p.busy).toBe(0);
    const next = await p.run(MODULE, ctx({ action: 'echo' }), FAILURE);
    expect(next).toMatchObject({ output: { aborted: false } });
    expect(p.threads).toBe(1);
  });

  it('a thread that exits fails its attempt with the failure code (retryable), and the pool goes on with a fresh one', async () => {
    const p = pool({ size: 1 });
    const error = await rejectionOf(p.run(MODULE, ctx({ action: 'exit', code: 7 }), FAILURE));
    expect(error.code).toBe('HANDLER_ERROR');
    expect(error.message).toBe('node type "test.thread": its thread died (it exited with code 7); a fresh thread takes its place');
    expect(error.retryable).toBe(true);
    expect(await p.run(MODULE, ctx({ action: 'echo' }), FAILURE)).toMatchObject({ output: { aborted: false } });
  });

  it('a thread over its heap limit fails its attempt (not retryable), not the process', async () => {
    // given a pool whose threads have a 32 MB heap
    const p = pool({ size: 1, resourceLimits: { maxOldGenerationSizeMb: 32 } });
    // when a module keeps allocating until the limit
    const error = await rejectionOf(p.run(MODULE, ctx({ action: 'grow' }), { code: 'SCRIPT_ERROR', what: 'script' }));
    // then only that attempt failed, with the limit named, and the pool goes on
    expect(error.code).toBe('SCRIPT_ERROR');
    expect(error.message).toMatch(/^script ran out of memory in its thread \(over the thread's memory limit, a 32 MB heap/);
    expect(error.retryable).toBe(false);
    expect(await p.run(MODULE, ctx({ action: 'echo' }), FAILURE)).toMatchObject({ output: { aborted: false } });
  });

  it('an EngineError thrown in the thread keeps its code, retryable and details', async () => {
    const p = pool({ size: 1 });
    const error = await rejectionOf(p.run(MODULE, ctx({ action: 'throw', code: 'SCRIPT_ERROR' }), FAILURE));
    expect(error.code).toBe('SCRIPT_ERROR');
    expect(error.message).toBe('thrown in the thread');
    expect(error.retryable).toBe(false);
    expect(error.details).toEqual({ where: 'thread' });
  });

  it('a context that cannot be cloned fails with INVALID_INPUT and leaves the thread usable', async () => {
    const p = pool({ size: 1 });
    const bad = makeContext<ThreadNodeConfig>({ config: { action: 'echo' }, input: { f: () => 1 } });
    const error = await rejectionOf(p.run(MODULE, bad, FAILURE));
    expect(error.code).toBe('INVALID_INPUT');
    expect(error.message).toMatch(/^node type "test.thread" could not be sent to its thread: its config, input, variables or steps are not plain data/);
    expect(await p.run(MODULE, ctx({ action: 'echo' }), FAILURE)).toMatchObject({ output: { aborted: false } });
  });

  it('a module that exports no execute fails the attempt and names the module', async () => {
    const p = pool({ size: 1 });
    const t = tempDir('runnel-pool-');
    cleanups.push(t.cleanup);
    const file = path.join(t.dir, 'no-execute.mjs');
    fs.writeFileSync(file, 'export const run = () => 1;\n');
    const href = new URL(`file://${file}`).href;
    const outcome = await p.run(href, ctx({ action: 'echo' }), FAILURE).catch((e: unknown) => e);
    expect(outcome).toBeInstanceOf(Error);
    expect((outcome as Error).message).toBe(`thread module ${href} does not export an execute function`);
  });

  it('close fails queued and running attempts with CANCELLED', async () => {
    const p = new ThreadPool({ size: 1 });
    const running = rejectionOf(p.run(MODULE, ctx({ action: 'spin', ms: 20_000 }), FAILURE));
    const queued = rejectionOf(p.run(MODULE, ctx({ action: 'echo' }), FAILURE));
    await p.close();
    expect((await running).code).toBe('CANCELLED');
    expect((await queued).code).toBe('CANCELLED');
    expect((await rejectionOf(p.run(MODULE, ctx({ action: 'echo' }), FAILURE))).code).toBe('CANCELLED');
  });
});

async function waitUntil(check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > timeoutMs) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}
