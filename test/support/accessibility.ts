import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's rules that every control has an accessible name (a label, or text for buttons and links). */
const namingRules = [
  'label',
  'button-name',
  'link-name',
  'select-name',
  'input-button-name',
  'aria-input-field-name',
  'aria-command-name',
  'aria-toggle-field-name',
  'aria-progressbar-name',
  'role-img-alt',
];

/** Controls on the page without an accessible name, as axe-core reports them (`rule: html`); empty when all are named. */
export async function unnamedControls(page: Page): Promise<string[]> {
  // Evaluated by the test's own channel, not added as a script tag: the console's CSP refuses inline scripts.
  if (!(await page.evaluate("'axe' in window"))) await page.evaluate(axeSource);
  // A string, evaluated in the page: the tests compile without the DOM's types.
  return page.evaluate<string[]>(
    `axe.run(document, { runOnly: { type: 'rule', values: ${JSON.stringify(namingRules)} } })
       .then((r) => r.violations.flatMap((v) => v.nodes.map((n) => v.id + ': ' + n.html)))`,
  );
}
