// @vitest-environment node
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const css = readFileSync(fileURLToPath(new URL('../src/styles.css', import.meta.url)), 'utf8').replace(
  /\/\*[\s\S]*?\*\//g,
  '',
);
const selectors = [...css.matchAll(/([^{}]+)\{/g)]
  .map((match) => (match[1] ?? '').trim())
  .filter((s) => !s.startsWith('@') && !/^\d+%$/.test(s));

describe('styles.css', () => {
  it('styles only through the data attributes, never through classes or ids', () => {
    expect(selectors.length).toBeGreaterThan(10);
    for (const selector of selectors) {
      expect(selector).toMatch(/\[data-(toolgate|status|action)/);
      expect(selector.replace(/'[^']*'/g, '')).not.toMatch(/[.#][a-z]/i);
    }
  });

  it('keeps every rule overridable (zero specificity)', () => {
    for (const selector of selectors) {
      for (const part of selector.split(/,(?![^(]*\))/)) expect(part.trim()).toMatch(/^:where\(/);
    }
  });

  it('gives the statuses that need attention their own colour, in light and in dark', () => {
    for (const status of ['awaiting_approval', 'executing', 'committed', 'rejected', 'failed']) {
      const rule = new RegExp(`data-status='${status}'[^{]*\\{([^}]*)\\}`).exec(css)?.[1] ?? '';
      expect(rule).toMatch(/--toolgate-tone: light-dark\(#[0-9a-f]{6}, #[0-9a-f]{6}\)/);
    }
  });
});
