/**
 * The workflow DSL's public API: schema, parsing, validation, graph, expressions and export.
 *
 * Shared by the engine and the renderer, so nothing here (or below) imports from Node.
 */
export * from './schema';
export * from './expressions';
export * from './graph';
export * from './validate';
export * from './input-schema';
export * from './parse';
export * from './export';
