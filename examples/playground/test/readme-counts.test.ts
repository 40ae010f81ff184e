// The READMEs say how many scenarios the playground offers and how many tools the model sees; a
// newcomer counts them on the page, so the words must follow the code.
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { SCENARIOS } from '../src/model/scenarios.ts';
import { PAGE_TOOLS } from '../src/shop/page-tools.ts';
import { createShopTools } from '../src/shop/shop-tools.ts';

const WORDS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten'].concat([
  'eleven',
  'twelve',
  'thirteen',
  'fourteen',
  'fifteen',
  'sixteen',
  'seventeen',
  'eighteen',
  'nineteen',
]);
const read = (path: string) => readFileSync(new URL(path, import.meta.url), 'utf8');

it('the READMEs give the number of scenarios and tools the page has', () => {
  const serverTools = createShopTools({} as Parameters<typeof createShopTools>[0]);
  expect(read('../../../README.md')).toContain(`${WORDS[SCENARIOS.length]} scenarios`);
  expect(read('../README.md')).toContain(`same ${WORDS[serverTools.length + PAGE_TOOLS.length]} tools`);
  // Every scenario the page lists is described in the playground's README, by its title.
  const readme = read('../README.md').replaceAll('’', "'");
  for (const scenario of SCENARIOS) expect(readme).toContain(`**${scenario.title.replaceAll('’', "'")}.**`);
});
