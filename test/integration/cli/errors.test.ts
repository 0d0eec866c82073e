import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { example, parseJson, runCli } from '../../helpers/cli';
import { tempDir } from '../../helpers/temp-engine';

/** A workflow with seven problems of different kinds, each naming its node or edge. */
const MULTI_PROBLEM = {
  name: 'broken',
  nodes: [
    { id: 'a', type: 'nope' },
    { id: 'b', type: 'http', config: {}, retry: { maxAttempts: 0 } },
    { id: 'a', type: 'pass' },
    { id: 'c', type: 'pass' },
    { id: 'd', type: 'pass' },
  ],
  edges: [
    { from: 'a', to: 'zz' },
    { from: 'b', to: 'b' },
    { from: 'a', to: 'b', when: '((' },
    { from: 'c', to: 'd' },
    { from: 'd', to: 'c' },
  ],
};

const EXPECTED_LINES = [
  'UNKNOWN_TYPE node "a": type "nope"',
  'RETRY_OUT_OF_RANGE node "b": retry.maxAttempts',
  'DUPLICATE_ID node "a"',
  'UNKNOWN_NODE edge "a->zz"',
  'SELF_LOOP edge "b->b"',
  'EXPRESSION_PARSE edge "a->b"',
  'INVALID_CONFIG node "b": config.url',
  'CYCLE',
];

const PURCHASE = example('purchase-approval.workflow.json');

const APPROVAL_YAML = `name: appr
inputSchema:
  type: object
  required: [amount]
  properties:
    amount: { type: number, minimum: 0 }
nodes:
  - id: total
    type: pass
    config: { result: "{{ amount }}" }
    output: total
`;

