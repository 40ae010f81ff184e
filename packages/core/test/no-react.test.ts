import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const src = join(import.meta.dirname, '..', 'src');
const files = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? files(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(dir, entry.name)]
        : [],
  );

describe('framework-free core', () => {
  it('imports nothing from React anywhere in its source', () => {
    const importsReact = files(src).filter((file) =>
      /from\s+['"](react|react-dom)(\/[^'"]*)?['"]|import\(\s*['"]react/.test(readFileSync(file, 'utf8')),
    );
    expect(importsReact).toEqual([]);
  });

  it('declares no React dependency', () => {
    const manifest = JSON.parse(readFileSync(join(src, '..', 'package.json'), 'utf8')) as Record<
      string,
      Record<string, string> | undefined
    >;
    const all = { ...manifest['dependencies'], ...manifest['peerDependencies'] };
    expect(Object.keys(all).filter((name) => name.startsWith('react'))).toEqual([]);
  });
});
