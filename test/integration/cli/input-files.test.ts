/**
 * Every file the CLI reads (workflow files, `--vars-file`) is checked before it is read: a FIFO,
 * a device or a directory, a file above the contract's 5 MiB limit, and text that is not UTF-8
 * are refused at once with INVALID_INPUT naming the file (exit 2, no stack trace, no database
 * written). Before, `validate` of a FIFO hung forever and `start --vars-file /dev/zero` ran until
 * it aborted with std::bad_alloc. Real bin, real files, a real FIFO (mkfifo).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LIMITS } from '../../../engine/api/contract';
import { parseJson, runBin, type BinResult } from '../../helpers/cli';
import { tempDir } from '../../helpers/temp-engine';

const WORKFLOW = { name: 'tiny', nodes: [{ id: 'a', type: 'pass' }] };

/** Refused by itself (not killed by the timeout), as a user error, with exactly this message. */
function expectRefused(r: BinResult, message: string): void {
  expect(r.signal, `killed after ${r.elapsedMs} ms`).toBeNull();
  expect(r.code, r.stderr).toBe(2);
  expect(r.stderr).toBe(`error: INVALID_INPUT: ${message}\n`);
  expect(r.stdout).toBe('');
}

describe('runnel input files', () => {
  let tmp: ReturnType<typeof tempDir>;
  let db: string;
  let fifo: string;
  beforeEach(async () => {
    tmp = tempDir();
    db = path.join(tmp.dir, 'runnel.db');
    fifo = path.join(tmp.dir, 'pipe.json');
    const made = spawnSync('mkfifo', [fifo], { encoding: 'utf8' });
    expect(made.status, made.stderr).toBe(0);
    const wf = path.join(tmp.dir, 'tiny.workflow.json');
    fs.writeFileSync(wf, JSON.stringify(WORKFLOW));
    expect((await runBin(['deploy', wf, '--db', db])).code).toBe(0);
  });
  afterEach(() => tmp.cleanup());

  it('a FIFO is refused at once, as a workflow file and as --vars-file (no writer ever opens it)', async () => {
    expectRefused(await runBin(['validate', fifo], { timeoutMs: 20_000 }), `workflow file ${fifo} is a FIFO (named pipe), not a regular file`);
    expectRefused(
      await runBin(['start', 'tiny', '--vars-file', fifo, '--db', db], { timeoutMs: 20_000 }),
      `--vars-file: ${fifo} is a FIFO (named pipe), not a regular file`,
    );
  });

  it('/dev/zero and a directory are refused at once; nothing is started or created', async () => {
    const fresh = path.join(tmp.dir, 'fresh.db');
    expectRefused(
      await runBin(['start', 'tiny', '--vars-file', '/dev/zero', '--db', db], { timeoutMs: 20_000 }),
      '--vars-file: /dev/zero is a character device, not a regular file',
    );
    expectRefused(
      await runBin(['run', '/dev/zero', '--db', fresh], { timeoutMs: 20_000 }),
      'workflow file /dev/zero is a character device, not a regular file',
    );
    expectRefused(await runBin(['deploy', tmp.dir, '--db', fresh]), `workflow file ${tmp.dir} is a directory, not a regular file`);
    expect(fs.existsSync(fresh)).toBe(false);
    expect(parseJson<unknown[]>(await runBin(['list', '--json', '--db', db]))).toEqual([]);
  });

  it('a file above 5 MiB is refused naming its size and the limit, before it is read', async () => {
    const big = path.join(tmp.dir, 'big.workflow.json');
    const size = LIMITS.definitionBytes + 1;
    fs.writeFileSync(big, '');
    fs.truncateSync(big, size); // sparse: its size is all that is read
    expectRefused(await runBin(['validate', big]), `workflow file ${big} is ${size} bytes, above the limit of 5242880 bytes (5 MiB)`);
    const vars = path.join(tmp.dir, 'vars.json');
    fs.writeFileSync(vars, `{"blob": "${'x'.repeat(LIMITS.valueBytes)}"}`);
    expectRefused(
      await runBin(['start', 'tiny', '--vars-file', vars, '--db', db]),
      `--vars-file: ${vars} is ${LIMITS.valueBytes + 12} bytes, above the limit of 5242880 bytes (5 MiB)`,
    );
    // At the limit exactly, a file is read (and here refused for what it holds, not its size)
    fs.truncateSync(big, LIMITS.definitionBytes);
    const atLimit = await runBin(['validate', big]);
    expect(atLimit.code).toBe(2);
    expect(atLimit.stderr).toMatch(/^error: INVALID_WORKFLOW: /);
  });

  it('a latin-1 file is refused naming the file and the byte offset; UTF-8 with a byte-order mark is read', async () => {
    const latin = path.join(tmp.dir, 'latin.workflow.json');
    const text = '{"name": "caf\xe9", "nodes": [{"id": "a", "type": "pass"}]}';
    fs.writeFileSync(latin, Buffer.from(text, 'latin1'));
    const offset = text.indexOf('\xe9');
    const message = `workflow file ${latin} is not valid UTF-8: byte 0xe9 at byte offset ${offset} (line 1) does not start a UTF-8 character; save the file as UTF-8`;
    expectRefused(await runBin(['validate', latin]), message);
    const fresh = path.join(tmp.dir, 'fresh.db');
    expectRefused(await runBin(['run', latin, '--db', fresh]), message);
    expect(fs.existsSync(fresh)).toBe(false);

    const vars = path.join(tmp.dir, 'vars.json');
    fs.writeFileSync(vars, Buffer.from('{\n  "city": "M\xfcnchen"\n}', 'latin1'));
    expectRefused(
      await runBin(['start', 'tiny', '--vars-file', vars, '--db', db]),
      `--vars-file: ${vars} is not valid UTF-8: byte 0xfc at byte offset 14 (line 2) does not start a UTF-8 character; save the file as UTF-8`,
    );

    const bom = path.join(tmp.dir, 'bom.workflow.json');
    fs.writeFileSync(bom, `\ufeff${JSON.stringify({ name: 'café ☕', nodes: [{ id: 'a', type: 'pass' }] })}`);
    const read = await runBin(['validate', bom]);
    expect(read.code, read.stderr).toBe(0);
    expect(read.stdout).toBe(`${bom}: valid workflow "café ☕" (1 nodes, 0 edges)\n`);
  });

  it('a missing file keeps its error: NOT_FOUND for a workflow file, INVALID_INPUT for --vars-file', async () => {
    const missing = path.join(tmp.dir, 'nope.json');
    const wf = await runBin(['validate', missing]);
    expect(wf.code).toBe(2);
    expect(wf.stderr).toMatch(/^error: NOT_FOUND: cannot read workflow file .*nope\.json: ENOENT/);
    const vars = await runBin(['start', 'tiny', '--vars-file', missing, '--db', db]);
    expect(vars.code).toBe(2);
    expect(vars.stderr).toMatch(/^error: INVALID_INPUT: --vars-file: cannot read .*nope\.json: ENOENT/);
  });
});
