/**
 * The `runnel` exit codes, stable for scripts (README "The command line"):
 *
 * | code | meaning |
 * |---|---|
 * | 0 | COMPLETED, or success of a command that runs no instance |
 * | 1 | FAILED or CANCELLED (and unexpected engine errors; a database busy, full or unreachable: DATABASE_BUSY, DATABASE_FULL, DATABASE_UNAVAILABLE); `check` found a violation |
 * | 2 | a user error: bad usage, a `backup` destination that exists without `--force`, an invalid workflow, bad variables, an input file that is not a regular UTF-8 file within the size limit, a missing, empty, corrupt or read-only database (a PostgreSQL database the server does not have: NOT_FOUND), an unwritable `-o` file, an unknown id, an action the instance's state refuses |
 * | 3 | SUSPENDED, or waiting for what only outside can give: a person (an approval) or an event (`signal`) |
 * | 130 | interrupted (Ctrl-C): the worker stopped cleanly and released its claims |
 */
import { EngineError } from '../errors';

/** Exit codes of the CLI (see the module comment). */
export const ExitCode = {
  OK: 0,
  FAILED: 1,
  USAGE: 2,
  NEEDS_PERSON: 3,
  INTERRUPTED: 130,
} as const;

/** The exit code an instance's status maps to (see the module comment). */
export function exitCodeForStatus(status: string): number {
  if (status === 'COMPLETED') return ExitCode.OK;
  if (status === 'FAILED' || status === 'CANCELLED') return ExitCode.FAILED;
  return ExitCode.NEEDS_PERSON;
}

/**
 * A failure answered by a contract channel with a code the engine does not define (BAD_REQUEST,
 * UNKNOWN_CHANNEL: engine/vocabulary.ts `HostErrorCodes`), kept as the API gave it.
 */
export class HostCallError extends Error {
  /**
   * @param code the API error code, as the channel answered it.
   * @param userFixable whether the caller's input was at fault (exit 2) rather than the host (exit 1).
   */
  constructor(
    readonly code: string,
    message: string,
    readonly details: unknown,
    readonly userFixable: boolean,
  ) {
    super(message);
    this.name = 'HostCallError';
  }
}

/** The exit code of an error a command threw: 2 for what the user can fix, else 1. */
export function exitCodeForError(err: unknown): number {
  if (err instanceof EngineError) return err.kind === 'user' ? ExitCode.USAGE : ExitCode.FAILED;
  if (err instanceof HostCallError) return err.userFixable ? ExitCode.USAGE : ExitCode.FAILED;
  return ExitCode.FAILED;
}
