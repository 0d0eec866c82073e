/**
 * Validation of built-in node configs beyond their schemas: a literal http url must be an
 * absolute http: or https: URL (a templated one is checked once rendered), and a script's code is
 * parsed (never run) through the type's validateConfig hook, refusing syntax errors with their
 * line and code that closes its function early.
 */
import { describe, expect, it } from 'vitest';
import { formatProblems, validateWorkflow, type Problem } from '../../../engine/dsl/validate';
import { createDefaultRegistry } from '../../../engine/nodes/registry';
import { scriptSyntaxProblems } from '../../../engine/nodes/script';

const catalog = createDefaultRegistry().catalog();

function problems(raw: unknown): Problem[] {
  return validateWorkflow(raw, catalog).problems;
}

function onlyProblem(raw: unknown, code: string): Problem {
  const all = problems(raw);
  const matching = all.filter((p) => p.code === code);
  expect(matching, formatProblems(all)).toHaveLength(1);
  return matching[0] as Problem;
}

const one = (node: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  name: 'w',
  nodes: [{ id: 'n', ...node }],
  ...extra,
});

describe('http urls at validation', () => {
  it.each(['file:///etc/passwd', 'ftp://example.com/x', 'javascript:alert(1)', '/relative', 'example.com/x'])(
    'a literal %s is INVALID_CONFIG naming config.url',
    (url) => {
      const p = onlyProblem(one({ type: 'http', config: { url } }), 'INVALID_CONFIG');
      expect(p.path).toEqual(['nodes', 0, 'config', 'url']);
      expect(p.message).toMatch(/config\.url: must be an absolute http: or https: URL/);
    },
  );

  it('http(s) and templated urls pass (a templated one is checked once rendered)', () => {
    expect(problems(one({ type: 'http', config: { url: 'https://example.com/a?b=1' } }))).toEqual([]);
    expect(problems(one({ type: 'http', config: { url: '{{ base }}/devices' } }))).toEqual([]);
  });
});

describe('script code at validation (the type’s validateConfig hook)', () => {
  it('a syntax error is INVALID_CONFIG naming the node', () => {
    const p = onlyProblem(one({ type: 'script', config: { code: 'return (((' } }), 'INVALID_CONFIG');
    expect(p.nodeId).toBe('n');
    expect(p.message).toMatch(/^node "n": config: code has a syntax error/);
    const located = onlyProblem(one({ type: 'script', config: { code: 'const a = 1;\nconst = 2;\nreturn a' } }), 'INVALID_CONFIG');
    expect(located.message).toContain('line 2');
  });

  it('code that closes its function early is refused', () => {
    const p = onlyProblem(one({ type: 'script', config: { code: '}); (function () {' } }), 'INVALID_CONFIG');
    expect(p.message).toContain('line 1, column 1: the code closes its function early');
  });

  it('valid code passes, and the check never runs the code', () => {
    expect(scriptSyntaxProblems('globalThis.ran = true; return input.a + 1')).toEqual([]);
    expect((globalThis as { ran?: boolean }).ran).toBeUndefined();
    expect(problems(one({ type: 'script', config: { code: 'return input.a + 1' } }))).toEqual([]);
  });
});
