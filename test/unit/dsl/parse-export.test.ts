import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { EngineError } from '../../../engine/errors';
import { parseWorkflowText } from '../../../engine/dsl/parse';
import {
  canonicalJson,
  definitionHash,
  exportWorkflow,
  normalizeWorkflow,
  sha256Hex,
} from '../../../engine/dsl/export';
import { assertValidWorkflow, type TypeCatalog, type TypeInfo } from '../../../engine/dsl/validate';

const types: Record<string, TypeInfo> = {
  pass: { configSchema: z.object({}).loose() },
  http: { configSchema: z.object({ url: z.string(), method: z.string().optional() }) },
  delay: { configSchema: z.object({ durationMs: z.number().int().min(0) }) },
};
const catalog: TypeCatalog = (type) => (Object.hasOwn(types, type) ? types[type] : undefined);

const JSON_TEXT = `{
  "name": "ota-upgrade",
  "description": "Push firmware to one device",
  "deadlineMs": 86400000,
  "inputSchema": { "type": "object", "required": ["deviceId"], "properties": { "deviceId": { "type": "string" } } },
  "nodes": [
    { "id": "check", "type": "http", "name": "Check version",
      "config": { "method": "GET", "url": "{{ baseUrl }}/devices/{{ deviceId }}" },
      "output": "device",
      "retry": { "maxAttempts": 5, "initialIntervalMs": 1000, "backoffCoefficient": 2, "maxIntervalMs": 60000 },
      "timeoutMs": 10000 },
    { "id": "flash", "type": "http", "config": { "method": "POST", "url": "{{ baseUrl }}/flash" },
      "compensate": { "type": "http", "config": { "method": "POST", "url": "{{ baseUrl }}/rollback" } } },
    { "id": "wait", "type": "delay", "config": { "durationMs": 5000 } }
  ],
  "edges": [
    { "from": "check", "to": "flash", "when": "device.body.version != targetVersion" },
    { "from": "flash", "to": "wait" }
  ],
  "ui": { "positions": { "check": { "x": 0, "y": 0 }, "flash": { "x": 240.5, "y": -80 } } }
}
`;

const YAML_TEXT = `# The same workflow, in YAML
name: ota-upgrade
description: Push firmware to one device
deadlineMs: 86400000
inputSchema:
  type: object
  required: [deviceId]
  properties:
    deviceId: { type: string }
nodes:
  - id: check
    type: http
    name: Check version
    config:
      method: GET
      url: "{{ baseUrl }}/devices/{{ deviceId }}"
    output: device
    retry: { maxAttempts: 5, initialIntervalMs: 1000, backoffCoefficient: 2, maxIntervalMs: 60000 }
    timeoutMs: 10000
  - id: flash
    type: http
    config: { method: POST, url: "{{ baseUrl }}/flash" }
    compensate:
      type: http
      config: { method: POST, url: "{{ baseUrl }}/rollback" }
  - id: wait
    type: delay
    config: { durationMs: 5000 }
edges:
  - from: check
    to: flash
    when: device.body.version != targetVersion
  - { from: flash, to: wait }
ui:
  positions:
    check: { x: 0, y: 0 }
    flash: { x: 240.5, y: -80 }
`;

function thrownBy(run: () => unknown): EngineError {
  let thrown: unknown;
  try {
    run();
  } catch (err) {
    thrown = err;
  }
  expect(thrown).toBeInstanceOf(EngineError);
  expect((thrown as EngineError).code).toBe('INVALID_WORKFLOW');
  return thrown as EngineError;
}

