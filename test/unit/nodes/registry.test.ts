import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { NodeRegistry, createDefaultRegistry } from '../../../engine/nodes/registry';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { NodeType, ThreadedNodeType } from '../../../engine/nodes/types';
import { validateWorkflow } from '../../../engine/dsl/validate';
import { thrownBy } from '../../helpers/engine-errors';

const BUILT_INS = ['pass', 'script', 'http', 'delay', 'approval', 'subworkflow', 'map', 'event'];

/** A small custom type, as a plug-in would write it. */
const greet: NodeType<{ name: string; loud: boolean }> = {
  type: 'acme.greet',
  title: 'Greet',
  description: 'Says hello',
  icon: 'smile',
  group: 'Acme',
  configSchema: z.strictObject({ name: z.string(), loud: z.boolean().default(false) }),
  execute: (ctx) => Promise.resolve({ output: `hello ${ctx.config.name}${ctx.config.loud ? '!' : ''}` }),
  compensate: () => Promise.resolve('said sorry'),
};


describe('node registry', () => {
  it('the default registry holds every built-in, in palette order', () => {
    const registry = createDefaultRegistry();
    expect(registry.list().map((t) => t.type)).toEqual(BUILT_INS);
    for (const name of BUILT_INS) expect(registry.has(name)).toBe(true);
    expect(registry.get('nope')).toBeUndefined();
    expect(registry.has('nope')).toBe(false);
  });

  it('describe() gives a JSON Schema of every built-in config, in input mode', () => {
    const described = createDefaultRegistry().describe();
    expect(described.map((d) => d.type)).toEqual(BUILT_INS);
    for (const d of described) {
      expect(d.title).not.toBe('');
      expect(d.configJsonSchema).toMatchObject({
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
      });
      expect(d.hasCompensate).toBe(false);
    }
    const byType = Object.fromEntries(described.map((d) => [d.type, d.configJsonSchema]));
    // input mode: fields with defaults are optional and show their default
    expect(byType.http).toMatchObject({
      required: ['url'],
      properties: { method: { default: 'GET', enum: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'] } },
      additionalProperties: false,
    });
    expect(byType.script).toMatchObject({
      required: ['code'],
      properties: { timeLimitMs: { default: 1000, maximum: 86_400_000 } },
    });
    expect(byType.delay).toMatchObject({ properties: { durationMs: { type: 'integer' } } });
    expect(byType.approval).toMatchObject({ properties: { prompt: { type: 'string' } } });
    expect(byType.pass).toMatchObject({ properties: { result: {} } });
    expect(byType.map).toMatchObject({ required: ['items', 'workflow'], properties: { maxConcurrency: { default: 10 }, toleratedFailures: { default: 0 } }, additionalProperties: false });
    expect(byType.subworkflow).toMatchObject({ required: ['workflow'], properties: { input: { type: 'string' } } });
    expect(byType.event).toMatchObject({ required: ['name'], properties: { key: { type: 'string' } } });
    // plain JSON: it crosses IPC and HTTP as is
    expect(JSON.parse(JSON.stringify(described))).toEqual(described);
  });

  it('describe() returns copies: a caller cannot change the next answer', () => {
    const registry = createDefaultRegistry();
    const first = registry.describe();
    (first[0]!.configJsonSchema as Record<string, unknown>).type = 'mutated';
    expect(registry.describe()[0]!.configJsonSchema.type).toBe('object');
  });

  it('registers a custom type that describe() and catalog() then show', async () => {
    const registry = createDefaultRegistry({ types: [greet as NodeType<unknown>] });
    expect(registry.get('acme.greet')).toBe(greet);
    const description = registry.describe().find((d) => d.type === 'acme.greet');
    expect(description).toMatchObject({
      group: 'Acme',
      hasCompensate: true,
      configJsonSchema: { required: ['name'] },
    });

    const entry = registry.catalog()('acme.greet');
    expect(entry?.configSchema.safeParse({ name: 'Ada' }).success).toBe(true);
    expect(entry?.configSchema.safeParse({}).success).toBe(false);
    expect(registry.catalog()('missing')).toBeUndefined();
    expect(registry.catalog()('script')?.templates).toBe(false);

    const type = registry.get('acme.greet')!;
    const config = type.configSchema.parse({ name: 'Ada', loud: true });
    expect(config).toEqual({ name: 'Ada', loud: true });
  });

  it('the catalog plugs into the DSL validator: unknown types and bad config are named', () => {
    const registry = new NodeRegistry().register(greet);
    const ok = validateWorkflow(
      { name: 'wf', nodes: [{ id: 'a', type: 'acme.greet', config: { name: 'Ada' } }] },
      registry.catalog(),
    );
    expect(ok.ok).toBe(true);
    const bad = validateWorkflow(
      {
        name: 'wf',
        nodes: [
          { id: 'a', type: 'acme.greet', config: { nme: 'Ada' } },
          { id: 'b', type: 'pass' },
        ],
      },
      registry.catalog(),
    );
    expect(bad.ok).toBe(false);
    expect(bad.problems.map((p) => [p.code, p.nodeId])).toEqual([
      ['INVALID_CONFIG', 'a'],
      ['INVALID_CONFIG', 'a'],
      ['UNKNOWN_TYPE', 'b'],
    ]);
    expect(bad.problems.map((p) => p.message).join('\n')).toMatch(/unknown field "nme"[\s\S]*type "pass"/);
  });

  it('the catalog sees types registered after it was taken', () => {
    const registry = new NodeRegistry();
    const catalog = registry.catalog();
    expect(catalog('acme.greet')).toBeUndefined();
    registry.register(greet);
    expect(catalog('acme.greet')).toBeDefined();
  });

  it('refuses a duplicate, naming it (a plug-in cannot replace a built-in)', () => {
    const registry = createDefaultRegistry();
    const err = thrownBy(() => registry.register({ ...greet, type: 'http' }));
    expect(err.code).toBe('INVALID_INPUT');
    expect(err.retryable).toBe(false);
    expect(err.message).toContain('"http"');
    expect(err.message).toMatch(/already registered/);
    expect(() => createDefaultRegistry({ types: [{ ...greet, type: 'pass' } as NodeType<unknown>] })).toThrow(
      /"pass"/,
    );
  });

  it('refuses bad names and malformed types, naming the type', () => {
    const registry = new NodeRegistry();
    for (const name of ['', 'Upper', '1digit', 'has space', 'ünï', 'a'.repeat(65), 'under_score']) {
      const err = thrownBy(() => registry.register({ ...greet, type: name }));
      expect(err.code).toBe('INVALID_INPUT');
      expect(err.message).toContain(JSON.stringify(name));
    }
    const noSchema = { ...greet, configSchema: { parse: () => ({}) } } as unknown as NodeType;
    expect(thrownBy(() => registry.register(noSchema)).message).toMatch(/zod schema/);
    const noExecute = { ...greet, execute: undefined } as unknown as NodeType;
    expect(thrownBy(() => registry.register(noExecute)).message).toMatch(/execute/);
    expect(thrownBy(() => registry.register({ ...greet, title: '' })).message).toMatch(/title/);
    expect(registry.list()).toEqual([]);
  });

  it('describe() leaves parts JSON Schema cannot express open instead of failing', () => {
    const registry = new NodeRegistry().register({
      type: 'acme.odd',
      title: 'Odd',
      description: 'Has fields JSON Schema cannot express',
      icon: 'help',
      group: 'Acme',
      configSchema: z.strictObject({ when: z.date().optional(), n: z.bigint().optional() }),
      execute: () => Promise.resolve({ output: null }),
    });
    const [description] = registry.describe();
    expect(description?.configJsonSchema).toMatchObject({ type: 'object', properties: { when: {}, n: {} } });
  });

  it('a threaded type (thread.module instead of execute) gets an execute that runs it in the pool; bad modules are refused', () => {
    const file = fileURLToPath(new URL('../../helpers/thread-node.ts', import.meta.url));
    const { execute: _execute, compensate: _compensate, ...base } = greet;
    const threaded: ThreadedNodeType<{ name: string; loud: boolean }> = { ...base, type: 'acme.cpu', thread: { module: file } };
    // given an absolute path: registered, with an execute built and the module as a file: URL
    const registry = new NodeRegistry().register(threaded);
    const type = registry.get('acme.cpu');
    expect(typeof type?.execute).toBe('function');
    expect(type?.thread).toEqual({ module: new URL(`file://${file}`).href });
    expect(registry.describe()[0]).toMatchObject({ type: 'acme.cpu', hasCompensate: false });
    // a URL object and a file: URL string are accepted too
    expect(new NodeRegistry().register({ ...threaded, thread: { module: new URL(`file://${file}`) } }).has('acme.cpu')).toBe(true);
    // refused, naming the type: both execute and thread, a relative path, no such file, not file:
    const both = { ...threaded, execute: greet.execute } as unknown as NodeType;
    expect(thrownBy(() => new NodeRegistry().register(both)).message).toBe('node type "acme.cpu": give either execute or thread, not both');
    const relative = { ...threaded, thread: { module: path.relative(process.cwd(), file) } };
    expect(thrownBy(() => new NodeRegistry().register(relative)).message).toBe(
      'node type "acme.cpu": thread.module must be a file: URL or an absolute path of an ES module',
    );
    const missing = { ...threaded, thread: { module: path.join(path.dirname(file), 'no-such-module.ts') } };
    expect(thrownBy(() => new NodeRegistry().register(missing)).message).toMatch(/^node type "acme.cpu": thread.module ".*no-such-module.ts": no such file$/);
    const http = { ...threaded, thread: { module: 'https://example.com/x.js' } };
    expect(thrownBy(() => new NodeRegistry().register(http)).code).toBe('INVALID_INPUT');
  });
});
