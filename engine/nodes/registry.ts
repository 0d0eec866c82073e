/**
 * The node type registry: built-ins and custom types behind one lookup.
 *
 * The runtime asks it for a type's handler, the DSL validator for a type's config schema (through
 * {@link NodeRegistry.catalog}, so engine/dsl needs no import from here), and the designer for
 * palette entries and property forms (through {@link NodeRegistry.describe}).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { z } from 'zod';
import { EngineError } from '../errors';
import { approvalNode } from './approval';
import { delayNode } from './delay';
import { eventNode, mapNode, subworkflowNode } from './control-flow';
import { createHttpNodeType, type HttpNodeOptions } from './http';
import { passNode } from './pass';
import { createScriptNodeType, type ScriptNodeOptions } from './script';
import { defaultThreadPool, type ThreadPool } from './thread-pool';
import type { NodeType, NodeTypeDescription, ThreadedNodeType } from './types';

/**
 * A registered node type, whatever its config type.
 *
 * `execute` is declared with method syntax in {@link NodeType}, so a `NodeType<HttpConfig>` is
 * assignable here; the runtime parses config with `configSchema` before calling it.
 */
export type AnyNodeType = NodeType<unknown>;

/** Type names: lowercase letter first, then lowercase letters, digits, `-` and `.`; ≤ 64 chars. */
export const NODE_TYPE_NAME_PATTERN = /^[a-z][a-z0-9.-]{0,63}$/;

/**
 * What the DSL validator needs to know about a type: its config schema and whether `{{ … }}`
 * templates are rendered in its string config values (default true).
 */
export interface NodeCatalogEntry {
  configSchema: z.ZodType;
  templates?: boolean;
  /** The type's {@link NodeType.validateConfig}, when it has one. */
  validateConfig?: (config: unknown) => string[];
}

/** The lookup the DSL validator takes: `undefined` means an unknown type. */
export type NodeCatalog = (type: string) => NodeCatalogEntry | undefined;

/** Options of {@link NodeRegistry}. */
export interface NodeRegistryOptions {
  /** The pool {@link ThreadedNodeType}s run in. Default: the process's shared pool. */
  pool?: ThreadPool;
}

/**
 * A set of node types by name.
 *
 * Registration checks the shape (name, schema, `execute` or `thread`) and refuses duplicates, so
 * a plug-in cannot silently replace a built-in.
 */
export class NodeRegistry {
  readonly #types = new Map<string, AnyNodeType>();
  readonly #descriptions = new Map<string, NodeTypeDescription>();
  readonly #pool: ThreadPool | undefined;

  /** A registry holding `types` (registered in order, with the same checks as `register`). */
  constructor(types: Iterable<AnyNodeType | ThreadedNodeType<unknown>> = [], options: NodeRegistryOptions = {}) {
    this.#pool = options.pool;
    for (const type of types) this.register(type);
  }

