/**
 * The expression time limit bounds an evaluation's AST steps, and a long evaluation no longer
 * holds the thread for all of it: jsonata awaits only microtasks, so before, a 1 s `$reduce` kept
 * timers, I/O and HTTP requests waiting the whole second. The limit counts the evaluation's own
 * turns, not the time it waits for one.
 */
import { describe, expect, it } from 'vitest';
import { EngineError } from '../../../engine/errors';
import { evaluateExpression } from '../../../engine/dsl/expressions';

/** CPU time this process has used, in ms. */
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/**
 * Runs `work` while a 5 ms timer ticks; returns its outcome and the longest time the timer waited
 * for a thread that was busy: each gap between two ticks (or the last tick and the end) counts
 * for no more than the CPU time the process used in it, so a gap where the machine's other
 * processes held the core does not count against the code under test.
 */
async function longestStall<T>(work: () => Promise<T>): Promise<{ outcome: T | EngineError; stallMs: number; ms: number }> {
  let last = performance.now();
  let lastCpu = cpuMs();
  let stallMs = 0;
  const gap = (): void => {
    const now = performance.now();
    const cpu = cpuMs();
    stallMs = Math.max(stallMs, Math.min(now - last, cpu - lastCpu));
    last = now;
    lastCpu = cpu;
  };
  const timer = setInterval(gap, 5);
  const t0 = performance.now();
  let outcome: T | EngineError;
  try {
    outcome = await work();
  } catch (err) {
    if (!(err instanceof EngineError)) throw err;
    outcome = err;
  } finally {
    clearInterval(timer);
  }
  gap();
  return { outcome, stallMs, ms: performance.now() - t0 };
}

const SUM = '$reduce([1..300000], function($a, $b) { $a + $b })';

describe('a long evaluation lets the thread breathe', () => {
  it('a $reduce over 300 000 items gives its value and never holds the thread for 100 ms', async () => {
    const r = await longestStall(() => evaluateExpression(SUM, { variables: {} }, { timeoutMs: 30_000 }));
    expect(r.outcome).toBe(45_000_150_000);
    expect(r.ms).toBeGreaterThan(100); // long enough that a stall would show
    expect(r.stallMs).toBeLessThan(100);
  });

  it('two at once: both finish, neither stalls the thread', async () => {
    const r = await longestStall(() =>
      Promise.all([SUM, SUM].map((src) => evaluateExpression(src, { variables: {} }, { timeoutMs: 30_000 }))),
    );
    expect(r.outcome).toEqual([45_000_150_000, 45_000_150_000]);
    expect(r.stallMs).toBeLessThan(100);
  });

  it('six at once, each step a long $match: they take turns, so one step stalls, not six', async () => {
    // Each $match finding the whole of 50 000 characters with its groups is one ~10 ms call that
    // nothing can interrupt; before turns, the six interleaved step by step and ran six of them
    // between two timer ticks.
    const s = `${'a'.repeat(49_999)}!`;
    const src = '$count([1..8][$exists($match($$.s, /(a+)+!$/))])';
    await evaluateExpression(src, { variables: { s } }); // compiled and warm: the stall is the subject
    const r = await longestStall(() =>
      Promise.all(Array.from({ length: 6 }, () => evaluateExpression(src, { variables: { s } }, { timeoutMs: 30_000 }))),
    );
    expect(r.outcome).toEqual([8, 8, 8, 8, 8, 8]);
    expect(r.stallMs).toBeLessThan(40);
  });

  it('the time limit still stops it, as EXPRESSION_ERROR', async () => {
    const r = await longestStall(() =>
      evaluateExpression('$reduce([1..1000000], function($a, $b) { $a + $b })', { variables: {} }, { timeoutMs: 200 }),
    );
    expect(r.outcome).toBeInstanceOf(EngineError);
    const err = r.outcome as EngineError;
    expect(err.code).toBe('EXPRESSION_ERROR');
    expect(err.message).toMatch(/Evaluation timeout after 200 milliseconds/u);
    expect(r.ms).toBeLessThan(1000);
    expect(r.stallMs).toBeLessThan(100);
  });

  it('thirty at once each get their whole time limit: waiting for a turn does not use it up', async () => {
    // Each needs a few tens of ms alone; together they take far longer than the limit. With a
    // wall-clock limit most failed (a newcomer's trial: 27 of 30 pass steps, EXPRESSION_ERROR).
    const src = '$sum($map([1..8000], function($v) { $v * 2 }))';
    await evaluateExpression(src, { variables: {} }); // compiled and warm
    const t0 = performance.now();
    const all = await Promise.allSettled(Array.from({ length: 30 }, () => evaluateExpression(src, { variables: {} }, { timeoutMs: 300 })));
    const ms = performance.now() - t0;
    expect(all.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message))).toEqual(Array.from({ length: 30 }, () => 64_008_000));
    expect(ms).toBeGreaterThan(300); // they did take longer together than one's limit
  });

  it('an evaluation that fails while its other items still run gives up its turn for good', async () => {
    // jsonata evaluates an object's values side by side: "b" fails at once, "a" is still running.
    const failing = '{ "a": $reduce([1..100000], function($x, $y) { $x + $y }), "b": $error("boom") }';
    const err = await evaluateExpression(failing, { variables: {} }, { timeoutMs: 10_000 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((err as EngineError).message).toMatch(/boom/u);
    await new Promise((r) => setTimeout(r, 500)); // long enough for a stray "a" to have ended
    const next = await Promise.race([
      evaluateExpression('1 + 1', { variables: {} }),
      new Promise((r) => setTimeout(() => r('still waiting for a turn'), 2000)),
    ]);
    expect(next).toBe(2);
  });

  it('a short expression does not wait for a timer turn', async () => {
    const t0 = performance.now();
    for (let i = 0; i < 200; i++) await evaluateExpression('a + 1', { variables: { a: i } });
    expect(performance.now() - t0).toBeLessThan(200);
  });
});
