import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { EngineError } from '../../../engine/errors';
import type { WorkflowInput } from '../../../engine/dsl/schema';
import {
  assertValidWorkflow,
  formatProblems,
  validateWorkflow,
  type Problem,
  type TypeCatalog,
  type TypeInfo,
} from '../../../engine/dsl/validate';

const types: Record<string, TypeInfo> = {
  pass: { configSchema: z.object({}).loose() },
  http: { configSchema: z.object({ url: z.string(), method: z.string().optional() }) },
  delay: { configSchema: z.object({ durationMs: z.number().int().min(0) }) },
  script: { configSchema: z.object({ code: z.string() }), templates: false },
};
const catalog: TypeCatalog = (type) => (Object.hasOwn(types, type) ? types[type] : undefined);

/** The DESIGN.md section 3 example: valid. */
function example(): WorkflowInput {
  return {
    name: 'ota-upgrade',
    description: 'Push firmware to one device',
    deadlineMs: 86_400_000,
    inputSchema: { type: 'object', required: ['deviceId'], properties: { deviceId: { type: 'string' } } },
    nodes: [
      {
        id: 'check',
        type: 'http',
        name: 'Check version',
        config: { method: 'GET', url: '{{ baseUrl }}/devices/{{ deviceId }}' },
        output: 'device',
        retry: { maxAttempts: 5, initialIntervalMs: 1000, backoffCoefficient: 2, maxIntervalMs: 60_000 },
        timeoutMs: 10_000,
      },
      {
        id: 'flash',
        type: 'http',
        config: { method: 'POST', url: '{{ baseUrl }}/flash' },
        compensate: { type: 'http', config: { method: 'POST', url: '{{ baseUrl }}/rollback' } },
      },
      { id: 'wait', type: 'delay', config: { durationMs: 5000 } },
    ],
    edges: [
      { from: 'check', to: 'flash', when: 'device.body.version != targetVersion' },
      { from: 'flash', to: 'wait' },
    ],
    ui: { positions: { check: { x: 0, y: 0 } } },
  };
}

/** The example with `change` applied to a deep copy. */
function variant(
  change: (
    wf: Record<string, unknown> & { nodes: Record<string, unknown>[]; edges: Record<string, unknown>[] },
  ) => void,
): unknown {
  const wf = JSON.parse(JSON.stringify(example())) as Parameters<typeof change>[0];
  change(wf);
  return wf;
}

function problemsOf(raw: unknown): Problem[] {
  const result = validateWorkflow(raw, catalog);
  expect(result.ok).toBe(false);
  return result.problems;
}

function only(raw: unknown, code: string): Problem {
  const problems = problemsOf(raw);
  const matching = problems.filter((p) => p.code === code);
  expect(matching, formatProblems(problems)).toHaveLength(1);
  return matching[0] as Problem;
}

describe('validateWorkflow: a valid workflow', () => {
  it('passes the DESIGN.md example and applies defaults', () => {
    const result = validateWorkflow(example(), catalog);
    expect(result.problems).toEqual([]);
    expect(result.ok).toBe(true);
    if (result.ok) expect(result.workflow.edges).toHaveLength(2);
    const noEdges = validateWorkflow({ name: 'one', nodes: [{ id: 'a', type: 'pass' }] }, catalog);
    expect(noEdges.ok && noEdges.workflow.edges).toEqual([]);
  });

  it('accepts emoji and CJK ids and names', () => {
    const result = validateWorkflow(
      {
        name: '固件升级 🚀',
        nodes: [
          { id: '検査', type: 'pass', name: 'チェック ✅' },
          { id: '🚀', type: 'pass' },
          { id: '👩‍💻', type: 'pass' },
        ],
        edges: [
          { from: '検査', to: '🚀' },
          { from: '🚀', to: '👩‍💻' },
        ],
      },
      catalog,
    );
    expect(result.problems).toEqual([]);
  });
});

