// The Designer in real Chromium: live validation runs the same RE2 checks as the engine's save
// (engine/dsl in the page), so a regex RE2 cannot run, in an expression or an inputSchema pattern,
// is a problem naming its node or field and the construct before anything is saved; and the
// host refuses to save it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importViaUi, saveViaUi, selectNode, startDesignerApp, type DesignerApp } from '../helpers/designer-e2e';

let app: DesignerApp;

beforeAll(async () => {
  app = await startDesignerApp();
});

afterAll(async () => {
  await app?.close();
});

const workflow = {
  format: 1,
  name: 'regex-checks',
  inputSchema: { type: 'object', properties: { code: { type: 'string', pattern: '(a)\\1' } } },
  nodes: [
    { id: 'scan', type: 'pass', output: '{ "ok": $contains($result, /(?=x)/) }' },
    { id: 'done', type: 'pass' },
  ],
  edges: [{ from: 'scan', to: 'done' }],
};

describe('designer: regexes RE2 cannot run', () => {
  it('are live problems naming the field and the construct, and go away when fixed', async () => {
    const { page } = app;
    await importViaUi(page, JSON.stringify(workflow));
    await expect.poll(() => page.getByTestId('problems-count').textContent()).toBe('2');
    const texts = [await page.getByTestId('problem-0').textContent(), await page.getByTestId('problem-1').textContent()].join('\n');
    expect(await page.getByTestId('problem-0').getAttribute('data-code')).toBe('UNSUPPORTED_REGEX');
    expect(await page.getByTestId('problem-1').getAttribute('data-code')).toBe('UNSUPPORTED_REGEX');
    expect(texts).toContain('inputSchema.properties.code.pattern "(a)\\\\1" uses a backreference `\\1`');
    expect(texts).toContain('node "scan": output cannot run: regular expression /(?=x)/ uses a lookahead `(?=`');

    // the host refuses to save it too
    expect(await saveViaUi(page)).toMatch(/problem/i);
    expect((await app.call('workflow:get', { name: 'regex-checks' })).ok).toBe(false);

    // when: the output's regex is one RE2 runs
    await selectNode(page, 'scan');
    await page.getByTestId('prop-output').fill('{ "ok": $contains($result, /x/) }');
    // then: only the schema's pattern is left
    await expect.poll(() => page.getByTestId('problems-count').textContent()).toBe('1');
    expect(await page.getByTestId('problem-0').textContent()).toContain('inputSchema.properties.code.pattern');
    expect(app.consoleErrors).toEqual([]);
  });
});
