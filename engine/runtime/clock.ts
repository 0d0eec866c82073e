/**
 * The engine's clock. Every due time is epoch ms from it, so tests can move time (DESIGN.md:
 * "a clock that tests can set") without waiting.
 */

/** A source of the current time, epoch ms. */
export interface Clock {
  now(): number;
}

/** The wall clock. */
export const systemClock: Clock = { now: () => Date.now() };

/** A clock that tests move by hand: starts at `start` and changes only through `set`/`advance`. */
export class ManualClock implements Clock {
  private t: number;
  constructor(start = Date.now()) {
    this.t = start;
  }
  now(): number {
    return this.t;
  }
  /** Sets the time (may go backwards, as a wall clock can). */
  set(ms: number): void {
    this.t = ms;
  }
  /** Moves the time by `ms` (negative goes back). */
  advance(ms: number): void {
    this.t += ms;
  }
}

/** A wall clock with an offset that tests can change: real time passes, jumps are by hand. */
export class OffsetClock implements Clock {
  offsetMs = 0;
  now(): number {
    return Date.now() + this.offsetMs;
  }
}
