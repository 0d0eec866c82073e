/**
 * The script sandbox's memory limit bounds the host's memory, not only QuickJS's own count.
 *
 * This QuickJS build has no `malloc_usable_size`, so QuickJS's limit counts ~8 bytes per
 * allocation: a few big strings or arrays used to grow the WebAssembly memory (and the host's RSS)
 * to ~1.7 GB before "memory limit" was reported. Kept in its own file so the fork's peak RSS
 * (`maxRSS`) is this file's alone.
 */
import { describe, expect, it } from 'vitest';
import { EngineError } from '../../../engine/errors';
import { ScriptConfigSchema, scriptNode, type ScriptConfig } from '../../../engine/nodes/script';
import { makeContext } from '../../helpers/node-context';

const MB = 1_000_000;

async function execute(config: { code: string; memoryLimitBytes?: number; timeLimitMs?: number }, input: unknown = {}) {
  const ctx = makeContext<ScriptConfig>({ config: ScriptConfigSchema.parse(config), input });
  try {
    const result = await scriptNode.execute(ctx);
    return { output: 'output' in result ? result.output : undefined };
  } catch (err) {
    expect(err).toBeInstanceOf(EngineError);
    return { error: err as EngineError };
  }
}

function expectMemoryLimit(outcome: { error?: EngineError }): void {
  expect(outcome.error?.code).toBe('SCRIPT_ERROR');
  expect(outcome.error?.message).toContain('memory limit');
  expect(outcome.error?.retryable).toBe(false);
}

describe('script memory limit bounds host memory', () => {
  it('big-string and big-array bombs end with a non-retryable memory-limit error while RSS stays bounded, and scripts still run', async () => {
    // given a warmed-up sandbox and the process's peak RSS so far
    expect((await execute({ code: 'return 1' })).output).toBe(1);
    const peakBefore = process.resourceUsage().maxRSS * 1024;
    const rssBefore = process.memoryUsage.rss();

    // when a 1 MiB script keeps pushing 1 MB strings, and a default-limit (32 MiB) one keeps
    // pushing 100,000-element arrays (each counted as a handful of bytes by QuickJS itself),
    // a few times each
    for (let round = 0; round < 3; round++) {
      expectMemoryLimit(
        await execute({
          code: "const a = []; while (true) a.push('x'.repeat(1000000) + a.length)",
          memoryLimitBytes: 1024 * 1024,
          timeLimitMs: 10_000,
        }),
      );
      expectMemoryLimit(
        await execute({
          code: 'const a = []; while (true) a.push(new Array(100000).fill(1))',
          timeLimitMs: 10_000,
        }),
      );
      // a bomb that catches the error and keeps the memory ends the same way
      expectMemoryLimit(
        await execute({
          code: "const a = []; try { for (;;) a.push(new ArrayBuffer(65536)) } catch (e) {} return 'x'.repeat(4000000)",
          memoryLimitBytes: 4 * 1024 * 1024,
          timeLimitMs: 10_000,
        }),
      );
    }

    // then the host's peak RSS grew by far less than the 1.6-1.7 GB seen before the fix
    const peakGrowth = process.resourceUsage().maxRSS * 1024 - peakBefore;
    expect(peakGrowth).toBeLessThan(300 * MB);
    expect(process.memoryUsage.rss() - rssBefore).toBeLessThan(300 * MB);

    // and normal scripts still work, on both limits, right after
    expect((await execute({ code: 'return input.n * 2' }, { n: 21 })).output).toBe(42);
    expect(
      (await execute({ code: 'return input.s.length', memoryLimitBytes: 1024 * 1024 }, { s: 'abc' })).output,
    ).toBe(3);
  });

  it('a script gets about its memory limit: 8 MiB of buffers fit a 16 MiB limit but not a 4 MiB one', async () => {
    const code =
      'const a = []; for (let i = 0; i < 128; i++) a.push(new ArrayBuffer(65536)); return a.length';
    expect((await execute({ code, memoryLimitBytes: 16 * 1024 * 1024 })).output).toBe(128);
    expectMemoryLimit(await execute({ code, memoryLimitBytes: 4 * 1024 * 1024 }));
  });

  it('inputs too big for the limit fail with the memory limit instead of corrupting the sandbox', async () => {
    const big = { s: 'é'.repeat(1_500_000) };
    expectMemoryLimit(await execute({ code: 'return input.s.length', memoryLimitBytes: 1024 * 1024 }, big));
    expect((await execute({ code: 'return input.s.length' }, big)).output).toBe(1_500_000);
    expect((await execute({ code: 'return 7', memoryLimitBytes: 1024 * 1024 })).output).toBe(7);
  });
});