  /**
   * Adds a node type. Returns the registry, for chaining.
   *
   * A {@link ThreadedNodeType} (`thread` in place of `execute`) gets an `execute` that sends each
   * attempt to the registry's thread pool, failing with HANDLER_ERROR when its thread dies.
   *
   * @throws EngineError INVALID_INPUT (non-retryable) naming the type when its name does not match
   * {@link NODE_TYPE_NAME_PATTERN}, it is already registered, it lacks a zod `configSchema`, a
   * title, or an `execute` function (or, for a threaded type, has both `thread` and `execute`, or
   * a `thread.module` that is not a `file:` URL or absolute path of an existing file).
   */
  register<Config>(given: NodeType<Config> | ThreadedNodeType<Config>): this {
    const type = given as NodeType<Config>;
    const name: unknown = (type as { type?: unknown } | null)?.type;
    const invalid = (why: string): EngineError =>
      new EngineError('INVALID_INPUT', `node type ${JSON.stringify(name)}: ${why}`, {
        retryable: false,
        details: { type: name },
      });
    if (typeof name !== 'string' || !NODE_TYPE_NAME_PATTERN.test(name)) {
      throw invalid('the name must be 1–64 lowercase letters, digits, "-" or ".", starting with a letter');
    }
    if (this.#types.has(name)) throw invalid('is already registered');
    if (!(type.configSchema instanceof z.ZodType)) throw invalid('configSchema must be a zod schema');
    let registered = type as AnyNodeType;
    if (type.thread !== undefined) {
      if (type.execute !== undefined) throw invalid('give either execute or thread, not both');
      const module = threadModuleHref(type.thread.module, invalid);
      const what = `node type "${name}"`;
      registered = {
        ...(type as AnyNodeType),
        thread: { module },
        execute: (ctx) => (this.#pool ?? defaultThreadPool()).run(module, ctx, { code: 'HANDLER_ERROR', what }),
      };
    } else if (typeof type.execute !== 'function') throw invalid('execute must be a function (or give thread.module)');
    if (type.compensate !== undefined && typeof type.compensate !== 'function') {
      throw invalid('compensate must be a function when given');
    }
    if (typeof type.title !== 'string' || type.title === '') throw invalid('title is required');
    if (type.validateConfig !== undefined && typeof type.validateConfig !== 'function') {
      throw invalid('validateConfig must be a function when given');
    }
    this.#types.set(name, registered);
    return this;
  }

  /** The type named `type`, or `undefined`. */
  get(type: string): AnyNodeType | undefined {
    return this.#types.get(type);
  }

  /** Whether a type named `type` is registered. */
  has(type: string): boolean {
    return this.#types.has(type);
  }

  /** All registered types, in registration order. */
  list(): AnyNodeType[] {
    return [...this.#types.values()];
  }

  /**
   * Palette entries and property-form schemas for the designer, in registration order.
   *
   * `configJsonSchema` is JSON Schema draft 2020-12 from `z.toJSONSchema` in `input` mode (what a
   * person writes: defaults shown, not required). Parts JSON Schema cannot express (custom
   * refinements, transforms) are left open rather than failing the whole description.
   */
  describe(): NodeTypeDescription[] {
    return this.list().map((type) => {
      let description = this.#descriptions.get(type.type);
      if (description === undefined) {
        description = {
          type: type.type,
          title: type.title,
          description: type.description,
          icon: type.icon,
          group: type.group,
          configJsonSchema: z.toJSONSchema(type.configSchema, {
            io: 'input',
            unrepresentable: 'any',
          }) as Record<string, unknown>,
          hasCompensate: typeof type.compensate === 'function',
          templates: type.templates !== false,
        };
        this.#descriptions.set(type.type, description);
      }
      return structuredClone(description);
    });
  }

  /**
   * The lookup engine/dsl's validator takes: type name → `{ configSchema, templates, validateConfig }`.
   *
   * Reads the registry live, so types registered later are seen.
   */
  catalog(): NodeCatalog {
    return (name) => {
      const type = this.#types.get(name);
      if (type === undefined) return undefined;
      const entry: NodeCatalogEntry = { configSchema: type.configSchema };
      if (type.templates !== undefined) entry.templates = type.templates;
      const check = type.validateConfig;
      if (check !== undefined) entry.validateConfig = (config) => check.call(type, config);
      return entry;
    };
  }
}

/**
 * A threaded type's module as a `file:` URL string.
 *
 * @throws what `invalid` builds, when `module` is neither a `file:` URL nor an absolute path, or
 * names no file.
 */
function threadModuleHref(module: unknown, invalid: (why: string) => EngineError): string {
  let href: string;
  if (module instanceof URL) href = module.href;
  else if (typeof module === 'string' && module.startsWith('file:')) href = module;
  else if (typeof module === 'string' && path.isAbsolute(module)) href = pathToFileURL(module).href;
  else throw invalid('thread.module must be a file: URL or an absolute path of an ES module');
  let file: string;
  try {
    file = fileURLToPath(href);
  } catch {
    throw invalid(`thread.module ${JSON.stringify(href)} is not a file: URL`);
  }
  if (!fs.existsSync(file)) throw invalid(`thread.module ${JSON.stringify(file)}: no such file`);
  return href;
}

/** Options of {@link createDefaultRegistry}. */
export interface DefaultRegistryOptions {
  /** Options of the built-in `script` type. */
  script?: ScriptNodeOptions;
  /** Options of the built-in `http` type. */
  http?: HttpNodeOptions;
  /** Custom types registered after the built-ins (same checks as `register`). */
  types?: Iterable<AnyNodeType | ThreadedNodeType<unknown>>;
  /**
   * The thread pool of `script` and of threaded custom types. Default: the process's shared pool,
   * sized to the machine.
   */
  pool?: ThreadPool;
}

/**
 * A registry with every built-in type: `pass`, `script`, `http`, `delay`, `approval`,
 * `subworkflow`, `map`, `event`, then
 * `options.types`.
 *
 * @throws EngineError INVALID_INPUT when a custom type is invalid or reuses a built-in name.
 */
export function createDefaultRegistry(options: DefaultRegistryOptions = {}): NodeRegistry {
  const pool = options.pool;
  const registry = new NodeRegistry(
    [
      passNode,
      createScriptNodeType(pool === undefined ? options.script : { pool, ...options.script }),
      createHttpNodeType(options.http),
      delayNode,
      approvalNode,
      subworkflowNode,
      mapNode,
      eventNode,
    ],
    pool === undefined ? {} : { pool },
  );
  for (const type of options.types ?? []) registry.register(type);
  return registry;
}
