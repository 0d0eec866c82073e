/**
 * What runnel prints: into a closed pipe it finishes cleanly (no EPIPE crash, the instance's exit
 * code); hints name `npx runnel …`; tables line up by display width with wide characters and emoji.
 * Real database files in temp dirs; the pipe tests run the real `bin/runnel.js` under bash.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { displayWidth } from '../../../engine/cli/output';
import { REPO_ROOT, runBin, runCli } from '../../helpers/cli';
import { tempDir } from '../../helpers/temp-engine';

/** Runs a bash pipeline from the repository root; returns runnel's own exit code and its stderr. */
function pipeline(command: string): { runnelCode: number; stderr: string; stdout: string } {
  const r = spawnSync('bash', ['-c', `${command}; echo "runnel-exit=\${PIPESTATUS[0]}" >&2`], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    timeout: 60_000,
  });
  const code = /runnel-exit=(\d+)/.exec(r.stderr)?.[1];
  return { runnelCode: Number(code ?? NaN), stderr: r.stderr, stdout: r.stdout };
}

describe('runnel into a closed pipe', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir();
  });
  afterEach(() => tmp.cleanup());

  it('`run --json | head -c 100` and `run 2>&1 | head -2` finish cleanly: no EPIPE crash, the exit code of the instance', () => {
    const wf = path.join(tmp.dir, 'big.json');
    fs.writeFileSync(
      wf,
      JSON.stringify({
        name: 'big',
        nodes: [
          { id: 'first', type: 'pass' },
          { id: 'pause', type: 'delay', config: { durationMs: 400 } },
          { id: 'big', type: 'script', config: { code: "return 'x'.repeat(300000)" }, output: 'blob' },
        ],
        edges: [
          { from: 'first', to: 'pause' },
          { from: 'pause', to: 'big' },
        ],
      }),
    );
    const db = path.join(tmp.dir, 'r.db');
    const json = pipeline(`node bin/runnel.js run ${wf} --json --db ${db} 2>${tmp.dir}/err.txt | head -c 100`);
    expect(json.stdout).toHaveLength(100);
    expect(json.runnelCode).toBe(0);
    expect(fs.readFileSync(path.join(tmp.dir, 'err.txt'), 'utf8')).not.toMatch(/EPIPE|Unhandled|\n\s+at /);

    const human = pipeline(`node bin/runnel.js run ${wf} --db ${db} 2>&1 | head -2`);
    expect(human.stdout.trimEnd().split('\n')).toHaveLength(2);
    expect(human.runnelCode).toBe(0);
    // and the run finished its work: two completed instances in the file
    const raw = new Database(db, { readonly: true });
    try {
      expect(raw.prepare(`SELECT count(*) AS n FROM instance WHERE status = 'COMPLETED'`).get()).toEqual({ n: 2 });
    } finally {
      raw.close();
    }
  });
});

