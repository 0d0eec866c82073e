/**
 * Child processes of the bench: `node --import tsx <script>` from the repository root, talked to
 * over stdin (one command a line) and read by marker lines on stdout (`BENCH_READY`,
 * `BENCH_RESULT <json>`).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The repository root (the children's working directory). */
export const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** A running child: what it printed so far, a line writer to its stdin, its exit. */
export interface ChildRun {
  /** Everything the child printed on stdout so far. */
  stdout: string;
  /** Writes `line` and a newline to the child's stdin. */
  write(line: string): void;
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<number | null>;
  kill(signal?: NodeJS.Signals): void;
}

/** Spawns `node --import tsx <script> ...args` from the repository root; its stderr goes to ours. */
export function spawnNode(script: string, args: string[]): ChildRun {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const run: ChildRun = {
    stdout: '',
    write: (line) => child.stdin.write(`${line}\n`),
    exited: new Promise((resolve) => child.on('exit', (code) => resolve(code))),
    kill: (signal = 'SIGKILL') => child.kill(signal),
  };
  child.stdout.setEncoding('utf8').on('data', (d: string) => (run.stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => process.stderr.write(d));
  return run;
}

/**
 * Waits until the child printed a line starting with `marker`; returns the rest of that line.
 *
 * @throws Error when the child exits without printing it (`what` names the child).
 */
export async function lineOf(run: ChildRun, marker: string, what: string): Promise<string> {
  for (;;) {
    const at = run.stdout.indexOf(`${marker}`);
    if (at >= 0) {
      const end = run.stdout.indexOf('\n', at);
      if (end >= 0) return run.stdout.slice(at + marker.length, end).trim();
    }
    const exited = await Promise.race([
      run.exited.then(() => true),
      new Promise<false>((r) => setTimeout(() => r(false), 10)),
    ]);
    if (exited && !run.stdout.includes(marker)) throw new Error(`bench: ${what} exited without ${marker}`);
  }
}
