/**
 * The files the CLI reads (workflow files, `--vars-file`) and writes (`export -o`).
 *
 * Every input file is checked before a byte of it is read (issue 17): it must be a regular file
 * (a FIFO would block the read forever, `/dev/zero` would fill the memory), at most the contract's
 * size limit, and valid UTF-8 (a latin-1 file would otherwise decode to U+FFFD without a word).
 * It is opened non-blocking and checked on the open descriptor, so a path swapped between the
 * check and the read cannot slip through, and read asynchronously, so Ctrl-C still works.
 * Plug-ins are code and load through `import`: they are not read here.
 */
import { isUtf8 } from 'node:buffer';
import fs from 'node:fs';
import path from 'node:path';
import { EngineError } from '../errors';
import { describeFileKind } from '../db/open-database';

/** How an input file is named in messages, and how large it may be. */
export interface InputFileSpec {
  /** The flag that named the file (`--vars-file`): messages start with `--vars-file: `. */
  flag?: string;
  /** What the file is (`workflow file`): messages say `workflow file x.json`. */
  what?: string;
  /** Largest size accepted, in bytes. */
  limitBytes: number;
  /** The code of a file that cannot be opened (missing, no permission). Default INVALID_INPUT. */
  unreadableCode?: 'NOT_FOUND' | 'INVALID_INPUT';
}

/** Bytes read at a time. */
const CHUNK_BYTES = 1024 * 1024;

/** A size limit for people: `5242880 bytes (5 MiB)`. */
function limitText(n: number): string {
  const mib = n / (1024 * 1024);
  return Number.isInteger(mib) ? `${n} bytes (${mib} MiB)` : `${n} bytes`;
}

/**
 * The offset of the first byte that does not start a well-formed UTF-8 sequence (Unicode 15,
 * Table 3-7: no overlong forms, no surrogates, nothing above U+10FFFF), or -1 when all are well formed.
 */
export function invalidUtf8Offset(bytes: Uint8Array): number {
  const at = (i: number) => bytes[i] ?? -1;
  const cont = (i: number, lo = 0x80, hi = 0xbf) => at(i) >= lo && at(i) <= hi;
  for (let i = 0; i < bytes.length; ) {
    const b = at(i);
    if (b < 0x80) i += 1;
    else if (b >= 0xc2 && b <= 0xdf && cont(i + 1)) i += 2;
    else if (
      ((b === 0xe0 && cont(i + 1, 0xa0)) ||
        (((b >= 0xe1 && b <= 0xec) || b === 0xee || b === 0xef) && cont(i + 1)) ||
        (b === 0xed && cont(i + 1, 0x80, 0x9f))) &&
      cont(i + 2)
    )
      i += 3;
    else if (
      ((b === 0xf0 && cont(i + 1, 0x90)) ||
        (b >= 0xf1 && b <= 0xf3 && cont(i + 1)) ||
        (b === 0xf4 && cont(i + 1, 0x80, 0x8f))) &&
      cont(i + 2) &&
      cont(i + 3)
    )
      i += 4;
    else return i;
  }
  return -1;
}

/**
 * Reads a UTF-8 text input file (a leading byte-order mark is dropped).
 *
 * @throws EngineError `unreadableCode` (default INVALID_INPUT) when it cannot be opened;
 *   INVALID_INPUT when it is not a regular file (naming what it is: a directory, a FIFO, a device),
 *   when it is larger than `limitBytes` (naming both sizes), or when it is not valid UTF-8 (naming
 *   the byte offset and line). Every message names the file; `details` carries `file` and `flag`.
 */
