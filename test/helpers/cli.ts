/**
 * Test helpers for the CLI: run `runnel` in-process with captured output, and paths of the
 * examples.
 */
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
