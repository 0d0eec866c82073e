/**
 * Crash recovery (issue 2, "Tests that must exist"): a worker process SIGKILLed at random points
 * during a mixed workload, restarted after each kill, then run to completion.
 *
 * Asserts that every instance reaches the same terminal state as a crash-free run of the same
 * workload on another file, that no transition is committed twice, and that a handler reruns
 * only when its worker died between the handler's effect and its commit (the call log and the
 * idempotency key show it). The kill delays come from a seeded PRNG, so a failing run can be
 * replayed with the same seed (printed).
 */
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Engine } from '../../../engine/runtime/engine';
import {
  busyErrors,
  callsByPair,
  killChildren,
  readCallLog,
  spawnWorker,
  type Exit,
} from '../../helpers/processes';
import { rowsIn } from '../../helpers/db-rows';
import { tempDir, tempLocation } from '../../helpers/temp-engine';
import { createTestRegistry, type CallLine } from '../../helpers/test-nodes';

const SEED = 0x5eed_c0de;
const PER_WORKFLOW = 60;
const MIN_KILLS = 20;
const MAX_KILLS = 24;
/** Workers of both runs: small leases so a dead worker's claims come back fast. */
const WORKER = { leaseMs: 400, pollIntervalMs: 20, concurrency: 3 } as const;

/** mulberry32: a small seeded PRNG, uniform in [0, 1). */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The mixed workload. Every workflow allows 10 attempts (attempts count when they start, so a
 * node caught in flight by a few kills must still have attempts left for the crash-free outcome
 * to be reachable); `cr-doomed` fails for good after its own 3 attempts either way.
 */
const RETRY = { maxAttempts: 10, initialIntervalMs: 20, backoffCoefficient: 1 };
const WORKFLOWS = [
  {
    name: 'cr-linear',
    retry: RETRY,
    nodes: [
      { id: 'p1', type: 'pass' },
      { id: 'p2', type: 'pass' },
      { id: 'nap', type: 'slow', config: { ms: 100 } },
      { id: 'p3', type: 'pass' },
      { id: 'tally', type: 'count', config: { delayMs: 5 } },
      { id: 'p4', type: 'pass' },
    ],
    edges: [
      { from: 'p1', to: 'p2' },
      { from: 'p2', to: 'nap' },
      { from: 'nap', to: 'p3' },
      { from: 'p3', to: 'tally' },
      { from: 'tally', to: 'p4' },
    ],
  },
  {
    name: 'cr-fan',
    retry: RETRY,
    nodes: [
      { id: 'start', type: 'pass' },
      ...[1, 2, 3, 4, 5].map((i) => ({ id: `f${i}`, type: 'count', config: { delayMs: 30 } })),
      { id: 'join', type: 'pass', join: 'all' },
      { id: 'end', type: 'count', config: {} },
    ],
    edges: [
      ...[1, 2, 3, 4, 5].flatMap((i) => [
        { from: 'start', to: `f${i}` },
        { from: `f${i}`, to: 'join' },
      ]),
      { from: 'join', to: 'end' },
    ],
  },
  {
    name: 'cr-flaky',
    retry: RETRY,
    nodes: [
      { id: 'pre', type: 'count', config: { delayMs: 10 } },
      { id: 'flk', type: 'flaky', config: { failures: 1, delayMs: 10 } },
      { id: 'post', type: 'pass' },
    ],
    edges: [
      { from: 'pre', to: 'flk' },
      { from: 'flk', to: 'post' },
    ],
  },
  {
    name: 'cr-branch',
    retry: RETRY,
    nodes: [
      { id: 'gate', type: 'pass', config: { result: { go: false } }, output: 'gate' },
      { id: 'yes', type: 'count', config: {} },
      { id: 'no', type: 'count', config: { delayMs: 10 } },
      { id: 'after', type: 'pass' },
    ],
    edges: [
      { from: 'gate', to: 'yes', when: 'gate.go = true' },
      { from: 'gate', to: 'no', when: 'gate.go = false' },
      { from: 'yes', to: 'after' },
      { from: 'no', to: 'after' },
    ],
  },
  {
    name: 'cr-doomed',
    retry: RETRY,
    nodes: [
      { id: 'work', type: 'count', config: { delayMs: 10 } },
      {
        id: 'bad',
        type: 'flaky',
        config: { failures: 99 },
        retry: { maxAttempts: 3, initialIntervalMs: 10 },
      },
      { id: 'never', type: 'pass' },
    ],
    edges: [
      { from: 'work', to: 'bad' },
      { from: 'bad', to: 'never' },
    ],
  },
];