describe('parseWorkflowText', () => {
  it('gives the same workflow from YAML and JSON', () => {
    const fromJson = parseWorkflowText(JSON_TEXT, 'ota.workflow.json');
    const fromYaml = parseWorkflowText(YAML_TEXT, 'ota.workflow.yaml');
    expect(fromYaml).toEqual(fromJson);
    expect(assertValidWorkflow(fromYaml, catalog)).toEqual(assertValidWorkflow(fromJson, catalog));
  });

  it('sniffs the format when the file name does not tell', () => {
    expect(parseWorkflowText(JSON_TEXT)).toEqual(parseWorkflowText(YAML_TEXT, 'x.YML'));
    expect(parseWorkflowText(`\ufeff  ${JSON_TEXT}`, 'paste.txt')).toEqual(parseWorkflowText(YAML_TEXT));
  });

  it('reports a JSON syntax error with its line and column', () => {
    const err = thrownBy(() => parseWorkflowText('{\n  "name": "x",\n  "nodes": [oops]\n}', 'bad.json'));
    expect(err.message).toBe('bad.json:3:13: invalid JSON: unexpected "o"');
    expect(err.details).toEqual({ fileName: 'bad.json', format: 'JSON', line: 3, column: 13 });
    const trailing = thrownBy(() => parseWorkflowText('{ "name": "x", }', 'bad.json'));
    expect(trailing.message).toBe(
      'bad.json:1:16: invalid JSON: expected a double-quoted property name, found "}"',
    );
  });

  it('reports a YAML syntax error with its line and column', () => {
    const err = thrownBy(() => parseWorkflowText('name: x\nnodes: [a, b\nedges: []\n', 'bad.yaml'));
    expect(err.message).toMatch(/^bad\.yaml:\d+:\d+: invalid YAML: /u);
    const dup = thrownBy(() => parseWorkflowText('name: x\nname: y\n', 'dup.yaml'));
    expect(dup.message).toBe('dup.yaml:2:1: invalid YAML: Map keys must be unique');
  });

  it('refuses an alias bomb', () => {
    const levels = ['a: &a [x, x, x, x, x, x, x, x, x]'];
    for (const [prev, name] of [
      ['a', 'b'],
      ['b', 'c'],
      ['c', 'd'],
      ['d', 'e'],
      ['e', 'f'],
    ]) {
      levels.push(`${name}: &${name} [${Array(9).fill(`*${prev}`).join(', ')}]`);
    }
    const err = thrownBy(() => parseWorkflowText(levels.join('\n'), 'bomb.yaml'));
    expect(err.message).toMatch(/too many alias expansions/u);
  });

  it('does not turn YAML tags into non-JSON values', () => {
    const err = thrownBy(() => parseWorkflowText('name: !!binary aGVsbG8=\n', 'tag.yaml'));
    expect(err.message).toMatch(/^tag\.yaml:1:7: invalid YAML: /u);
  });
});

describe('duplicate keys in JSON input', () => {
  it('are refused like YAML’s, naming the key and the line', () => {
    const text = '{\n  "name": "w",\n  "nodes": [\n    { "id": "a", "type": "pass", "id": "b" }\n  ]\n}\n';
    const err = thrownBy(() => parseWorkflowText(text, 'w.json'));
    expect(err.code).toBe('INVALID_WORKFLOW');
    expect(err.message).toMatch(/^w\.json:4:\d+: invalid JSON: duplicate key "id"/);
    expect(err.details).toMatchObject({ line: 4, format: 'JSON' });
    const top = thrownBy(() => parseWorkflowText('{"name":"a","nodes":[],"name":"b"}'));
    expect(top.message).toContain('duplicate key "name"');
  });

  it('equal keys in different objects are fine', () => {
    expect(parseWorkflowText('{"a":{"id":1},"b":{"id":2}}', 'w.json')).toEqual({ a: { id: 1 }, b: { id: 2 } });
  });
});

