/**
 * What the CLI prints and where: stdout carries results (JSON with `--json`), stderr carries
 * progress and errors. A closed pipe (`runnel run x.json --json | head -c 100`) does not crash a
 * command: output to it is dropped and the command finishes its work (its exit code still tells
 * the outcome).
 */
import { debugEnabled } from '../debug';
import { EngineError } from '../errors';
import { ExitCode, HostCallError, exitCodeForError } from './exit-codes';

/** Where the CLI writes: stdout carries results, stderr carries progress and errors. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
}

/** Streams found closed (EPIPE: the reader went away); output to them is dropped. */
const closedStreams = new WeakSet<NodeJS.WriteStream>();
/** Streams with the EPIPE guard of {@link guardStream}. */
const guardedStreams = new WeakSet<NodeJS.WriteStream>();

/**
 * Makes a closed pipe harmless on a process stream. An EPIPE (`| head -2`) arrives as an 'error'
 * event, which crashes the process when nothing handles it (and a listener someone else added,
 * such as `pipe()`'s, may rethrow it): this one swallows it and marks the stream closed.
 */
export function guardStream(stream: NodeJS.WriteStream): void {
  if (guardedStreams.has(stream)) return;
  guardedStreams.add(stream);
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE' || err.code === 'ERR_STREAM_DESTROYED') closedStreams.add(stream);
    else throw err;
  });
}

/** Writes to a process stream unless its reader went away (see {@link guardStream}). */
function writeTo(stream: NodeJS.WriteStream, text: string): void {
  guardStream(stream);
  if (closedStreams.has(stream) || stream.destroyed) return;
  stream.write(text);
}

/** The process's own streams (a closed pipe is ignored: see {@link guardStream}). */
export const processIo: CliIo = {
  stdout: (text) => writeTo(process.stdout, text),
  stderr: (text) => writeTo(process.stderr, text),
};

/**
 * Prints `value` as indented JSON on stdout: what every `--json` command prints. The characters
 * JSON leaves raw and a terminal or a line reader should not get (see {@link jsonLine}) are escaped.
 */
export function json(io: CliIo, value: unknown): void {
  io.stdout(`${escapeUnprintable(JSON.stringify(value, null, 2) ?? '')}\n`);
}

interface ProblemLine {
  code: string;
  message: string;
}

function isProblemList(v: unknown): v is ProblemLine[] {
  return Array.isArray(v) && v.every((p) => typeof p === 'object' && p !== null && 'code' in p && 'message' in p);
}

/** The validation problems an error carries (INVALID_WORKFLOW's `details`), if any. */
export function problemsOf(err: unknown): ProblemLine[] | undefined {
  const details = err instanceof EngineError || err instanceof HostCallError ? err.details : undefined;
  return isProblemList(details) ? details : undefined;
}

/**
 * Prints an error as `error: <CODE>: message` (plus one line per validation problem) and returns
 * the exit code: 2 for user errors, 1 otherwise. Never a stack trace for a typed error (with
 * `RUNNEL_DEBUG=1` or `true`, an unexpected one's stack follows); an untyped error is a bug and prints
 * its stack. With `json` (the command's `--json`) it is one JSON line instead,
 * `{"error":{"code","message","problems"?}}`, on stderr as well (stdout keeps only results).
 */
export function reportError(err: unknown, io: CliIo, json = false): number {
  if (json) {
    const typed = err instanceof EngineError || err instanceof HostCallError;
    const problems = problemsOf(err);
    const message = err instanceof Error ? err.message : String(err);
    io.stderr(`${jsonLine({ error: { code: typed ? err.code : 'INTERNAL', message, ...(problems ? { problems } : {}) } })}\n`);
    return typed ? exitCodeForError(err) : ExitCode.FAILED;
  }
  if (err instanceof EngineError || err instanceof HostCallError) {
    io.stderr(`error: ${err.code}: ${terminalSafe(err.message)}\n`);
    for (const p of problemsOf(err) ?? []) io.stderr(`  ${p.code} ${terminalSafe(p.message)}\n`);
    const code = exitCodeForError(err);
    if (code !== ExitCode.USAGE && err.stack && debugEnabled()) io.stderr(`${err.stack}\n`);
    return code;
  }
  const e = err instanceof Error ? err : new Error(String(err));
  io.stderr(`error: INTERNAL: ${e.message}\n${e.stack ?? ''}\n`);
  return ExitCode.FAILED;
}

