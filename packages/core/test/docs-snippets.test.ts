// Every ```ts and ```tsx block of the READMEs and the docs, compiled against the workspace's packages:
// a snippet a reader copies into an app must compile as written. Each block is a module of its own; a
// block whose first line names its file (`// tools.ts: …`) is what the document's other blocks import
// as `./tools.ts`. A module the workspace does not have (the reader's own `./auth.ts`, a framework
// toolgate does not depend on) types as `any`; every `@toolgate/*` import must resolve. A block that
// is deliberately a fragment has `<!-- fragment: why -->` on the line before it, and is skipped.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SNIPPETS = '__doc_snippets__';
const HOMES = [
  'packages/core',
  'packages/server',
  'packages/react',
  'packages/ai-sdk',
  'packages/mcp',
  'packages/openai-agents',
  'packages/channels',
  'examples/playground',
  'examples/ai-sdk-chat',
];

interface Snippet {
  readonly document: string;
  readonly line: number;
  readonly file: string;
  readonly code: string;
  /** The file the block says it is, e.g. `tools` for a block that starts with `// tools.ts`. */
  readonly name: string | undefined;
}

function documents(): string[] {
  const found = ['README.md'];
  for (const parent of ['packages', 'examples']) {
    for (const name of readdirSync(join(ROOT, parent))) {
      if (existsSync(join(ROOT, parent, name, 'README.md'))) found.push(`${parent}/${name}/README.md`);
    }
  }
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.md')) found.push(path);
    }
  };
  walk('docs');
  return found;
}

/** Where a document's snippets are placed, so that the packages it names resolve as in an app. */
function home(document: string): string {
  const [first, second] = document.split('/');
  if ((first === 'packages' || first === 'examples') && second !== undefined) return `${first}/${second}`;
  return document === 'README.md' ? 'packages/react' : 'packages/core';
}

function snippetsOf(document: string): { snippets: Snippet[]; fragments: number } {
  const lines = readFileSync(join(ROOT, document), 'utf8').split('\n');
  const snippets: Snippet[] = [];
  let fragments = 0;
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(ts|tsx)\s*$/.exec(lines[i] ?? '');
    if (open === null) continue;
    const end = lines.findIndex((text, at) => at > i && /^```\s*$/.test(text));
    if (end === -1) throw new Error(`${document}:${i + 1}: a code block that never closes`);
    let before = i - 1;
    while (before >= 0 && lines[before]?.trim() === '') before--;
    if (/^<!-- fragment: .+ -->$/.test(lines[before]?.trim() ?? '')) fragments++;
    else
      snippets.push({
        name: /^\/\/ ([\w.-]+)\.tsx?\b/.exec(lines[i + 1] ?? '')?.[1],
        document,
        line: i + 1,
        file: join(ROOT, home(document), SNIPPETS, `${document.replaceAll('/', '_')}-${i + 1}.${open[1]}`),
        code: lines.slice(i + 1, end).join('\n'),
      });
    i = end;
  }
  return { snippets, fragments };
}

/** `@toolgate/<name>[/<subpath>]` → the source file its package's `exports` names, as the workspace builds it. */
function toolgateEntries(): Map<string, string> {
  const entries = new Map<string, string>();
  for (const name of readdirSync(join(ROOT, 'packages'))) {
    const manifest = join(ROOT, 'packages', name, 'package.json');
    if (!existsSync(manifest)) continue;
    const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as {
      name: string;
      exports?: Record<string, unknown>;
    };
    for (const [subpath, target] of Object.entries(pkg.exports ?? {})) {
      if (typeof target === 'string' && /\.tsx?$/.test(target))
        entries.set(`${pkg.name}${subpath.slice(1)}`, join(ROOT, 'packages', name, target));
    }
  }
  return entries;
}

const extensionOf = (file: string): ts.Extension =>
  file.endsWith('.tsx') ? ts.Extension.Tsx : ts.Extension.Ts;

function compile(snippets: readonly Snippet[]): string[] {
  const base = ts.getParsedCommandLineOfConfigFile(
    join(ROOT, 'tsconfig.base.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
      },
    },
  );
  if (base === undefined) throw new Error('tsconfig.base.json could not be read');
  const options: ts.CompilerOptions = {
    ...base.options,
    noEmit: true,
    types: ['node'],
    noUncheckedSideEffectImports: false,
  };
  const byFile = new Map(snippets.map((snippet) => [snippet.file, snippet]));
  const entries = toolgateEntries();
  const host = ts.createCompilerHost(options);
  const readFile = host.readFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  host.readFile = (file) => byFile.get(file)?.code ?? readFile(file);
  host.fileExists = (file) => byFile.has(file) || fileExists(file);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (file, language, onError, shouldCreate) => {
    const snippet = byFile.get(file);
    return snippet === undefined
      ? getSourceFile(file, language, onError, shouldCreate)
      : ts.createSourceFile(file, snippet.code, language, true);
  };
  host.resolveModuleNames = (names, containingFile) =>
    names.map((name) => {
      const sibling = /^\.\/([\w.-]+?)(\.[jt]sx?)?$/.exec(name)?.[1];
      const named = byFile.get(containingFile);
      const own = snippets.find(
        (s) => s.document === named?.document && s.name !== undefined && s.name === sibling,
      );
      if (own !== undefined) return { resolvedFileName: own.file, extension: extensionOf(own.file) };
      const entry = entries.get(name);
      if (entry !== undefined) return { resolvedFileName: entry, extension: extensionOf(entry) };
      const resolved = ts.resolveModuleName(name, containingFile, options, host).resolvedModule;
      if (resolved !== undefined || !byFile.has(containingFile)) return resolved;
      // A package another of the workspace's packages installs (an SDK, a framework) resolves from there.
      for (const dir of HOMES) {
        const elsewhere = ts.resolveModuleName(name, join(ROOT, dir, 'index.ts'), options, host);
        if (elsewhere.resolvedModule !== undefined) return elsewhere.resolvedModule;
      }
      return undefined;
    });
  const program = ts.createProgram([...byFile.keys()], options, host);
  const problems: string[] = [];
  for (const snippet of snippets) {
    const source = program.getSourceFile(snippet.file);
    if (source === undefined) throw new Error(`${snippet.file} was not compiled`);
    for (const diagnostic of ts.getPreEmitDiagnostics(program, source)) {
      const text = ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ');
      // The reader's own modules, and packages the workspace does not install, type as `any`.
      const missing =
        /^Cannot find module '([^']+)'|^Could not find a declaration file for module '([^']+)'/.exec(text);
      if (missing !== null && !(missing[1] ?? missing[2] ?? '').startsWith('@toolgate/')) continue;
      const at =
        diagnostic.start === undefined ? 0 : source.getLineAndCharacterOfPosition(diagnostic.start).line;
      problems.push(`${snippet.document}:${snippet.line + 1 + at}: ${text}`);
    }
  }
  return problems;
}

describe('the code blocks of the READMEs and the docs', () => {
  it('compile against the packages, each as written', { timeout: 180_000 }, () => {
    const all = documents().map(snippetsOf);
    const snippets = all.flatMap((found) => found.snippets);
    const fragments = all.reduce((sum, found) => sum + found.fragments, 0);
    // The marks stay few: a block a reader cannot compile is the exception, said why beside it.
    expect(fragments).toBeLessThanOrEqual(snippets.length / 5);
    expect(snippets.length).toBeGreaterThan(50);
    expect(compile(snippets)).toEqual([]);
  });
});
