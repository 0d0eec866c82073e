// The built-in types' validation entries the renderer uses (engine/nodes/builtin-configs) are the
// registry's own: same schema objects, same templates flag, a validateConfig exactly where the
// registry has one, giving the same answers.
import { describe, expect, it } from 'vitest';
import { BUILTIN_CONFIGS, builtinConfig } from '../../../engine/nodes/builtin-configs';
import { createDefaultRegistry } from '../../../engine/nodes/registry';

describe('built-in config entries', () => {
  const registry = createDefaultRegistry();
  const catalog = registry.catalog();
  const builtins = registry.list().map((t) => t.type);

  it('has one entry per built-in type, and none for other names', () => {
    expect(Object.keys(BUILTIN_CONFIGS).sort()).toEqual([...builtins].sort());
    expect(builtinConfig('constructor')).toBeUndefined();
    expect(builtinConfig('csv.parse')).toBeUndefined();
  });

  it.each(builtins)('%s: the same schema, templates flag and extra check as the registry', (type) => {
    const mine = builtinConfig(type);
    const theirs = catalog(type);
    expect(mine?.configSchema).toBe(theirs?.configSchema);
    expect(mine?.templates !== false).toBe(theirs?.templates !== false);
    expect(typeof mine?.validateConfig).toBe(typeof theirs?.validateConfig);
    if (theirs?.validateConfig) {
      for (const code of ['return 1;', 'return (1 +;', '}); (function () {', '']) {
        expect(mine?.validateConfig?.({ code })).toEqual(theirs.validateConfig({ code }));
      }
    }
  });
});
