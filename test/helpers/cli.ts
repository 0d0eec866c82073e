/**
 * Test helpers for the CLI: run `runnel` in-process with captured output, or as the real
 * `bin/runnel.js` in a child process, and paths of the examples.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { main } from '../../engine/cli/main';

/** The repository root. */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** An example file's absolute path, e.g. `example('ota-upgrade.workflow.json')`. */
export function example(name: string): string {
  return path.join(REPO_ROOT, 'examples', name);
}

/** What one CLI call printed and returned. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `runnel <args…>` in this process (as `main(process.argv)` would) and captures its output. */
export async function runCli(...args: string[]): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const code = await main(['node', 'runnel', ...args], {
    stdout: (t) => (stdout += t),
    stderr: (t) => (stderr += t),
  });
  return { code, stdout, stderr };
}

/** Parses the stdout of a `--json` call, failing the test with the output when it is not JSON. */
export function parseJson<T = Record<string, unknown>>(r: CliResult): T {
  try {
    return JSON.parse(r.stdout) as T;
  } catch {
    throw new Error(`stdout is not JSON (exit ${r.code}):\n${r.stdout}\nstderr:\n${r.stderr}`);
  }
}

/** What one run of the real `bin/runnel.js` printed and returned, and how long it took. */
export interface BinResult extends CliResult {
  /** The signal that ended it (the timeout's SIGKILL), or null when it exited by itself. */
  signal: NodeJS.Signals | null;
  elapsedMs: number;
}

/**
 * Runs `node bin/runnel.js <args…>` as a child process from the repository root; a run longer
 * than `timeoutMs` (default 30 s) is killed with SIGKILL and reported with its signal. Async, so
 * a server in the test process can answer the child meanwhile.
 */
export function runBin(args: readonly string[], options: { timeoutMs?: number } = {}): Promise<BinResult> {
  const started = Date.now();
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [path.join(REPO_ROOT, 'bin', 'runnel.js'), ...args],
      { cwd: REPO_ROOT, encoding: 'utf8', timeout: options.timeoutMs ?? 30_000, killSignal: 'SIGKILL', maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const failure = error as (Error & { code?: unknown; signal?: NodeJS.Signals | null }) | null;
        resolve({
          code: typeof failure?.code === 'number' ? failure.code : failure ? -1 : 0,
          signal: failure?.signal ?? null,
          stdout,
          stderr,
          elapsedMs: Date.now() - started,
        });
      },
    );
  });
}