/** History events that commit a transition: at most one per (instance, node). */
const ONCE = new Set(['node.completed', 'instance.completed', 'instance.failed']);

/** Node types whose calls land in the call log. */
const LOGGED_TYPES = new Set(['count', 'flaky']);

interface Run {
  file: string;
  callLog: string;
}

/** Databases made by {@link prepare}, removed at the end of the test. */
const databases: (() => Promise<void>)[] = [];

/** A new database (the run's backend) with the workload deployed and started (business keys `<workflow>-<n>`). */
async function prepare(dir: string, name: string): Promise<Run> {
  const { location: file, cleanup } = tempLocation(`runnel-crash-${name}-`);
  databases.push(cleanup);
  const callLog = path.join(dir, `${name}.calls.log`);
  const engine = Engine.open(file, { registry: createTestRegistry(callLog) });
  try {
    for (const wf of WORKFLOWS) await engine.deploy(wf);
    for (let i = 0; i < PER_WORKFLOW; i++) {
      for (const wf of WORKFLOWS)
        await engine.start(wf.name, { businessKey: `${wf.name}-${i}`, variables: { i } });
    }
  } finally {
    await engine.close();
  }
  return { file, callLog };
}

interface Outcome {
  /** business key → status and per-node status. */
  states: Map<string, { status: string; nodes: Record<string, string> }>;
  history: {
    instance_id: number;
    node_id: string | null;
    type: string;
    attempt: number | null;
    data_json: string | null;
  }[];
  nodes: { instance_id: number; node_id: string; type: string; attempt: number; status: string }[];
  business: Map<number, string>;
  schedule: number;
}

/** What the database at `file` holds once every worker has stopped (read on connections of its own). */
async function readOutcome(file: string): Promise<Outcome> {
  const instances = await rowsIn<{ id: number; business_key: string; status: string }>(file, `SELECT id, business_key, status FROM instance`);
  const nodes = await rowsIn<Outcome['nodes'][number]>(
    file,
    `SELECT s.instance_id, s.node_id, n.type, s.attempt, s.status FROM node_state s
       JOIN instance i ON i.id = s.instance_id JOIN node n ON n.workflow_id = i.workflow_id AND n.node_id = s.node_id`,
  );
  const states: Outcome['states'] = new Map();
  const business = new Map<number, string>();
  for (const i of instances) {
    states.set(i.business_key, { status: i.status, nodes: {} });
    business.set(i.id, i.business_key);
  }
  for (const n of nodes) {
    const st = states.get(business.get(n.instance_id) ?? '');
    if (st) st.nodes[n.node_id] = n.status;
  }
  const history = await rowsIn<Outcome['history'][number]>(
    file,
    `SELECT instance_id, node_id, type, attempt, data_json FROM history WHERE instance_id IS NOT NULL ORDER BY id`,
  );
  const schedule = (await rowsIn<{ n: number }>(file, `SELECT count(*) AS n FROM schedule`))[0]?.n ?? -1;
  return { states, history, nodes, business, schedule };
}

afterEach(async () => {
  await killChildren();
});

