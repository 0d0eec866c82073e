/**
 * Node types: the contract, the registry and the built-ins (pass, script, http, delay, approval,
 * subworkflow, map, event).
 *
 * The runtime and hosts import from here; a built-in's own file is only for its tests.
 */
export type { ChildrenSpec, NodeContext, NodeResult, NodeThread, NodeType, NodeTypeDescription, ThreadedNodeType } from './types';
export { MAX_CHILDREN_PER_NODE } from './types';
export {
  EventConfigSchema,
  MapConfigSchema,
  SubworkflowConfigSchema,
  eventNode,
  mapNode,
  subworkflowNode,
  type EventConfig,
  type MapConfig,
  type SubworkflowConfig,
} from './control-flow';
export {
  NodeRegistry,
  NODE_TYPE_NAME_PATTERN,
  createDefaultRegistry,
  type AnyNodeType,
  type DefaultRegistryOptions,
  type NodeRegistryOptions,
  type NodeCatalog,
  type NodeCatalogEntry,
} from './registry';
export { abortError, throwIfAborted } from './abort';
export {
  DEFAULT_THREAD_RESOURCE_LIMITS,
  ThreadPool,
  defaultThreadPool,
  type ThreadFailure,
  type ThreadPoolOptions,
} from './thread-pool';
export { PassConfigSchema, passNode, type PassConfig } from './pass';
export {
  SCRIPT_LIMITS,
  ScriptConfigSchema,
  createScriptNodeType,
  scriptNode,
  type QuickJSModuleLike,
  type ScriptConfig,
  type ScriptNodeOptions,
} from './script';
export {
  DEFAULT_HTTP_TIMEOUT_MS,
  DEFAULT_MAX_RESPONSE_BYTES,
  HttpConfigSchema,
  HttpMethodSchema,
  createHttpNodeType,
  httpNode,
  type HttpConfig,
  type HttpConfigInput,
  type HttpNodeOptions,
  type HttpResult,
} from './http';
export { DelayConfigSchema, MAX_DELAY_MS, delayNode, type DelayConfig } from './delay';
export {
  ApprovalConfigSchema,
  ApprovalDecisionSchema,
  ApprovalResultSchema,
  approvalNode,
  type ApprovalConfig,
  type ApprovalDecision,
  type ApprovalResult,
} from './approval';