describe('runnel hints and tables', () => {
  let tmp: ReturnType<typeof tempDir>;
  let db: string;
  beforeEach(() => {
    tmp = tempDir();
    db = path.join(tmp.dir, 'r.db');
  });
  afterEach(() => tmp.cleanup());

  it('hints after run say `npx runnel …` (runnel is not on PATH)', async () => {
    const wf = path.join(tmp.dir, 'suspends.json');
    fs.writeFileSync(
      wf,
      JSON.stringify({
        name: 'suspends',
        nodes: [{ id: 'boom', type: 'script', config: { code: 'throw new Error("no")' }, retry: { maxAttempts: 1 }, onFailure: 'suspend' }],
      }),
    );
    const r = await runCli('run', wf, '--db', db);
    expect(r.code).toBe(3);
    expect(r.stdout).toContain(`resume with: npx runnel resume 1 --action retry --db ${db} (or --action skip, --action fail)`);
    expect(r.stderr).toContain(`details: npx runnel show 1 --history --db ${db}`);
    expect(`${r.stdout}${r.stderr}`).not.toMatch(/(^|[^x] )runnel (resume|show|worker|approve) /m);
  });

  it('displayWidth counts wide characters and emoji as two columns, combining marks as none', () => {
    expect(displayWidth('abc')).toBe(3);
    expect(displayWidth('设备升级')).toBe(8);
    expect(displayWidth('한국')).toBe(4);
    expect(displayWidth('🚀')).toBe(2);
    expect(displayWidth('👩‍💻')).toBe(2);
    expect(displayWidth('e\u0301')).toBe(1);
    expect(displayWidth('ｱ')).toBe(1);
  });

  it('list lines up its columns by display width with CJK and emoji workflow names', async () => {
    for (const name of ['设备升级 🚀', 'ota']) {
      const wf = path.join(tmp.dir, `${name}.json`);
      fs.writeFileSync(wf, JSON.stringify({ name, nodes: [{ id: 'a', type: 'pass' }] }));
      expect((await runCli('run', wf, '--db', db)).code).toBe(0);
    }
    const lines = (await runCli('list', '--db', db)).stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    const statusColumn = lines.map((line) => {
      const at = line.search(/STATUS|COMPLETED/);
      return displayWidth(line.slice(0, at));
    });
    expect(new Set(statusColumn).size).toBe(1);
  });

  it('list and show print control characters of a business key as escapes: one row each, no terminal sequence, no two keys alike', async () => {
    const wf = path.join(tmp.dir, 'keyed.json');
    fs.writeFileSync(wf, JSON.stringify({ name: 'keyed', nodes: [{ id: 'a', type: 'pass' }] }));
    expect((await runCli('run', wf, '--business-key', 'order\t7\nx\u001b[31m', '--db', db)).code).toBe(0);
    expect((await runCli('run', wf, '--business-key', 'plain', '--db', db)).code).toBe(0);
    // a backslash and a t (not a tab), and a right-to-left override (it would reorder the row)
    expect((await runCli('run', wf, '--business-key', 'order\\t7', '--db', db)).code).toBe(0);
    expect((await runCli('run', wf, '--business-key', 'x\u202e end', '--db', db)).code).toBe(0);
    const lines = (await runCli('list', '--db', db)).stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(5);
    expect(lines.map((l) => l.split(/ {2,}/).at(-1))).toEqual([
      'NOTE',
      'x\\u202e end',
      'order\\\\t7',
      'plain',
      'order\\t7\\nx\\u001b[31m',
    ]);
    const shown = await runCli('show', '1', '--history', '--db', db);
    expect(shown.stdout).toContain(', business key order\\t7\\nx\\u001b[31m\n');
    expect([...shown.stdout].filter((c) => c < ' ' && c !== '\n')).toEqual([]);
    // the history's data is JSON, escaped once (JSON's own escapes, not a second layer)
    expect(shown.stdout).toContain('"businessKey":"order\\t7\\nx\\u001b[31m"');
    // variables: JSON with the characters JSON leaves raw escaped too
    expect((await runCli('run', wf, '--vars', JSON.stringify({ r: 'abc\u202edef', ls: 'x\u2028y' }), '--db', db)).code).toBe(0);
    const vars = (await runCli('show', '5', '--db', db)).stdout;
    expect(vars).toContain('variables: {"r":"abc\\u202edef","ls":"x\\u2028y"}\n');
  });

  it('an approval prompt is printed on one line, escaped; an event wait says what it waits for and how to send it', async () => {
    const ask = path.join(tmp.dir, 'ask.json');
    fs.writeFileSync(ask, JSON.stringify({ name: 'ask', nodes: [{ id: 'ok', type: 'approval', config: { prompt: 'line1\nline2\u2028x\u202eevil\\back' } }] }));
    const run = await runCli('run', ask, '--db', db);
    expect(run.code).toBe(3);
    expect(run.stdout).toContain('waiting for a person at "ok": line1\\nline2\\u2028x\\u202eevil\\\\back\n');
    expect(run.stdout + run.stderr).not.toMatch(/[\u2028\u202e]/);
    const ev = path.join(tmp.dir, 'ev.json');
    fs.writeFileSync(ev, JSON.stringify({ name: 'ev', nodes: [{ id: 'e', type: 'event', config: { name: 'ping', key: '{{ k }}' } }] }));
    expect((await runCli('run', ev, '--vars', '{"k":"dev 7"}', '--db', db)).code).toBe(3);
    const shown = (await runCli('show', '2', '--db', db)).stdout;
    expect(shown).toContain('waiting at "e" for event "ping" with key "dev 7"\n');
    expect(shown).toContain(`  send it with: npx runnel signal 2 ping --key 'dev 7' --db ${db}\n`);
    // a wrong key is not taken, and the text names the node and the key it waits with
    const wrong = await runCli('signal', '2', 'ping', '--key', 'dev 8', '--db', db);
    expect(wrong.stdout).toMatch(/^instance 2: event "ping" recorded, not taken: node "e" waits for it with key "dev 7" \(this one has "dev 8"\); now WAITING/);
    const keyless = await runCli('signal', '2', 'ping', '--db', db);
    expect(keyless.stdout).toMatch(/^instance 2: event "ping" recorded, not taken: node "e" waits for it with key "dev 7" \(this one has none\); now WAITING/);
    const first = await runCli('signal', '2', 'ping', '--key', 'dev 7', '--db', db);
    expect(first.stdout).toMatch(/^instance 2: event "ping" taken by "e"; now /);
    // a second one stays recorded: nothing waits for it now, and the text says no more than that
    const second = await runCli('signal', '2', 'ping', '--key', 'dev 7', '--db', db);
    expect(second.stdout).toMatch(/^instance 2: event "ping" recorded, not taken: no node waits for it now \(an event node that waits for it later takes it\); now /);
  });

  it('an error quoting what it refused keeps one line per problem: ids and values quoted as JSON, what would split or reverse the line escaped', async () => {
    const wf = path.join(tmp.dir, 'bad.json');
    fs.writeFileSync(wf, JSON.stringify({ name: 'bad', nodes: [{ id: 'x\u2028y', type: 'pass' }, { id: 'r\u202el', type: 'pass' }, { id: 'c:\\p', type: 'pass' }, { id: 'a\nb', type: 'pass' }, { id: 't\tab', type: 'pass' }] }));
    const r = await runCli('deploy', wf, '--db', db);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('node "x\\u2028y"');
    expect(r.stderr).toContain('node "r\\u202el"');
    expect(r.stderr).toContain('(got "c:\\\\p")');
    expect(r.stderr).not.toMatch(/[\u2028\u202e]/);
    // a newline or a tab in a refused id is quoted as JSON, like the id before it: one line per problem
    expect(r.stderr).toContain('node "a\\nb": id must be');
    expect(r.stderr).toContain('(got "a\\nb")');
    expect(r.stderr).toContain('(got "t\\tab")');
    expect(r.stderr.split('\n').filter((l) => l !== '')).toHaveLength(6);
  });
});