describe('crash recovery: SIGKILL at random points', () => {
  it(
    'reaches the crash-free terminal states, commits no transition twice, reruns a handler only when its commit was lost',
    { timeout: 240_000 },
    async () => {
      const { dir, cleanup } = tempDir('runnel-crash-');
      try {
        const clean = await prepare(dir, 'clean');
        const crashy = await prepare(dir, 'crashy');

        // given a crash-free reference run of the same workload on another file (runs alongside)
        const reference = spawnWorker({ db: clean.file, callLog: clean.callLog, ...WORKER });
        let referenceDone = 0;
        const referenceExit = reference.exited.then((e) => {
          referenceDone = Date.now();
          return e;
        });

        // when a worker on the other file is SIGKILLed at random points and restarted each time
        // (some restarts are armed to die between a handler's effect and its commit)
        const random = prng(SEED);
        const armed = [
          'handler-done@tally#1=kill',
          'handler-done@f3#1=kill',
          'handler-done@flk#1=kill',
          'handler-done@work#1=kill',
        ];
        const stderr: string[] = [];
        let kills = 0;
        let faultDeaths = 0;
        let finishedEarly = false;
        const t0 = Date.now();
        for (let cycle = 0; kills + faultDeaths < MAX_KILLS; cycle++) {
          const faults = cycle % 5 === 3 ? armed[((cycle / 5) % armed.length) | 0] : undefined;
          const w = spawnWorker({
            db: crashy.file,
            callLog: crashy.callLog,
            ...WORKER,
            ...(faults ? { faults } : {}),
          });
          await w.ready.catch(() => undefined);
          const delay = 50 + Math.floor(random() * 351);
          const exit = await Promise.race([
            w.exited,
            new Promise<Exit | undefined>((r) => setTimeout(() => r(undefined), delay)),
          ]);
          stderr.push(w.stderr());
          if (exit === undefined) {
            w.kill('SIGKILL');
            const e = await w.exited;
            stderr.push(w.stderr());
            if (e.signal === 'SIGKILL') {
              kills++;
              continue;
            }
            expect(e, w.stderr()).toEqual({ code: 0, signal: null });
            finishedEarly = true;
            break;
          }
          if (exit.signal === 'SIGKILL') {
            faultDeaths++;
            continue;
          }
          expect(exit, w.stderr()).toEqual({ code: 0, signal: null });
          finishedEarly = true;
          break;
        }
        const leftAfterKills = await openNodes(crashy.file);
        // then a final worker runs to completion
        const last = spawnWorker({ db: crashy.file, callLog: crashy.callLog, ...WORKER });
        expect(await last.exited, last.stderr()).toEqual({ code: 0, signal: null });
        stderr.push(last.stderr());
        expect(await referenceExit, reference.stderr()).toEqual({ code: 0, signal: null });
        const referenceMs = referenceDone - t0;
        console.log(
          `crash-recovery: crash-free run ${referenceMs} ms; seed ${SEED}, ${kills} random kills + ${faultDeaths} fault kills in ${Date.now() - t0} ms` +
            `${finishedEarly ? ' (the workload finished during the kill loop)' : ''}; ${leftAfterKills} node runs still owed after the kills`,
        );
        expect(kills + faultDeaths, 'the workload must outlast the kills').toBeGreaterThanOrEqual(MIN_KILLS);

        const ref = await readOutcome(clean.file);
        const got = await readOutcome(crashy.file);

        // every instance reached the crash-free run's terminal state, node by node
        expect(got.states.size).toBe(PER_WORKFLOW * WORKFLOWS.length);
        expect(Object.fromEntries(got.states)).toEqual(Object.fromEntries(ref.states));
        expect(new Set([...ref.states.values()].map((s) => s.status))).toEqual(
          new Set(['COMPLETED', 'FAILED']),
        );
        expect(got.schedule).toBe(0);

        // no transition was committed twice
        for (const o of [ref, got]) {
          const seen = new Map<string, number>();
          for (const h of o.history) {
            if (!ONCE.has(h.type)) continue;
            const k = `${h.instance_id}:${h.node_id ?? '-'}:${h.type}`;
            seen.set(k, (seen.get(k) ?? 0) + 1);
          }
          expect([...seen].filter(([, n]) => n > 1)).toEqual([]);
        }
        // the crash-free run recovered nothing and ran each attempt's handler once
        expect(ref.history.filter((h) => h.type === 'node.recovered')).toEqual([]);

        // a handler reran only when its worker died between its effect and its commit
        const calls = callsByPair(readCallLog(crashy.callLog));
        let orphans = 0;
        let recoveredPairs = 0;
        const problems: string[] = [];
        for (const n of got.nodes) {
          if (!LOGGED_TYPES.has(n.type)) continue;
          const key = `${n.instance_id}:${n.node_id}`;
          const mine: CallLine[] = calls.get(key) ?? [];
          const events = got.history.filter(
            (h) => h.instance_id === n.instance_id && h.node_id === n.node_id,
          );
          const recovered = events.filter((h) => h.type === 'node.recovered').map((h) => h.attempt ?? 0);
          const committed = new Set(
            events
              .filter(
                (h) =>
                  h.type === 'node.completed' ||
                  (h.type === 'node.failed' && !(h.data_json ?? '').includes('"LEASE_LOST"')),
              )
              .map((h) => h.attempt ?? 0),
          );
          if (recovered.length > 0) recoveredPairs++;
          if (mine.some((c) => c.idempotencyKey !== key))
            problems.push(`${key}: idempotency keys ${mine.map((c) => c.idempotencyKey).join(', ')}`);
          const attempts = mine.map((c) => c.attempt);
          if (new Set(attempts).size !== attempts.length)
            problems.push(`${key}: one attempt ran its handler twice (${attempts.join(', ')})`);
          for (const c of mine) {
            if (committed.has(c.attempt)) continue;
            // this call's outcome was never committed: its worker died after the effect
            orphans++;
            if (!recovered.some((a) => a === c.attempt + 1 || (a === c.attempt && a === n.attempt))) {
              problems.push(
                `${key}: attempt ${c.attempt} ran but has no outcome and no recovery (${business(got, n.instance_id)})`,
              );
            }
          }
          if (recovered.length === 0) {
            const expected = Array.from({ length: n.attempt }, (_, i) => i + 1);
            if (JSON.stringify(attempts) !== JSON.stringify(expected)) {
              problems.push(
                `${key}: without recovery, calls were attempts [${attempts.join(', ')}], expected [${expected.join(', ')}]`,
              );
            }
          }
        }
        console.log(
          `crash-recovery: ${recoveredPairs} logged (instance, node) pairs recovered after a lost lease; ${orphans} handler runs lost with their commit and rerun`,
        );
        expect(problems).toEqual([]);
        expect(orphans, 'the armed restarts die between an effect and its commit').toBeGreaterThan(0);

        // and the crash-free run called each logged handler once per attempt
        const refCalls = callsByPair(readCallLog(clean.callLog));
        for (const n of ref.nodes.filter((x) => LOGGED_TYPES.has(x.type))) {
          const attempts = (refCalls.get(`${n.instance_id}:${n.node_id}`) ?? []).map((c) => c.attempt);
          expect(attempts, `${n.instance_id}:${n.node_id}`).toEqual(
            Array.from({ length: n.attempt }, (_, i) => i + 1),
          );
        }
        expect(busyErrors(stderr.join('\n') + reference.stderr())).toEqual([]);
        expect(stderr.join('\n')).not.toContain('RUNNEL_WORKER_STUCK');
      } finally {
        await killChildren();
        for (const drop of databases.splice(0)) await drop();
        cleanup();
      }
    },
  );
});

/** How many node states of `file` still owe work. */
async function openNodes(file: string): Promise<number> {
  const [row] = await rowsIn<{ n: number }>(file, `SELECT count(*) AS n FROM node_state WHERE status IN ('PENDING', 'READY', 'RUNNING', 'WAITING', 'RETRYING')`);
  return row?.n ?? -1;
}

function business(o: Outcome, instanceId: number): string {
  return o.business.get(instanceId) ?? String(instanceId);
}