describe('validateWorkflow: one test per problem kind, naming the node or edge', () => {
  it('INVALID_FIELD: a field of the wrong type', () => {
    const p = only(
      variant((wf) => {
        (wf.nodes[0] as Record<string, unknown>)['timeoutMs'] = '10s';
      }),
      'INVALID_FIELD',
    );
    expect(p.nodeId).toBe('check');
    expect(p.path).toEqual(['nodes', 0, 'timeoutMs']);
    expect(p.message).toBe('node "check": timeoutMs must be a number (got "10s")');
  });

  it('MISSING_FIELD: a required field is absent', () => {
    const p = only(
      variant((wf) => {
        delete wf.nodes[2]?.['type'];
      }),
      'MISSING_FIELD',
    );
    expect(p.nodeId).toBe('wait');
    expect(p.message).toBe('node "wait": type is required');
  });

  it('UNKNOWN_FIELD: a typo in a field name', () => {
    const p = only(
      variant((wf) => {
        (wf.nodes[1] as Record<string, unknown>)['retyr'] = { maxAttempts: 2 };
      }),
      'UNKNOWN_FIELD',
    );
    expect(p.nodeId).toBe('flash');
    expect(p.path).toEqual(['nodes', 1, 'retyr']);
    expect(p.message).toBe('node "flash": unknown field "retyr"');
  });

  it('DUPLICATE_ID: two nodes with one id', () => {
    const p = only(
      variant((wf) => {
        (wf.nodes[2] as Record<string, unknown>)['id'] = 'check';
      }),
      'DUPLICATE_ID',
    );
    expect(p.nodeId).toBe('check');
    expect(p.path).toEqual(['nodes', 2, 'id']);
  });

  it('DUPLICATE_ID: two edges with one explicit id', () => {
    const p = only(
      variant((wf) => {
        wf.edges[0] = { ...wf.edges[0], id: 'go' };
        wf.edges[1] = { ...wf.edges[1], id: 'go' };
      }),
      'DUPLICATE_ID',
    );
    expect(p.edgeId).toBe('go');
    expect(p.path).toEqual(['edges', 1, 'id']);
  });

  it('INVALID_ID: an id with a space or a slash', () => {
    const node = only(
      variant((wf) => {
        (wf.nodes[2] as Record<string, unknown>)['id'] = 'wait here';
        wf.edges[1] = { from: 'flash', to: 'wait here' };
      }),
      'INVALID_ID',
    );
    expect(node.nodeId).toBe('wait here');
    expect(node.path).toEqual(['nodes', 2, 'id']);
    const edge = only(
      variant((wf) => {
        wf.edges[1] = { ...wf.edges[1], id: 'a/b' };
      }),
      'INVALID_ID',
    );
    expect(edge.edgeId).toBe('a/b');
  });

  it('UNKNOWN_NODE: an edge to a node that does not exist', () => {
    const p = only(
      variant((wf) => {
        wf.edges.push({ from: 'wait', to: 'nowhere' });
      }),
      'UNKNOWN_NODE',
    );
    expect(p.edgeId).toBe('wait->nowhere');
    expect(p.path).toEqual(['edges', 2, 'to']);
    expect(p.message).toBe('edge "wait->nowhere": to "nowhere" is not a node');
  });

  it('SELF_LOOP: an edge from a node to itself', () => {
    const p = only(
      variant((wf) => {
        wf.edges.push({ from: 'wait', to: 'wait' });
      }),
      'SELF_LOOP',
    );
    expect(p.edgeId).toBe('wait->wait');
    expect(p.nodeId).toBe('wait');
  });

  it('CYCLE: reported with its path', () => {
    const p = only(
      variant((wf) => {
        wf.edges.push({ from: 'wait', to: 'check', on: 'error' });
      }),
      'CYCLE',
    );
    expect(p.nodeId).toBe('check');
    expect(p.edgeId).toBe('wait-!>check');
    expect(p.message).toBe('node "check": cycle check → flash → wait → check');
  });

  it('NO_ENTRY_NODE: an empty node list', () => {
    const p = only({ name: 'empty', nodes: [] }, 'NO_ENTRY_NODE');
    expect(p.path).toEqual(['nodes']);
    expect(p.nodeId).toBeUndefined();
  });

  it('NO_ENTRY_NODE: every node has an incoming edge', () => {
    const problems = problemsOf({
      name: 'ring',
      nodes: [
        { id: 'a', type: 'pass' },
        { id: 'b', type: 'pass' },
      ],
      edges: [
        { from: 'a', to: 'b' },
        { from: 'b', to: 'a' },
      ],
    });
    expect(problems.map((p) => p.code).sort()).toEqual(['CYCLE', 'NO_ENTRY_NODE']);
    expect(problems.find((p) => p.code === 'CYCLE')?.message).toBe('node "a": cycle a → b → a');
  });

  it('UNKNOWN_TYPE: a node type and a compensation type', () => {
    const node = only(
      variant((wf) => {
        (wf.nodes[0] as Record<string, unknown>)['type'] = 'htp';
      }),
      'UNKNOWN_TYPE',
    );
    expect(node.nodeId).toBe('check');
    expect(node.message).toBe('node "check": type "htp" is not a known node type (not built in, and no loaded plug-in registers it)');
    const comp = only(
      variant((wf) => {
        (wf.nodes[1] as Record<string, unknown>)['compensate'] = { type: 'rollback' };
      }),
      'UNKNOWN_TYPE',
    );
    expect(comp.nodeId).toBe('flash');
    expect(comp.path).toEqual(['nodes', 1, 'compensate', 'type']);
  });

  it('INVALID_CONFIG: config failing the type schema, for the node and its compensation', () => {
    const node = only(
      variant((wf) => {
        (wf.nodes[0] as Record<string, unknown>)['config'] = { method: 'GET' };
      }),
      'INVALID_CONFIG',
    );
    expect(node.nodeId).toBe('check');
    expect(node.path).toEqual(['nodes', 0, 'config', 'url']);
    expect(node.message).toBe('node "check": config.url is required');
    const comp = only(
      variant((wf) => {
        (wf.nodes[1] as Record<string, unknown>)['compensate'] = { type: 'http', config: { url: 5 } };
      }),
      'INVALID_CONFIG',
    );
    expect(comp.nodeId).toBe('flash');
    expect(comp.message).toBe('node "flash": compensate.config.url must be a string (got 5)');
  });

  it('UNKNOWN_TYPE for a name a naive catalog would find on Object.prototype', () => {
    const naive: TypeCatalog = (type) => (types as Record<string, TypeInfo | undefined>)[type];
    const result = validateWorkflow({ name: 'p', nodes: [{ id: 'a', type: 'constructor' }] }, naive);
    expect(result.problems.map((p) => [p.code, p.nodeId])).toEqual([['UNKNOWN_TYPE', 'a']]);
  });

  it('INVALID_CONFIG is not raised for a template standing in for a typed value', () => {
    const ok = variant((wf) => {
      (wf.nodes[2] as Record<string, unknown>)['config'] = { durationMs: '{{ pauseMs }}' };
    });
    expect(validateWorkflow(ok, catalog).problems).toEqual([]);
    const notATemplate = only(
      variant((wf) => {
        (wf.nodes[2] as Record<string, unknown>)['config'] = { durationMs: 'five seconds' };
      }),
      'INVALID_CONFIG',
    );
    expect(notATemplate.nodeId).toBe('wait');
  });

  it('EXPRESSION_PARSE: an edge when', () => {
    const p = only(
      variant((wf) => {
        wf.edges[0] = { from: 'check', to: 'flash', when: 'device.body.version !=' };
      }),
      'EXPRESSION_PARSE',
    );
    expect(p.edgeId).toBe('check->flash');
    expect(p.path).toEqual(['edges', 0, 'when']);
    expect(p.message).toMatch(/^edge "check->flash": when does not parse: .+ \(at character \d+\)$/u);
  });

  it('EXPRESSION_PARSE: node input and output expressions', () => {
    const problems = problemsOf(
      variant((wf) => {
        (wf.nodes[0] as Record<string, unknown>)['input'] = '{"id": deviceId';
        (wf.nodes[1] as Record<string, unknown>)['output'] = '{"flashed": $result.ok';
      }),
    );
    expect(problems.map((p) => [p.code, p.nodeId, p.path.at(-1)])).toEqual([
      ['EXPRESSION_PARSE', 'check', 'input'],
      ['EXPRESSION_PARSE', 'flash', 'output'],
    ]);
  });

  it('EXPRESSION_PARSE: a {{ }} template in config, but not for types without templates', () => {
    const p = only(
      variant((wf) => {
        (wf.nodes[1] as Record<string, unknown>)['config'] = { url: '{{ baseUrl & }}/flash' };
      }),
      'EXPRESSION_PARSE',
    );
    expect(p.nodeId).toBe('flash');
    expect(p.path).toEqual(['nodes', 1, 'config', 'url']);
    const script = validateWorkflow(
      { name: 's', nodes: [{ id: 'js', type: 'script', config: { code: 'return `{{ not jsonata (`;' } }] },
      catalog,
    );
    expect(script.problems).toEqual([]);
  });

  it('RETRY_OUT_OF_RANGE: a retry number out of range, named with its value', () => {
    const p = only(
      variant((wf) => {
        (wf.nodes[0] as { retry: Record<string, unknown> }).retry['maxAttempts'] = 0;
      }),
      'RETRY_OUT_OF_RANGE',
    );
    expect(p.nodeId).toBe('check');
    expect(p.path).toEqual(['nodes', 0, 'retry', 'maxAttempts']);
    expect(p.message).toBe('node "check": retry.maxAttempts must be at least 1 (got 0)');
  });

  it('RETRY_OUT_OF_RANGE: maxIntervalMs below initialIntervalMs, own or inherited', () => {
    const own = only(
      variant((wf) => {
        (wf.nodes[0] as Record<string, unknown>)['retry'] = { initialIntervalMs: 5000, maxIntervalMs: 1000 };
      }),
      'RETRY_OUT_OF_RANGE',
    );
    expect(own.nodeId).toBe('check');
    expect(own.message).toBe(
      'node "check": retry.maxIntervalMs (1000) must be at least retry.initialIntervalMs (5000)',
    );
    const inherited = only(
      variant((wf) => {
        (wf.nodes[2] as Record<string, unknown>)['retry'] = { initialIntervalMs: 120_000 };
      }),
      'RETRY_OUT_OF_RANGE',
    );
    expect(inherited.nodeId).toBe('wait');
    expect(inherited.message).toBe(
      'node "wait": retry.maxIntervalMs (60000, the default) must be at least retry.initialIntervalMs (120000)',
    );
  });

  it('DUPLICATE_EDGE: the same connection twice', () => {
    const p = only(
      variant((wf) => {
        wf.edges.push({ id: 'again', from: 'flash', to: 'wait' });
      }),
      'DUPLICATE_EDGE',
    );
    expect(p.edgeId).toBe('again');
    expect(p.message).toBe('edge "again": repeats edges[1] (same from, to and on)');
  });

  it('an error edge beside a success edge between the same nodes is not a duplicate', () => {
    const ok = variant((wf) => {
      wf.edges.push({ from: 'flash', to: 'wait', on: 'error' });
    });
    expect(validateWorkflow(ok, catalog).problems).toEqual([]);
  });

  it('INVALID_INPUT_SCHEMA: an inputSchema that is not a JSON Schema', () => {
    const p = only(
      variant((wf) => {
        wf['inputSchema'] = { deviceId: 'string' };
      }),
      'INVALID_INPUT_SCHEMA',
    );
    expect(p.path).toEqual(['inputSchema']);
  });

  it('a value that is not an object at all', () => {
    const problems = problemsOf('ota-upgrade');
    expect(problems).toEqual([
      { code: 'INVALID_FIELD', message: 'workflow must be an object (got "ota-upgrade")', path: [] },
    ]);
  });
});