describe('runnel export -o a FIFO', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir();
  });
  afterEach(() => tmp.cleanup());

  it('with no reader is refused at once (exit 2, naming the FIFO) instead of waiting forever; with a reader the definition goes through', async () => {
    const wf = path.join(tmp.dir, 'flow.json');
    fs.writeFileSync(wf, JSON.stringify({ name: 'fifo-flow', nodes: [{ id: 'a', type: 'pass' }], edges: [] }));
    const db = path.join(tmp.dir, 'r.db');
    expect((await runCli('deploy', wf, '--db', db)).code).toBe(0);
    const fifo = path.join(tmp.dir, 'out.fifo');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);

    const alone = spawnSync('node', ['bin/runnel.js', 'export', 'fifo-flow', '-o', fifo, '--db', db], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 20_000, killSignal: 'SIGKILL' });
    expect(alone.error).toBeUndefined(); // not killed by the timeout
    expect(alone.status).toBe(2);
    expect(alone.stderr).toContain(`-o ${fifo}`);
    expect(alone.stderr).toMatch(/FIFO that no process reads from/);

    // The reader: this process, holding the FIFO open for reading (non-blocking, so no writer is needed yet).
    const fd = fs.openSync(fifo, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
    try {
      const r = await runBin(['export', 'fifo-flow', '-o', fifo, '--db', db], { timeoutMs: 20_000 });
      expect(r.code).toBe(0);
      const buf = Buffer.alloc(64 * 1024);
      const n = fs.readSync(fd, buf, 0, buf.length, null);
      expect(JSON.parse(buf.subarray(0, n).toString('utf8'))).toMatchObject({ name: 'fifo-flow', nodes: [{ id: 'a', type: 'pass' }] });
    } finally {
      fs.closeSync(fd);
    }
  });
});