/** East Asian Wide and Fullwidth ranges (Unicode UAX #11): two terminal columns each. */
const WIDE =
  /[\u1100-\u115f\u231a\u231b\u2329\u232a\u23e9-\u23ec\u23f0\u23f3\u25fd\u25fe\u2614\u2615\u2648-\u2653\u267f\u2693\u26a1\u26aa\u26ab\u26bd\u26be\u26c4\u26c5\u26ce\u26d4\u26ea\u26f2\u26f3\u26f5\u26fa\u26fd\u2705\u270a\u270b\u2728\u274c\u274e\u2753-\u2755\u2757\u2795-\u2797\u27b0\u27bf\u2b1b\u2b1c\u2b50\u2b55\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\ua960-\ua97f\uac00-\ud7a3\uf900-\ufaff\ufe10-\ufe19\ufe30-\ufe6f\uff00-\uff60\uffe0-\uffe6\u{16fe0}-\u{1b2ff}\u{1f004}\u{1f0cf}\u{1f18e}\u{1f191}-\u{1f19a}\u{1f1e6}-\u{1f1ff}\u{1f200}-\u{1f251}\u{1f300}-\u{1f64f}\u{1f680}-\u{1f6ff}\u{1f7e0}-\u{1f7eb}\u{1f90c}-\u{1f9ff}\u{1fa70}-\u{1faff}\u{20000}-\u{2fffd}\u{30000}-\u{3fffd}]/u;
/**
 * Characters that take no column: combining marks (variation selectors included) and format
 * characters (zero-width spaces and joiners).
 */
const ZERO_WIDTH = /^[\p{Mn}\p{Me}\p{Cf}]+$/u;

let graphemes: Intl.Segmenter | undefined;

/**
 * How many terminal columns `text` takes: per grapheme (user-perceived character), 2 for East
 * Asian wide or fullwidth characters and emoji (an emoji presentation selector or a ZWJ sequence
 * counts once), 0 for combining marks and other zero-width characters, else 1.
 */
export function displayWidth(text: string): number {
  if (/^[\x20-\x7e]*$/.test(text)) return text.length;
  graphemes ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' });
  let width = 0;
  for (const { segment } of graphemes.segment(text)) {
    if (ZERO_WIDTH.test(segment)) continue;
    if (WIDE.test(segment) || segment.includes('\ufe0f') || /\p{Extended_Pictographic}\u200d/u.test(segment)) width += 2;
    else width += 1;
  }
  return width;
}

/** `x` with its noun, singular for exactly one: "1 instance", "3 instances" (numbers grouped: "1,200 rows"). */
export function plural(x: number, one: string, many = `${one}s`): string {
  return `${x.toLocaleString('en-US')} ${x === 1 ? one : many}`;
}

/**
 * What {@link printable} escapes: the backslash (its escape character), C0 and C1 control
 * characters and DEL, the line and paragraph separators, and the bidirectional controls (an RLO
 * reorders the rest of the line). Joiners stay: emoji sequences need them.
 */
// eslint-disable-next-line no-control-regex -- matching them is the point
const UNPRINTABLE = /[\\\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const NAMED: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/**
 * `text` as one unambiguous line for a terminal: a backslash doubled, control characters shown as
 * escapes (`\t`, `\n`, `\r`, else `\u001b` …), and likewise the line separators and the
 * bidirectional controls. For text the user gave (a business key, an error message) printed in a
 * row or a line: a tab or a newline would break the columns, an escape sequence would drive the
 * terminal, and two different keys must not print alike (`--json` gives the text as it is).
 */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, (c) => NAMED[c] ?? unicodeEscape(c));
}

