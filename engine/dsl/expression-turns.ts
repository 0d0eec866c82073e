/**
 * Time slices for JSONata evaluations, so a long one cannot hold the thread (issue 17: one
 * `output` expression froze `runnel serve`, `/api/health` included).
 *
 * jsonata awaits between its AST steps, but only on microtasks, which run before any timer, I/O
 * callback or HTTP request: an evaluation held the thread for as long as it ran (up to its time
 * limit), and several at once interleaved step by step, each step possibly a long built-in call
 * (`$match` over 50 000 characters is ~20 ms), so six of them stalled the host ~100 ms.
 *
 * Here evaluations take turns: one runs at a time, and the thread runs evaluations for at most
 * {@link EXPRESSION_SLICE_MS} ms (a slice) before the host's other work gets a macrotask turn.
 * An evaluation still running when the slice is spent goes to the back of the queue; one that
 * ends within it hands the rest of the slice to the next at once. A stall is then at most one
 * slice plus one AST step. Checked from jsonata's `__evaluate_entry` hook, before every step of
 * every evaluation.
 *
 * Turns are per evaluation, not per step: jsonata evaluates the items of an array or object
 * constructor side by side, and all of one evaluation's pending steps resume together.
 *
 * Pure (no Node imports: `macrotask` below picks what the host has), shared with the renderer.
 */

/** Longest slice, in ms: how long evaluations keep the thread before the host's other work runs. */
export const EXPRESSION_SLICE_MS = 5;

/** The name the turn token is bound under: not a JSONata name (it has a space), so no expression can read it. */
export const TURN_BINDING = ' runnel turn';

/** The clock is read every this many steps (a step is ~1 µs; reading the clock ~70 ns). */
const CLOCK_EVERY = 8;

/** One evaluation's place in the turn taking, and its time budget: make one per `evaluateExpression` call. */
export interface TurnToken {
  /**
   * Set when the evaluation settled. jsonata evaluates constructor items with `Promise.all`,
   * which settles on the first error while the other items go on: such a stray step must not
   * take a turn again (it would hold it for good once it stopped), so it is stopped instead.
   */
  ended: boolean;
  /** Steps taken, for {@link CLOCK_EVERY}. */
  steps: number;
  /** How long the evaluation may hold the turn in all, ms (its time limit). */
  budgetMs: number;
  /** How long it held the turn in its earlier turns, ms. */
  usedMs: number;
  /** When its current turn began (`performance.now()`), while it holds one. */
  since: number;
}

/**
 * A token for a new evaluation that may run for `budgetMs` in all (default: no limit). The budget
 * counts only the time the evaluation holds the turn: time spent waiting for one while other
 * evaluations run does not use it up, so thirty evaluations at once each get their whole budget
 * (a newcomer's trial: with a wall-clock limit, 27 of 30 pass steps whose `input` took 16-448 ms
 * alone failed on the 1 s limit once they started together).
 */
export function newTurnToken(budgetMs = Number.POSITIVE_INFINITY): TurnToken {
  return { ended: false, steps: 0, budgetMs, usedMs: 0, since: 0 };
}

/** jsonata's own error for an evaluation past its time limit (its message: "Evaluation timeout after … milliseconds"). */
function timedOut(token: TurnToken): { code: string; value: number; stack?: string } {
  return { code: 'D1012', value: token.budgetMs, stack: new Error().stack };
}

interface Waiting {
  token: TurnToken;
  /** The steps of this evaluation waiting for its next turn. */
  resumes: (() => void)[];
}

let holder: TurnToken | undefined;
let turnStart = 0;
let dispatchPending = false;
const queue: Waiting[] = [];

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

/** Gives the turn to the first waiting evaluation (its steps resume on microtasks). */
function dispatch(): void {
  const next = queue.shift();
  holder = next?.token;
  if (next) next.token.since = performance.now();
  for (const resume of next?.resumes ?? []) resume();
}

/** Starts a new slice on the next macrotask, so the host's other work runs first. */
function scheduleDispatch(): void {
  if (dispatchPending) return;
  dispatchPending = true;
  macrotask(() => {
    dispatchPending = false;
    turnStart = performance.now();
    dispatch();
  });
}

function sliceSpent(): boolean {
  return performance.now() - turnStart >= EXPRESSION_SLICE_MS;
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
 *   already settled (its error was reported; this one goes nowhere); jsonata's `D1012` error
 *   object (time limit) once the evaluation has held the turn for longer than its budget.
 */
export function takeTurn(token: TurnToken): Promise<void> | undefined {
  if (token.ended) {
    throw Object.assign(new Error('the evaluation has already ended'), { code: 'RUNNEL_EVALUATION_ENDED' });
  }
  if (holder === token) {
    if (++token.steps % CLOCK_EVERY !== 0) return undefined;
    const now = performance.now();
    if (token.usedMs + (now - token.since) > token.budgetMs) throw timedOut(token);
    if (now - turnStart < EXPRESSION_SLICE_MS) return undefined;
    token.usedMs += now - token.since;
    holder = undefined;
    const next = wait(token);
    scheduleDispatch();
    return next;
  }
  if (holder === undefined && !dispatchPending && queue.length === 0) {
    holder = token;
    token.since = performance.now();
    // A new slice, unless this follows another evaluation within the current one.
    if (token.since - turnStart >= EXPRESSION_SLICE_MS) turnStart = token.since;
    return undefined;
  }
  const next = wait(token);
  if (holder === undefined) scheduleDispatch();
  return next;
}

/**
 * jsonata's `__evaluate_entry` hook, bound on every compiled expression: finds the evaluation's
 * token (bound as {@link TURN_BINDING}) and calls {@link takeTurn}. An evaluation without one
 * (none is made outside `evaluateExpression`) is not held.
 */
export function turnBeforeStep(environment: unknown): Promise<void> | undefined {
  const env = environment as { lookup?: (name: string) => unknown };
  const token = typeof env.lookup === 'function' ? (env.lookup(TURN_BINDING) as TurnToken | undefined) : undefined;
  return typeof token?.ended === 'boolean' ? takeTurn(token) : undefined;
}

/**
 * Ends the evaluation `token` (it settled, with a value or an error): its turn passes on.
 * Idempotent.
 */
export function endTurns(token: TurnToken): void {
  token.ended = true;
  const i = queue.findIndex((w) => w.token === token);
  if (i >= 0) queue.splice(i, 1);
  if (holder !== token) return;
  holder = undefined;
  if (queue.length === 0 || dispatchPending) return;
  // Within the slice the next evaluation goes on at once; past it, after the host's work.
  if (sliceSpent()) scheduleDispatch();
  else dispatch();
}