describe('validateWorkflow: every problem at once', () => {
  it('reports all problems of a workflow with many, each naming its node or edge', () => {
    const raw = {
      name: 'broken',
      nodes: [
        { id: 'start', type: 'http', config: {}, retry: { maxAttempts: 0 } },
        { id: 'start', type: 'pass' },
        { id: 'bad id', type: 'nope' },
        { id: 'b', type: 'pass', output: '{"x": ' },
        { id: 'c', type: 'pass', retyr: {} },
      ],
      edges: [
        { from: 'b', to: 'c', when: '((' },
        { from: 'c', to: 'b' },
        { from: 'start', to: 'ghost' },
        { from: 'b', to: 'b' },
        { from: 'start', to: 'b' },
        { id: 'dup', from: 'start', to: 'b' },
      ],
    };
    const problems = problemsOf(raw);
    const seen = problems.map((p) => `${p.code} ${p.nodeId ?? ''} ${p.edgeId ?? ''}`.trim()).sort();
    expect(seen).toEqual(
      [
        'CYCLE b c->b',
        'DUPLICATE_EDGE  dup',
        'DUPLICATE_ID start',
        'EXPRESSION_PARSE  b->c',
        'EXPRESSION_PARSE b',
        'INVALID_CONFIG start',
        'INVALID_ID bad id',
        'RETRY_OUT_OF_RANGE start',
        'SELF_LOOP b b->b',
        'UNKNOWN_FIELD c',
        'UNKNOWN_NODE  start->ghost',
        'UNKNOWN_TYPE bad id',
      ].sort(),
    );
    const result = validateWorkflow(raw, catalog);
    expect(result.ok === false && result.workflow).toBeUndefined();
  });

  it('still returns the parsed workflow when only graph checks fail', () => {
    const result = validateWorkflow(
      variant((wf) => {
        wf.edges.push({ from: 'wait', to: 'check' });
      }),
      catalog,
    );
    expect(result.ok).toBe(false);
    expect(result.workflow?.name).toBe('ota-upgrade');
  });

  it('formats one line per problem and assertValidWorkflow throws them as details', () => {
    const raw = variant((wf) => {
      wf.edges.push({ from: 'wait', to: 'check' });
      (wf.nodes[0] as Record<string, unknown>)['type'] = 'htp';
    });
    const problems = problemsOf(raw);
    expect(formatProblems(problems).split('\n')).toEqual([
      'CYCLE node "check": cycle check → flash → wait → check',
      'NO_ENTRY_NODE workflow has no entry node: every node has an incoming edge, so nothing can start',
      'UNKNOWN_TYPE node "check": type "htp" is not a known node type (not built in, and no loaded plug-in registers it)',
    ]);
    let thrown: unknown;
    try {
      assertValidWorkflow(raw, catalog);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(EngineError);
    expect((thrown as EngineError).code).toBe('INVALID_WORKFLOW');
    expect((thrown as EngineError).details).toEqual(problems);
    expect((thrown as EngineError).message).toContain('3 problems');
    expect(assertValidWorkflow(example(), catalog).name).toBe('ota-upgrade');
  });
});
