/**
 * The contract between the runtime and node types (built-in and custom).
 *
 * A node type declares a config schema (zod, also exported as JSON Schema for the designer) and
 * an `execute(ctx)`; optionally `compensate(ctx)`. Handlers are async and run between
 * transactions: they must not touch the database. They run at least once per attempt; the
 * `idempotencyKey` is stable for (instance id, node id) so side effects can be de-duplicated.
 */
import type { z } from 'zod';
import type { ResolvedRetryPolicy } from '../dsl/schema';

/** What a handler sees. All times are epoch ms from the engine's clock. */
export interface NodeContext<Config = Record<string, unknown>> {
  instanceId: number;
  nodeId: string;
  /** The node type name, e.g. `http`. */
  type: string;
  /** 1-based attempt number of this run (the first attempt is 1). */
  attempt: number;
  /**
   * `${instanceId}:${nodeId}` for execute, `${instanceId}:${nodeId}:compensate` for compensate,
   * as text (node ids may be CJK or emoji). A handler putting it in a header or URL encodes it
   * first, as the `http` node does with `encodeHeaderValue`.
   */
  idempotencyKey: string;
  /** The node's config after `{{ … }}` templates were rendered and the type's schema parsed it. */
  config: Config;
  /** The node's input (default: a shallow copy of the instance's global variables). */
  input: unknown;
  /** A frozen snapshot of the instance's global variables. */
  variables: Readonly<Record<string, unknown>>;
  /** Results of completed nodes by node id (`$steps` in expressions). */
  steps: Readonly<Record<string, unknown>>;
  /** Aborted on timeout (timeoutMs), cancel, or lease loss. Pass it to fetch and friends. */
  signal: AbortSignal;
  /** The engine clock (tests may set it). */
  now(): number;
  /** For compensate only: the node's own result, as it completed. */
  result?: unknown;
  /** Appends a `node.log` history event (small messages; not for bulk data). */
  log(message: string, data?: unknown): void;
}

/**
 * What `execute` returns.
 *
 * - `{ output }`: the node completed with this result (JSON-serialisable);
 * - `{ wait: { until } }`: park the node WAITING until the absolute time `until` (epoch ms); the
 *   runtime completes it then with `output` (a `delay`);
 * - `{ wait: { approval: true } }`: park the node WAITING until a person decides (an `approval`);
 *   the node's `timeoutMs`, if any, fails it with TIMEOUT when no decision came in time;
 * - `{ wait: { event: { name, key? } } }`: park the node WAITING until an event of that name (and
 *   key) is sent to the instance; its data becomes the result (an `event` node);
 * - `{ wait: { children: … } }`: run child instances of another workflow and wait for them; the
 *   result is the child's final variables (`subworkflow`) or the array of them in item order
 *   (`map`). For waits, the node's `timeoutMs` bounds the wait, not `execute`.
 */
export type NodeResult =
  | { output: unknown }
  | { wait: { until: number }; output?: unknown }
  | { wait: { event: { name: string; key?: string } } }
  | { wait: { children: ChildrenSpec } }
  | {
      wait: {
        approval: true;
        prompt?: string;
        /** Who is asked to decide (a name or role; shown in the UI, not enforced). */
        assignee?: string;
        /** JSON Schema of the data a person may attach to the decision. */
        form?: Record<string, unknown>;
      };
    };

/**
 * Child instances a node asks for (`subworkflow`, `map`): the workflow (its latest version when
 * the node starts, unless `version` pins one) and each child's start variables, in item order.
 */
export interface ChildrenSpec {
  mode: 'subworkflow' | 'map';
  workflow: string;
  version?: number;
  /** Each child's start variables (a JSON object each); at most {@link MAX_CHILDREN_PER_NODE}. */
  inputs: Record<string, unknown>[];
  /** Children running at once (1 for a subworkflow). */
  maxConcurrency: number;
  /** Children that may fail (their result is then `null`) before the node fails. */
  toleratedFailures: number;
  /**
   * Each input is merged over the parent's globals as they are when its child starts (a map
   * without `input`): the items are stored alone, not with a copy of the globals each.
   */
  mergeGlobals?: boolean;
}

/** The most child instances one node attempt may run (a `map` node's items). */
export const MAX_CHILDREN_PER_NODE = 10_000;

