/**
 * Config schemas of the control-flow node types (`subworkflow`, `map`, `event`): pure (zod only),
 * so the designer validates with them in the page as the engine's save does (./builtin-configs.ts).
 */
import { z } from 'zod';

const WorkflowName = z.string().min(1).max(200).describe('The workflow to run (its name)');
const PinnedVersion = z.number().int().min(1).optional().describe('A version to pin (default: the latest when the node starts)');

/**
 * Config of `subworkflow`: `{ workflow, version?, input? }`; `input` is a JSONata expression over
 * the globals (`$steps` too) giving the child's start variables (default: a copy of the globals).
 */
export const SubworkflowConfigSchema = z.strictObject({
  workflow: WorkflowName,
  version: PinnedVersion,
  input: z.string().min(1).max(10_000).optional().describe("JSONata giving the child's start variables (default: the globals)"),
});

/** Parsed config of `subworkflow`. */
export type SubworkflowConfig = z.output<typeof SubworkflowConfigSchema>;

/**
 * Config of `map`: `{ items, workflow, version?, input?, maxConcurrency? = 10, toleratedFailures? = 0 }`;
 * `items` is a JSONata expression yielding the array to map over; `input`, JSONata evaluated once
 * per item over the globals with `item` and `index` added, gives each child's start variables
 * (default: those globals with `item` and `index`), as Step Functions' ItemSelector does.
 */
export const MapConfigSchema = z.strictObject({
  items: z.string().min(1).max(10_000).describe('JSONata yielding the array of items'),
  workflow: WorkflowName,
  version: PinnedVersion,
  input: z.string().min(1).max(10_000).optional().describe("JSONata over the globals plus item and index giving each child's start variables"),
  maxConcurrency: z.number().int().min(1).max(1000).default(10).describe('Children running at once'),
  toleratedFailures: z.number().int().min(0).default(0).describe('Children that may fail (their result is null) before the node fails'),
});

/** Parsed config of `map`. */
export type MapConfig = z.output<typeof MapConfigSchema>;

/** Config of `event`: `{ name, key? }`; `key` may be a `{{ … }}` template (e.g. a device id). */
export const EventConfigSchema = z.strictObject({
  name: z.string().min(1).max(200).describe('The event to wait for'),
  key: z.string().max(1000).optional().describe('Only an event sent with this key (a template)'),
});

/** Parsed config of `event`. */
export type EventConfig = z.output<typeof EventConfigSchema>;

