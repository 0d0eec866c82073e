/**
 * Validation of templates and outputs: an unclosed `{{ }}` template (in a node's config or its
 * compensation) is EXPRESSION_PARSE naming the node and the config path; an output named like a
 * reserved `$` name is INVALID_OUTPUT, so neither passes validation to fail at run time.
 */
import { describe, expect, it } from 'vitest';
import { formatProblems, validateWorkflow, type Problem } from '../../../engine/dsl/validate';
import { createDefaultRegistry } from '../../../engine/nodes/registry';

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

describe('templates and outputs at validation', () => {
  it('an unclosed template is EXPRESSION_PARSE naming the node and the config path', () => {
    const p = onlyProblem(one({ type: 'http', config: { url: 'http://x/{{ a ' } }), 'EXPRESSION_PARSE');
    expect(p.nodeId).toBe('n');
    expect(p.path).toEqual(['nodes', 0, 'config', 'url']);
    expect(p.message).toMatch(/^node "n": template in config\.url is not closed/);
    const nested = onlyProblem(
      one({ type: 'http', config: { url: 'http://x/', method: 'POST', body: { items: ['ok', '{{ b'] } } }),
      'EXPRESSION_PARSE',
    );
    expect(nested.path).toEqual(['nodes', 0, 'config', 'body', 'items', 1]);
  });

  it('an unclosed template in a compensation is named too', () => {
    const p = onlyProblem(
      one({ type: 'pass', compensate: { type: 'http', config: { url: '{{ base }}/undo/{{ id' } } }),
      'EXPRESSION_PARSE',
    );
    expect(p.message).toContain('compensate.config.url');
  });

  it.each(['$steps', '$result', '$x'])('an output named %s is INVALID_OUTPUT', (output) => {
    const p = onlyProblem(one({ type: 'pass', output }), 'INVALID_OUTPUT');
    expect(p.nodeId).toBe('n');
    expect(p.path).toEqual(['nodes', 0, 'output']);
    expect(p.message).toContain(JSON.stringify(output));
  });

  it('outputs that are plain names or expressions starting with $ are fine', () => {
    expect(problems(one({ type: 'pass', output: 'result' }))).toEqual([]);
    expect(problems(one({ type: 'pass', output: '$merge([{ "a": $result }])' }))).toEqual([]);
  });
});
