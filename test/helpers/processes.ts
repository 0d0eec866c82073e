/**
 * Parent-side helpers for tests that run the engine in child processes: spawn a worker (or any
 * TypeScript script) with tsx, kill it, read the call log, wait for a condition.
 *
 * Children are tracked so a test's afterEach can SIGKILL the ones still alive
 * ({@link killChildren}); only children spawned here are ever signalled, by their own pid.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseCallLog, type CallLine } from './test-nodes';

/** The repository root (children run from here so `--import tsx` resolves). */
export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The worker entry point. */
export const WORKER_ENTRY = fileURLToPath(new URL('./worker-process.ts', import.meta.url));

/** How a child ended. */
export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A running child and what it printed so far. */
export interface Child {
  child: ChildProcess;
  pid: number;
  /** Settles when the child has exited (never rejects). */
  exited: Promise<Exit>;
  /** Whether the child has exited. */
  readonly done: boolean;
  stdout(): string;
  stderr(): string;
  /** Sends `signal` (default SIGKILL) to this child, if it still runs. */
  kill(signal?: NodeJS.Signals): void;
}

/** A worker child: `ready` resolves with the epoch ms its loop started at. */
export interface WorkerChild extends Child {
  /** Rejects if the child exits before its loop started (with its stderr). */
  ready: Promise<number>;
}

/** Options of {@link spawnWorker}. */
export interface SpawnWorkerOptions {
  db: string;
  callLog: string;
  leaseMs?: number;
  pollIntervalMs?: number;
  concurrency?: number;
  /** RUNNEL_FAULTS, e.g. `handler-done@charge=kill`. */
  faults?: string;
  /** Default true: exit when the file has no pending work. */
  exitWhenIdle?: boolean;
  synchronous?: 'FULL' | 'NORMAL';
  env?: Record<string, string>;
  /** A network namespace to run it in (test/helpers/netns.ts: a host of its own). */
  netns?: string;
}

const alive = new Set<Child>();

/**
 * Runs `node --import tsx <script> ...args` from the repository root with `env` added to this
 * process's environment (RUNNEL_FAULTS removed unless given), in the network namespace `netns`
 * when given (root only). The worker script runs from the run's bundle of it instead when the
 * test projects' global setup built one (RUNNEL_TEST_WORKER_BUNDLE: children-global-setup.ts).
 */
export function spawnScript(script: string, args: string[] = [], env: Record<string, string> = {}, netns?: string): Child {
  const base: NodeJS.ProcessEnv = { ...process.env };
  delete base.RUNNEL_FAULTS;
  const bundle = script === WORKER_ENTRY ? process.env.RUNNEL_TEST_WORKER_BUNDLE : undefined;
  const argv =
    bundle !== undefined && bundle !== ''
      ? [process.execPath, bundle, ...args]
      : [process.execPath, '--import', 'tsx', script, ...args];
  // `ip netns exec` execs the command in the namespace: the child's pid is the node process's own.
  const [command, ...rest] = netns === undefined ? argv : ['ip', 'netns', 'exec', netns, ...argv];
  const child = spawn(command as string, rest, {
    cwd: REPO_ROOT,
    env: { ...base, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  let done = false;
  const handle: Child = {
    child,
    pid: child.pid ?? -1,
    exited: new Promise<Exit>((resolve) => {
      child.on('exit', (code, signal) => {
        done = true;
        alive.delete(handle);
        // Let the pipes drain before callers read stdout/stderr.
        setImmediate(() => resolve({ code, signal }));
      });
    }),
    get done() {
      return done;
    },
    stdout: () => out,
    stderr: () => err,
    kill(signal: NodeJS.Signals = 'SIGKILL') {
      if (!done) child.kill(signal);
    },
  };
  alive.add(handle);
  return handle;
}

/** Spawns a worker process (test/helpers/worker-process.ts) on `opts.db`. */
export function spawnWorker(opts: SpawnWorkerOptions): WorkerChild {
  const env: Record<string, string> = {
    RUNNEL_DB: opts.db,
    RUNNEL_CALL_LOG: opts.callLog,
    RUNNEL_POLL_MS: String(opts.pollIntervalMs ?? 20),
    RUNNEL_EXIT_WHEN_IDLE: opts.exitWhenIdle === false ? '0' : '1',
    ...(opts.leaseMs === undefined ? {} : { RUNNEL_LEASE_MS: String(opts.leaseMs) }),
    ...(opts.concurrency === undefined ? {} : { RUNNEL_CONCURRENCY: String(opts.concurrency) }),
    ...(opts.faults === undefined ? {} : { RUNNEL_FAULTS: opts.faults, RUNNEL_ENABLE_FAULTS: '1' }),
    ...(opts.synchronous === undefined ? {} : { RUNNEL_SYNCHRONOUS: opts.synchronous }),
    ...opts.env,
  };
  const c = spawnScript(WORKER_ENTRY, [], env, opts.netns);
  const ready = new Promise<number>((resolve, reject) => {
    const onData = () => {
      const m = /RUNNEL_WORKER_READY (\d+)/.exec(c.stdout());
      if (m) {
        c.child.stdout?.off('data', onData);
        resolve(Number(m[1]));
      }
    };
    c.child.stdout?.on('data', onData);
    void c.exited.then((e) =>
      reject(new Error(`worker ${c.pid} exited (${e.code ?? e.signal}) before it was ready:\n${c.stderr()}`)),
    );
  });
  ready.catch(() => undefined);
  return Object.assign(c, { ready });
}

/** SIGKILLs every child spawned here that still runs, and waits for them to exit. */
export async function killChildren(): Promise<void> {
  const left = [...alive];
  for (const c of left) c.kill('SIGKILL');
  await Promise.all(left.map((c) => c.exited));
}

/** The call log's lines (none when the file does not exist yet). */
export function readCallLog(file: string): CallLine[] {
  if (!fs.existsSync(file)) return [];
  return parseCallLog(fs.readFileSync(file, 'utf8'));
}

/** Calls grouped by `instanceId:nodeId`. */
export function callsByPair(lines: CallLine[]): Map<string, CallLine[]> {
  const m = new Map<string, CallLine[]>();
  for (const l of lines) {
    const k = `${l.instanceId}:${l.nodeId}`;
    const list = m.get(k);
    if (list) list.push(l);
    else m.set(k, [l]);
  }
  return m;
}

/**
 * Polls `predicate` every `intervalMs` until it returns a truthy value, which it resolves with.
 *
 * @throws Error naming `what` after `timeoutMs`.
 */
export async function waitFor<T>(
  predicate: () => T | Promise<T>,
  timeoutMs: number,
  what = 'condition',
  intervalMs = 10,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await predicate();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`waitFor: ${what} not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Lines of `text` that report SQLite lock contention as an error. */
export function busyErrors(text: string): string[] {
  return text.split('\n').filter((l) => /SQLITE_BUSY|database is locked|DATABASE_BUSY/i.test(l));
}
