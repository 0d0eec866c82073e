/**
 * The engine's public API: what the CLI uses now and the hosts (Electron, browser) will bind
 * their typed contract to. Hosts import from here, never from engine internals.
 */
export {
  Engine,
  SqliteEngine,
  diffVariables,
  type ApproveOptions,
  type DeployResult,
  type EngineOptions,
  type ResumeOptions,
  type StartOptions,
  type VariablesDiff,
} from '../runtime/engine';
export type { EngineEvent, EngineListener, WorkerTurnEvent } from '../runtime/events';
export { EngineMetrics, type MetricsSource } from '../runtime/metrics';
export { DAY_MS, DEFAULT_RETENTION, type PruneOptions, type PruneReport, type RetentionPolicy } from '../runtime/retention';
export { ManualClock, OffsetClock, systemClock, type Clock } from '../runtime/clock';
export { Faults, type FaultPoint, type FaultRule } from '../runtime/faults';
export type { PurgeCounts, Suspension } from '../store/queries';
export type { InstanceFilter } from '../store/port';
export { INSTANCE_STATUSES, NODE_STATUSES, type InstanceStatus, type NodeStatus } from '../vocabulary';
export { EngineError, ErrorCodes, type ErrorCode, type SerializedError } from '../errors';