/** A node type: built in or registered by a plug-in. */
export interface NodeType<Config = Record<string, unknown>> {
  /** The name used in the DSL's `type` field: lowercase letters, digits, `-` and `.`. */
  type: string;
  /** Palette title, e.g. "HTTP request". */
  title: string;
  /** One line for the palette. */
  description: string;
  /** An icon name the renderer maps to an icon (e.g. `globe`, `code`, `clock`, `check`). */
  icon: string;
  /** Palette group, e.g. `Core`, `Integration`, `Human`. */
  group: string;
  /** Parses and checks the node's config (after templates were rendered at run time). */
  configSchema: z.ZodType<Config>;
  /**
   * Whether `{{ … }}` templates in string config values are rendered before `execute`.
   * Default true; `script` turns it off (its code is not a template).
   */
  templates?: boolean;
  /** Retry defaults for this type (e.g. `approval` and `delay`: 1 attempt). */
  defaultRetry?: Partial<ResolvedRetryPolicy>;
  /**
   * Whether `execute` only computes a result or a wait, with no effect outside the engine (pass,
   * delay, approval). An attempt of such a type lost with its worker is run again without being
   * counted, so one crash cannot fail a node that allows a single attempt. Its `execute` must also
   * settle without waiting on I/O or timers: without a `timeoutMs` it gets a signal that never
   * aborts (the worker skips the abort machinery for it).
   */
  instant?: boolean;
  /**
   * Whether the node's `timeoutMs` bounds the wait its `execute` returns (a person's decision, an
   * event, child instances) rather than `execute` itself: approval, event, subworkflow, map.
   */
  timeoutBoundsWait?: boolean;
  /**
   * Checks a config beyond what `configSchema` can express (e.g. a script's syntax), when a
   * workflow is validated: gets the parsed config as written (templates not rendered) and returns
   * one message per problem (empty when fine). Must be synchronous, pure and quick. Engine-side
   * only: the renderer's catalog is built from JSON Schemas and has no hook.
   */
  validateConfig?(config: Config): string[];
  /**
   * Set on a type registered as {@link ThreadedNodeType}: where its `execute` runs (the registry
   * built `execute` to send each attempt there). Informative; do not set it on a type that has
   * its own `execute`.
   */
  thread?: NodeThread;
  /** Runs one attempt. Throw to fail it (an EngineError with `retryable: false` skips retries). */
  execute(ctx: NodeContext<Config>): Promise<NodeResult>;
  /** Undoes a completed run during compensation. Its result is recorded in history. */
  compensate?(ctx: NodeContext<Config>): Promise<unknown>;
}

/**
 * Where a CPU-bound type's `execute` runs: a module loaded by the engine's thread pool (see
 * `thread-pool.ts`), so a long computation never holds the engine's loop, its API or its event
 * stream.
 *
 * The module is an ES module (`file:` URL, as a string or URL, or an absolute path) that exports
 * `execute(ctx)` with the {@link NodeType.execute} signature; a function cannot cross threads,
 * hence a module. Each pool thread imports it once. Inside the thread its `ctx` is a copy
 * (structured clone) of the attempt's: `config`, `input`, `variables`, `steps` and the ids as the
 * engine's thread has them; `log` forwards to the engine; `now()` is the engine's clock as read
 * when the attempt was sent; `signal` never aborts there, because an abort (the node's
 * `timeoutMs`, a cancel, a lost lease) terminates the thread instead, and a fresh one takes its
 * place. What it returns or throws must be cloneable; an {@link EngineError}-shaped throw keeps
 * its code and `retryable`. A thread that dies or runs out of heap fails the attempt with
 * HANDLER_ERROR.
 */
export interface NodeThread {
  module: string | URL;
}

/**
 * A node type whose `execute` runs in the thread pool: `thread` in place of `execute`.
 * `compensate`, when given, runs on the engine's thread as for any type.
 */
export type ThreadedNodeType<Config = Record<string, unknown>> = Omit<NodeType<Config>, 'execute' | 'thread'> & {
  thread: NodeThread;
  execute?: never;
};

/** A node type as the designer sees it (palette + property forms). */
export interface NodeTypeDescription {
  type: string;
  title: string;
  description: string;
  icon: string;
  group: string;
  /** JSON Schema (draft 2020-12) of the config, from the zod schema. */
  configJsonSchema: Record<string, unknown>;
  hasCompensate: boolean;
  /** Whether `{{ … }}` templates in string config values are rendered (false for `script`). */
  templates: boolean;
}