describe('export', () => {
  it('keeps a key named like an Object.prototype member (the designer keeps unknown keys as given)', () => {
    const raw = JSON.parse(
      '{"name":"w","constructor":1,"nodes":[{"id":"toString","type":"pass","valueOf":2}],"edges":[],"ui":{"positions":{"toString":{"x":1,"y":2}}}}',
    ) as Parameters<typeof exportWorkflow>[0];
    const out = exportWorkflow(raw) as unknown as Record<string, unknown>;
    expect(out['constructor']).toBe(1);
    expect(out['nodes']).toEqual([{ id: 'toString', type: 'pass', valueOf: 2 }]);
    expect(out['ui']).toEqual({ positions: { toString: { x: 1, y: 2 } } });
  });

  it('is stable across import → export → import, ui positions included', () => {
    const first = assertValidWorkflow(parseWorkflowText(YAML_TEXT, 'ota.yaml'), catalog);
    const exported = exportWorkflow(first);
    const text = canonicalJson(exported);
    const second = assertValidWorkflow(parseWorkflowText(text, 'ota.json'), catalog);
    expect(second).toEqual(first);
    expect(exportWorkflow(second)).toEqual(exported);
    expect(second.ui?.positions).toEqual({ check: { x: 0, y: 0 }, flash: { x: 240.5, y: -80 } });
    expect(normalizeWorkflow(parseWorkflowText(text))).toEqual(
      normalizeWorkflow(parseWorkflowText(JSON_TEXT)),
    );
  });

  it('keeps emoji and CJK ids and names through a round trip', () => {
    const raw = {
      name: '固件升级 🚀',
      nodes: [
        { id: '検査', type: 'pass', name: 'チェック ✅' },
        { id: '👩‍💻', type: 'pass', name: 'Dev 👩🏽‍💻' },
      ],
      edges: [{ from: '検査', to: '👩‍💻' }],
      ui: { positions: { 検査: { x: 1, y: 2 }, '👩‍💻': { x: 3, y: 4 } } },
    };
    const wf = assertValidWorkflow(raw, catalog);
    const again = assertValidWorkflow(
      parseWorkflowText(canonicalJson(exportWorkflow(wf)), 'u.json'),
      catalog,
    );
    expect(again).toEqual(wf);
    expect(again.nodes.map((n) => [n.id, n.name])).toEqual([
      ['検査', 'チェック ✅'],
      ['👩‍💻', 'Dev 👩🏽‍💻'],
    ]);
    expect(again.ui?.positions?.['👩‍💻']).toEqual({ x: 3, y: 4 });
  });

  it('exports keys in reading order without adding fields', () => {
    const wf = assertValidWorkflow({ nodes: [{ type: 'pass', id: 'a' }], name: 'n' }, catalog);
    expect(JSON.stringify(exportWorkflow(wf))).toBe(
      '{"name":"n","nodes":[{"id":"a","type":"pass"}],"edges":[]}',
    );
  });

  it('writes canonical JSON: sorted keys, 2-space indent, trailing newline', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { z: 1, y: 2 }], c: undefined } })).toBe(
      '{\n  "a": {\n    "d": [\n      2,\n      {\n        "y": 2,\n        "z": 1\n      }\n    ]\n  },\n  "b": 1\n}\n',
    );
  });

  it('hashes the definition without ui, so moving a node is not a new version', () => {
    const wf = assertValidWorkflow(parseWorkflowText(JSON_TEXT), catalog);
    const moved = { ...wf, ui: { positions: { check: { x: 500, y: 500 } } } };
    const changed = { ...wf, description: 'Push firmware to every device' };
    const hash = definitionHash(wf);
    expect(hash).toMatch(/^[0-9a-f]{64}$/u);
    expect(definitionHash(moved)).toBe(hash);
    expect(definitionHash(changed)).not.toBe(hash);
    // Restating defaults and reordering keys keep the meaning, and the hash.
    const restated = {
      format: 1 as const,
      ...wf,
      edges: wf.edges.map((e) => ({ on: 'success' as const, id: `${e.from}->${e.to}`, ...e })),
    };
    expect(definitionHash(restated)).toBe(hash);
    expect(definitionHash(assertValidWorkflow(parseWorkflowText(YAML_TEXT), catalog))).toBe(hash);
  });

  it('computes SHA-256 correctly, multi-byte text included', () => {
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256Hex('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq')).toBe(
      '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
    );
    for (const text of [
      '🚀',
      '検査 ✅',
      'a'.repeat(1000),
      'x'.repeat(55),
      'x'.repeat(56),
      'x'.repeat(64),
      JSON_TEXT,
    ]) {
      expect(sha256Hex(text)).toBe(createHash('sha256').update(text, 'utf8').digest('hex'));
    }
  });
});