describe('runnel: bad input exits 2 with a clear message and writes nothing', () => {
  let tmp: ReturnType<typeof tempDir>;
  let db: string;
  let bad: string;
  beforeEach(() => {
    tmp = tempDir();
    db = path.join(tmp.dir, 'runnel.db');
    bad = path.join(tmp.dir, 'broken.workflow.json');
    fs.writeFileSync(bad, JSON.stringify(MULTI_PROBLEM, null, 2));
  });
  afterEach(() => tmp.cleanup());

  const filesIn = (dir: string) => fs.readdirSync(dir).sort();

  it.each(['validate', 'deploy', 'run'])(
    '%s of a multi-problem file prints every problem, one per line, and creates no database',
    async (cmd) => {
      const r = await runCli(cmd, bad, '--db', db);
      expect(r.code).toBe(2);
      const lines = r.stderr.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^error: INVALID_WORKFLOW: .*broken\.workflow\.json: \d+ problems$/);
      for (const expected of EXPECTED_LINES)
        expect(
          lines.filter((l) => l.includes(expected)),
          expected,
        ).toHaveLength(1);
      expect(lines.length - 1).toBe(Number(/(\d+) problems/.exec(lines[0] ?? '')?.[1]));
      expect(r.stdout).toBe('');
      expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
      expect(fs.existsSync(db)).toBe(false);
    },
  );

  it('deploy of an invalid file into an existing database adds no workflow row', async () => {
    expect((await runCli('init', '--db', db)).code).toBe(0);
    expect((await runCli('deploy', bad, '--db', db)).code).toBe(2);
    const raw = new Database(db, { readonly: true });
    try {
      expect((raw.prepare('SELECT count(*) AS n FROM workflow').get() as { n: number }).n).toBe(0);
    } finally {
      raw.close();
    }
  });

  it('validate --json reports the problems as data', async () => {
    const r = await runCli('validate', bad, '--json');
    expect(r.code).toBe(2);
    const out = parseJson<{
      ok: boolean;
      problems: Array<{ code: string; nodeId?: string; edgeId?: string }>;
    }>(r);
    expect(out.ok).toBe(false);
    expect(out.problems.map((p) => p.code)).toEqual(
      expect.arrayContaining([
        'UNKNOWN_TYPE',
        'DUPLICATE_ID',
        'UNKNOWN_NODE',
        'SELF_LOOP',
        'CYCLE',
        'INVALID_CONFIG',
        'EXPRESSION_PARSE',
        'RETRY_OUT_OF_RANGE',
      ]),
    );
    // the report is the answer: the problems are not printed again as an error
    expect(r.stderr).toBe('');
  });

  it('a syntax error names the file, line and column', async () => {
    fs.writeFileSync(bad, '{\n  "name": "x",\n  "nodes": [,]\n}\n');
    const r = await runCli('run', bad, '--db', db);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error: INVALID_WORKFLOW: .*broken\.workflow\.json:3:13: invalid JSON/);
    expect(fs.existsSync(db)).toBe(false);
  });

  it.each([
    ['not JSON', '{deviceId: 1}', /^error: INVALID_INPUT: --vars is not valid JSON: /],
    ['an array', '[1, 2]', /^error: INVALID_INPUT: --vars must be a JSON object .*got an array/],
    ['a string', '"dev-01"', /^error: INVALID_INPUT: --vars must be a JSON object .*got a string/],
    ['null', 'null', /^error: INVALID_INPUT: --vars must be a JSON object .*got null/],
  ])('--vars that is %s exits 2 naming --vars, and creates no database', async (_what, vars, message) => {
    const r = await runCli('run', PURCHASE, '--db', db, '--vars', vars);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(fs.existsSync(db)).toBe(false);
  });

  it('--vars-file problems name --vars-file; a missing file too', async () => {
    const f = path.join(tmp.dir, 'vars.json');
    fs.writeFileSync(f, '[]');
    const r = await runCli('run', PURCHASE, '--db', db, '--vars-file', f);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error: INVALID_INPUT: --vars-file must be a JSON object/);
    const missing = await runCli('run', PURCHASE, '--db', db, '--vars-file', path.join(tmp.dir, 'nope.json'));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^error: INVALID_INPUT: --vars-file: cannot read /);
    expect(fs.existsSync(db)).toBe(false);
  });

  it('variables that fail the inputSchema name the field (exit 2)', async () => {
    const r = await runCli(
      'run',
      example('ota-upgrade.workflow.json'),
      '--db',
      db,
      '--vars',
      '{"deviceId":"dev-01"}',
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error: INVALID_VARIABLES: .*baseUrl/);
  });

  it.each([
    ['show', '1'],
    ['show', '1', '--history'],
    ['list'],
    ['start', 'purchase-approval'],
    ['worker', '--until-idle'],
    ['resume', '1', '--action', 'retry'],
    ['approve', '1', 'approve', '--approve'],
    ['cancel', '1'],
    ['export', 'purchase-approval'],
  ])('%s on a missing database exits 2 and creates no file', async (...args) => {
    const r = await runCli(...args, '--db', db);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `error: NOT_FOUND: database file ${db} does not exist (run "npx runnel init" or pass --db)\n`,
    );
    expect(filesIn(tmp.dir)).toEqual(['broken.workflow.json']);
  });

  it.each([['show', '1'], ['list'], ['run', PURCHASE], ['deploy', PURCHASE], ['init'], ['demo']])(
    '%s on a corrupt database file exits 2 with a clear message and leaves its bytes unchanged',
    async (...args) => {
      const bytes = crypto.randomBytes(8192);
      fs.writeFileSync(db, bytes);
      const r = await runCli(...args, '--db', db);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(
        /^error: DATABASE_CORRUPT: .*runnel\.db is not a Runnel database: the file is not SQLite or is damaged .*nothing was written\n$/,
      );
      expect(fs.readFileSync(db).equals(bytes)).toBe(true);
      expect(filesIn(tmp.dir)).toEqual(['broken.workflow.json', 'runnel.db']);
    },
  );

  it('refuses a SQLite file of another application instead of adding tables to it', async () => {
    const other = new Database(db);
    other.exec('CREATE TABLE contacts (id INTEGER PRIMARY KEY, name TEXT)');
    other.close();
    const before = fs.readFileSync(db);
    const r = await runCli('deploy', PURCHASE, '--db', db);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error: DATABASE_CORRUPT: .* is a SQLite database but not a Runnel one/);
    expect(fs.readFileSync(db).equals(before)).toBe(true);
  });

  it('a --db in a missing directory is a clear error, not a crash', async () => {
    const r = await runCli('init', '--db', path.join(tmp.dir, 'no', 'such', 'dir', 'x.db'));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error: NOT_FOUND: cannot create .*x\.db: directory .* does not exist\n$/);
  });

  it('bad usage exits 2: unknown command or option, a missing argument, a bad number or choice', async () => {
    const cases: string[][] = [
      ['frobnicate'],
      ['list', '--colour'],
      ['run'],
      ['list', '--limit', 'ten', '--db', db],
      ['list', '--limit', '5000', '--db', db],
      ['show', 'abc', '--db', db],
      ['resume', '1', '--db', db],
      ['resume', '1', '--action', 'rewind', '--db', db],
      ['start', 'x', '--version', '0', '--db', db],
      ['start', 'x', '--priority', 'high', '--db', db],
      ['start', 'x', '--priority', '1.5', '--db', db],
      ['run', PURCHASE, '--sync', 'off', '--db', db],
      [],
    ];
    for (const args of cases) {
      const r = await runCli(...args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(/error|Usage/);
    }
    expect(fs.existsSync(db)).toBe(false);
  });

  it('--help and --version exit 0', async () => {
    const help = await runCli('--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: runnel');
    const runHelp = await runCli('run', '--help');
    expect(runHelp.code).toBe(0);
    expect(runHelp.stdout).toContain('--db <file|url>');
    expect(runHelp.stdout).toContain('--sync <mode>');
    expect((await runCli('--version')).stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('unknown ids exit 2 with NOT_FOUND', async () => {
    expect((await runCli('init', '--db', db)).code).toBe(0);
    const show = await runCli('show', '42', '--db', db);
    expect(show.code).toBe(2);
    expect(show.stderr).toBe('error: NOT_FOUND: instance 42 does not exist\n');
    const exp = await runCli('export', 'nope', '--db', db);
    expect(exp.code).toBe(2);
    expect(exp.stderr).toBe('error: NOT_FOUND: workflow "nope" does not exist\n');
  });

  it('with --json an error is one JSON line on stderr (its code, message and problems), stdout empty, the exit code the same', async () => {
    expect((await runCli('init', '--db', db)).code).toBe(0);
    const show = await runCli('show', '42', '--json', '--db', db);
    expect([show.code, show.stdout]).toEqual([2, '']);
    expect(show.stderr.endsWith('\n') && show.stderr.split('\n').length).toBe(2);
    expect(JSON.parse(show.stderr)).toEqual({ error: { code: 'NOT_FOUND', message: 'instance 42 does not exist' } });
    const deploy = await runCli('deploy', bad, '--db', db, '--json');
    expect([deploy.code, deploy.stdout]).toEqual([2, '']);
    const { error } = JSON.parse(deploy.stderr) as { error: { code: string; problems: { code: string; message: string }[] } };
    expect(error.code).toBe('INVALID_WORKFLOW');
    const lines = error.problems.map((p) => `${p.code} ${p.message}`);
    expect(lines).toHaveLength(EXPECTED_LINES.length);
    expect(EXPECTED_LINES.filter((e) => !lines.some((l) => l.startsWith(e)))).toEqual([]);
    // usage errors too: a missing argument, an unknown command
    for (const args of [['cancel', '--json', '--db', db], ['frobnicate', '--json']]) {
      const usage = await runCli(...args);
      expect([usage.code, usage.stdout]).toEqual([2, '']);
      expect(usage.stderr.split('\n')).toHaveLength(2);
      expect((JSON.parse(usage.stderr) as { error: { code: string; message: string } }).error).toMatchObject({
        code: 'BAD_REQUEST',
        message: expect.stringMatching(/^(missing required argument 'id'|unknown command 'frobnicate')$/),
      });
    }
  });
});

describe('runnel: refusals write nothing', () => {
  let tmp: ReturnType<typeof tempDir>;
  let db: string;
  let appr: string;
  beforeEach(() => {
    tmp = tempDir();
    db = path.join(tmp.dir, 'r.db');
    appr = path.join(tmp.dir, 'appr.yaml');
    fs.writeFileSync(appr, APPROVAL_YAML);
  });
  afterEach(() => tmp.cleanup());

  it('run with --vars failing the inputSchema exits 2 before any database is created or deployed to', async () => {
    const r = await runCli('run', appr, '--db', db, '--vars', '{"amount":-1}');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error: INVALID_VARIABLES: variables do not match the inputSchema of appr: amount must be >= 0/);
    expect(fs.existsSync(db)).toBe(false);
    // and into an existing database nothing is deployed
    expect((await runCli('init', '--db', db)).code).toBe(0);
    expect((await runCli('run', appr, '--db', db, '--vars', '{}')).code).toBe(2);
    const raw = new Database(db, { readonly: true });
    try {
      expect(raw.prepare('SELECT count(*) AS n FROM workflow').get()).toEqual({ n: 0 });
    } finally {
      raw.close();
    }
    // and good variables still run
    expect((await runCli('run', appr, '--db', db, '--vars', '{"amount":5}')).code).toBe(0);
  });

  it.each([['list'], ['show', '1'], ['export', 'appr'], ['start', 'appr'], ['worker', '--until-idle']])(
    '%s on a 0-byte file says "not a Runnel database (empty file)", exits 2 and leaves it empty',
    async (...args) => {
      fs.writeFileSync(db, '');
      const r = await runCli(...args, '--db', db);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('not a Runnel database (empty file)');
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect(fs.statSync(db).size).toBe(0);
    },
  );

  it('export -o into a missing directory exits 2 naming the path, and writes nothing', async () => {
    expect((await runCli('run', appr, '--db', db, '--vars', '{"amount":5}')).code).toBe(0);
    const target = path.join(tmp.dir, 'nonexistent', 'dir', 'x.json');
    const r = await runCli('export', 'appr', '--db', db, '-o', target);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(target);
    expect(r.stderr).toContain('does not exist');
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(fs.existsSync(path.join(tmp.dir, 'nonexistent'))).toBe(false);
    const onDir = await runCli('export', 'appr', '--db', db, '-o', tmp.dir);
    expect(onDir.code).toBe(2);
    expect(onDir.stderr).toContain('it is a directory');
  });
});

describe('runnel: numbers too large for an id or a count', () => {
  it('say they are too large (above 2^53−1), not that they are not positive integers, before opening anything', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const db = path.join(dir, 'none.db');
      for (const args of [['show', '99999999999999999999'], ['cancel', '9007199254740992'], ['list', '--before', '99999999999999999999'], ['list', '--limit', '1e3']]) {
        const r = await runCli(...args, '--db', db);
        expect(r.code, args.join(' ')).toBe(2);
        if (args.includes('1e3')) expect(r.stderr).toContain('--limit must be a positive integer (got "1e3")');
        else expect(r.stderr).toMatch(/(an instance id is|--before must be) at most 9007199254740991 \(2\^53−1\): "\d+" is too large/);
      }
      const zero = await runCli('show', '0', '--db', db);
      expect(zero.stderr).toContain('an instance id is a positive integer (got "0")');
      expect(fs.existsSync(db)).toBe(false);
    } finally {
      cleanup();
    }
  });
});

describe('runnel validate: a number above an integer field\'s limit', () => {
  it('is reported once per field, with the field\'s own limit (not also 2^53−1)', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const file = path.join(dir, 'big.workflow.json');
      fs.writeFileSync(
        file,
        '{"name":"big","retry":{"maxAttempts":1e23},"nodes":[{"id":"a","type":"pass","retry":{"maxAttempts":1e23},"timeoutMs":1e308},' +
          '{"id":"b","type":"delay","config":{"durationMs":1e300}}]}',
      );
      const r = await runCli('validate', file);
      expect(r.code).toBe(2);
      const lines = r.stderr.split('\n').filter((l) => l.startsWith('  '));
      expect(lines).toEqual([
        '  RETRY_OUT_OF_RANGE workflow: retry.maxAttempts must be at most 1000 (got 1e+23)',
        '  RETRY_OUT_OF_RANGE node "a": retry.maxAttempts must be at most 1000 (got 1e+23)',
        '  INVALID_FIELD node "a": timeoutMs must be at most 2592000000 (got 1e+308)',
        '  INVALID_CONFIG node "b": config.durationMs must be at most 31536000000 (got 1e+300)',
      ]);
    } finally {
      cleanup();
    }
  });
});