/** What a message may not send a terminal raw: control characters but the newline and the tab, DEL, C1, the line separators, the bidirectional controls. */
// eslint-disable-next-line no-control-regex -- matching them is the point
const MESSAGE_UNPRINTABLE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * An error message as a terminal should get it: what {@link printable} escapes, but the newline
 * and the tab (a message may span lines) and the backslash (a Windows path stays as written). A
 * message quotes what was refused (a node id holding U+2028, a name holding U+202E), so it must
 * not split the line or reverse the text it is quoted in.
 */
export function terminalSafe(text: string): string {
  return text.replace(MESSAGE_UNPRINTABLE, (c) => NAMED[c] ?? unicodeEscape(c));
}

/** `c` as a `\uXXXX` escape (JSON's and JavaScript's form). */
function unicodeEscape(c: string): string {
  return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/** What JSON text leaves as it is and a terminal should not get raw: DEL, C1, the line separators, the bidirectional controls. */
const JSON_UNPRINTABLE = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** JSON text with {@link JSON_UNPRINTABLE} as `\uXXXX` escapes (still valid JSON, the same values). */
function escapeUnprintable(jsonText: string): string {
  return jsonText.replace(JSON_UNPRINTABLE, unicodeEscape);
}

/**
 * `value` as one line of JSON a terminal shows as it is: JSON escapes the other control
 * characters and the backslash itself; these get `\uXXXX` escapes too (still valid JSON).
 */
export function jsonLine(value: unknown): string {
  return escapeUnprintable(JSON.stringify(value) ?? '');
}

/**
 * Rows as aligned columns (two spaces apart), padded by display width so CJK and emoji line up.
 * Cells are printed as given: pass text a user gave through {@link printable} or {@link short}.
 */
export function table(rows: string[][]): string {
  const widths: number[] = [];
  for (const r of rows) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, displayWidth(c))));
  return rows
    .map((r) =>
      r
        .map((c, i) => (i === r.length - 1 ? c : c + ' '.repeat((widths[i] ?? 0) - displayWidth(c))))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** An epoch-ms time as `YYYY-MM-DD HH:MM:SS.mmm` (UTC), `-` when absent. */
export function time(ms: number | null | undefined): string {
  return ms === null || ms === undefined ? '-' : new Date(ms).toISOString().replace('T', ' ').slice(0, 23);
}

/**
 * A value as one printable line of at most `max` characters, cut with `…`: a string through
 * {@link printable}, anything else as {@link jsonLine}.
 */
export function short(value: unknown, max = 200): string {
  const text = typeof value === 'string' ? printable(value) : jsonLine(value);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** A stored error (`{ code, message }`) as `CODE: message`. */
export function errorText(e: unknown): string {
  if (typeof e !== 'object' || e === null) return short(e);
  const { code, message } = e as { code?: unknown; message?: unknown };
  return `${typeof code === 'string' ? `${code}: ` : ''}${typeof message === 'string' ? message : short(e)}`;
}

/** `value` quoted for a POSIX shell when it needs it, for the hints we print. */
export function shellQuote(value: string): string {
  return /^[\w./:@%+=-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

/**
 * Stderr progress, throttled: at most `perSecond` lines a second; lines over the budget are
 * counted and reported as one line when the budget refills. Silent when disabled (`--json`).
 */
export class Progress {
  private windowStart = 0;
  private inWindow = 0;
  private dropped = 0;

  constructor(
    private readonly io: CliIo,
    readonly enabled: boolean,
    private readonly perSecond = 20,
  ) {}

  /** Prints one progress line, unless this second's budget is spent. */
  line(text: string): void {
    if (!this.enabled) return;
    const now = Date.now();
    if (now - this.windowStart >= 1000) {
      this.flush();
      this.windowStart = now;
      this.inWindow = 0;
    }
    if (this.inWindow >= this.perSecond) {
      this.dropped++;
      return;
    }
    this.inWindow++;
    this.io.stderr(`${text}\n`);
  }

  /** Says how many lines were dropped since the last line printed. */
  flush(): void {
    if (this.enabled && this.dropped > 0)
      this.io.stderr(`  … ${this.dropped} more transition${this.dropped === 1 ? '' : 's'} not shown\n`);
    this.dropped = 0;
  }
}