export async function readTextFile(file: string, spec: InputFileSpec): Promise<string> {
  const head = spec.flag === undefined ? '' : `${spec.flag}: `;
  const subject = spec.what === undefined ? file : `${spec.what} ${file}`;
  const refuse = (code: 'NOT_FOUND' | 'INVALID_INPUT', message: string, extra: Record<string, unknown> = {}, cause?: unknown) =>
    new EngineError(code, `${head}${message}`, {
      kind: 'user',
      details: { file: path.resolve(file), ...(spec.flag === undefined ? {} : { flag: spec.flag }), ...extra },
      ...(cause === undefined ? {} : { cause }),
    });
  const tooLarge = (size: string, sizeBytes?: number) =>
    refuse('INVALID_INPUT', `${subject} is ${size}, above the limit of ${limitText(spec.limitBytes)}`, {
      limitBytes: spec.limitBytes,
      ...(sizeBytes === undefined ? {} : { sizeBytes }),
    });

  let handle: fs.promises.FileHandle;
  try {
    // Non-blocking, so that opening a FIFO returns at once instead of waiting for a writer.
    handle = await fs.promises.open(file, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
  } catch (err) {
    throw refuse(spec.unreadableCode ?? 'INVALID_INPUT', `cannot read ${subject}: ${(err as Error).message}`, {}, err);
  }
  let bytes: Buffer;
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw refuse('INVALID_INPUT', `${subject} is ${describeFileKind(stat)}, not a regular file`);
    if (stat.size > spec.limitBytes) throw tooLarge(`${stat.size} bytes`, stat.size);
    // Read at most one byte past the limit: a file may grow after the check, and some (in /proc)
    // report a size of 0.
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, spec.limitBytes + 1 - total));
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) break;
      chunks.push(chunk.subarray(0, bytesRead));
      total += bytesRead;
      if (total > spec.limitBytes) throw tooLarge(`more than ${spec.limitBytes} bytes (it grew while read)`);
    }
    bytes = Buffer.concat(chunks, total);
  } catch (err) {
    if (err instanceof EngineError) throw err;
    throw refuse(spec.unreadableCode ?? 'INVALID_INPUT', `cannot read ${subject}: ${(err as Error).message}`, {}, err);
  } finally {
    await handle.close();
  }
  if (!isUtf8(bytes)) {
    const offset = invalidUtf8Offset(bytes);
    let line = 1;
    for (let i = 0; i < offset; i++) if (bytes[i] === 0x0a) line++;
    const byte = `0x${(bytes[offset] ?? 0).toString(16).padStart(2, '0')}`;
    throw refuse(
      'INVALID_INPUT',
      `${subject} is not valid UTF-8: byte ${byte} at byte offset ${offset} (line ${line}) does not start a UTF-8 character; save the file as UTF-8`,
      { offset, line },
    );
  }
  return new TextDecoder('utf-8').decode(bytes);
}

/** The error of an output file that cannot be written: exit 2, naming the path. */
function outputFileError(file: string, err: unknown): EngineError {
  const code = (err as { code?: unknown } | null)?.code;
  const why =
    code === 'ENOENT'
      ? `directory ${path.dirname(path.resolve(file))} does not exist`
      : code === 'EACCES' || code === 'EPERM'
        ? 'permission denied'
        : code === 'EISDIR'
          ? 'it is a directory'
          : code === 'ENXIO'
            ? 'it is a FIFO that no process reads from (start its reader first)'
            : (err as Error).message;
  return new EngineError('INVALID_INPUT', `-o ${file}: cannot write ${path.resolve(file)}: ${why}`, {
    kind: 'user',
    details: { flag: '-o', file },
  });
}

/**
 * Checks that `-o FILE` can be created before any work starts: its directory exists and it is
 * not a directory itself.
 *
 * @throws EngineError INVALID_INPUT naming the path.
 */
export function checkOutputFile(file: string): void {
  const resolved = path.resolve(file);
  if (!fs.statSync(path.dirname(resolved), { throwIfNoEntry: false })?.isDirectory()) {
    throw outputFileError(file, Object.assign(new Error('no such directory'), { code: 'ENOENT' }));
  }
  if (fs.statSync(resolved, { throwIfNoEntry: false })?.isDirectory()) {
    throw outputFileError(file, Object.assign(new Error('is a directory'), { code: 'EISDIR' }));
  }
}

/**
 * A FIFO as `-o` must have a reader: opening it for writing would otherwise wait for one forever
 * (and no signal could end the wait, which runs outside the event loop). Opening it without
 * blocking fails with ENXIO exactly then (POSIX open(2), O_NONBLOCK on a FIFO); with a reader
 * the blocking write that follows goes through. Anything else passes unchecked.
 *
 * @throws the open's error, ENXIO when nothing reads the FIFO.
 */
function checkFifoReader(file: string): void {
  if (!fs.statSync(file, { throwIfNoEntry: false })?.isFIFO()) return;
  fs.closeSync(fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK));
}

/**
 * Writes `text` to the `-o` file.
 *
 * @throws EngineError INVALID_INPUT naming the path when it cannot be written.
 */
export async function writeOutputFile(file: string, text: string): Promise<void> {
  try {
    checkFifoReader(file);
    await fs.promises.writeFile(file, text);
  } catch (err) {
    throw outputFileError(file, err);
  }
}
