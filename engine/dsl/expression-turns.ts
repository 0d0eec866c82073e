/**
 * Time slices for JSONata evaluations, so a long one cannot hold the thread (issue 17: one
 * `output` expression froze `runnel serve`, `/api/health` included).
 *
 * jsonata awaits between its AST steps, but only on microtasks, which run before any timer, I/O
 * callback or HTTP request: an evaluation held the thread for as long as it ran (up to its time
 * limit), and several at once interleaved step by step, each step possibly a long built-in call
 * (`$match` over 50 000 characters is ~20 ms), so six of them stalled the host ~100 ms.
 *
 * Here evaluations take turns: one runs at a time, for up to {@link EXPRESSION_SLICE_MS} ms, then
 * goes to the back of the queue, and the next turn starts on a macrotask, so the host's other
 * work runs between any two turns. A stall is then at most one slice plus one AST step. Checked
 * from jsonata's `__evaluate_entry` hook, before every step of every evaluation.
 *
 * Turns are per evaluation, not per step: jsonata evaluates the items of an array or object
 * constructor side by side, and all of one evaluation's pending steps resume together.
 *
 * Pure (no Node imports: `macrotask` below picks what the host has), shared with the renderer.
 */

/** Longest turn of one evaluation, in ms, before the next one (and the host) gets the thread. */
export const EXPRESSION_SLICE_MS = 5;

/** The name the turn token is bound under: not a JSONata name (it has a space), so no expression can read it. */
export const TURN_BINDING = ' runnel turn';

/** An evaluation's identity for turn taking: one object per `evaluateExpression` call. */
export type TurnToken = object;

interface Waiting {
  token: TurnToken;
  /** The steps of this evaluation waiting for its next turn. */
  resumes: (() => void)[];
}

let holder: TurnToken | undefined;
let turnStart = 0;
let dispatchPending = false;
const queue: Waiting[] = [];
const tokens = new WeakMap<object, TurnToken | undefined>();
/**
 * Evaluations that have settled. jsonata evaluates constructor items with `Promise.all`, which
 * settles on the first error while the other items go on: such a stray step must not take a
 * turn again (it would hold it for good once it stopped), so it is stopped instead.
 */
const ended = new WeakSet<TurnToken>();

/**
 * Runs `run` on a macrotask: `setImmediate` in Node (after pending I/O), a `MessageChannel` in
 * browsers (where nested `setTimeout(0)` is clamped to 4 ms), `setTimeout` elsewhere.
 */
const macrotask: (run: () => void) => void = (() => {
  // Structural types: the DOM's and Node's declarations of these differ.
  type Channel = new () => { port1: { onmessage: (() => void) | null }; port2: { postMessage(message: null): void } };
  const g = globalThis as unknown as { setImmediate?: (run: () => void) => unknown; MessageChannel?: Channel };
  const immediate = g.setImmediate;
  if (immediate) return (run) => void immediate(run);
  if (typeof g.MessageChannel === 'function') {
    const channel = new g.MessageChannel();
    const runs: (() => void)[] = [];
    channel.port1.onmessage = () => runs.shift()?.();
    return (run) => {
      runs.push(run);
      channel.port2.postMessage(null);
    };
  }
  return (run) => void setTimeout(run, 0);
})();

function scheduleDispatch(): void {
  if (dispatchPending) return;
  dispatchPending = true;
  macrotask(() => {
    dispatchPending = false;
    const next = queue.shift();
    holder = next?.token;
    turnStart = performance.now();
    for (const resume of next?.resumes ?? []) resume();
  });
}

function wait(token: TurnToken): Promise<void> {
  return new Promise((resolve) => {
    const entry = queue.find((w) => w.token === token);
    if (entry) entry.resumes.push(resolve);
    else queue.push({ token, resumes: [resolve] });
  });
}

/**
 * Before one AST step of the evaluation `token`: `undefined` to go on now, or a promise that
 * settles when this evaluation's next turn starts.
 *
 * @throws Error with `code: 'RUNNEL_EVALUATION_ENDED'` for a step of an evaluation that has
 *   already settled (its error was reported; this one goes nowhere).
 */
export function takeTurn(token: TurnToken): Promise<void> | undefined {
  if (ended.has(token)) {
    throw Object.assign(new Error('the evaluation has already ended'), { code: 'RUNNEL_EVALUATION_ENDED' });
  }
  if (holder === token) {
    if (performance.now() - turnStart < EXPRESSION_SLICE_MS) return undefined;
    holder = undefined;
    const next = wait(token);
    scheduleDispatch();
    return next;
  }
  if (holder === undefined && !dispatchPending && queue.length === 0) {
    holder = token;
    turnStart = performance.now();
    return undefined;
  }
  const next = wait(token);
  if (holder === undefined) scheduleDispatch();
  return next;
}

/**
 * jsonata's `__evaluate_entry` hook, bound on every compiled expression: finds the evaluation's
 * token (bound as {@link TURN_BINDING}, cached per evaluation frame) and calls {@link takeTurn}.
 * An evaluation without a token (none is made outside `evaluateExpression`) is not held.
 */
export function turnBeforeStep(environment: unknown): Promise<void> | undefined {
  const env = environment as { base?: object; lookup?: (name: string) => unknown };
  const base = env.base;
  if (base === undefined || typeof env.lookup !== 'function') return undefined;
  let token = tokens.get(base);
  if (token === undefined && !tokens.has(base)) {
    const found = env.lookup(TURN_BINDING);
    token = typeof found === 'object' && found !== null ? found : undefined;
    tokens.set(base, token);
  }
  return token === undefined ? undefined : takeTurn(token);
}

/**
 * Ends the evaluation `token` (it settled, with a value or an error): its turn passes on.
 * Idempotent.
 */
export function endTurns(token: TurnToken): void {
  ended.add(token);
  const i = queue.findIndex((w) => w.token === token);
  if (i >= 0) queue.splice(i, 1);
  if (holder !== token) return;
  holder = undefined;
  if (queue.length > 0) scheduleDispatch();
}
