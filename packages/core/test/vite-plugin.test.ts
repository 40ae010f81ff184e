// The Vite plugin of @toolgate/core/vite, through a real Vite build of an app's module: what the
// built app decides and tells the model, and what it ships.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, createServer, type Plugin, type Rolldown } from 'vite';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createToolGate as createAjvGate } from '../src/ajv.ts';
import type { ToolCallRecord, ToolDefinition, ToolGate } from '../src/index.ts';
import { toolgate, type ToolgateViteOptions } from '../src/vite.ts';

const APP = join(import.meta.dirname, 'fixtures/vite-app');
const made: string[] = [];
afterAll(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});
const SRC = join(import.meta.dirname, '../src');

// `@toolgate/core` and its entries resolved as an installed package's `exports` would, to the
// sources here; after the plugin, which may point `@toolgate/core` elsewhere first.
const installed: Plugin = {
  name: 'installed-core',
  enforce: 'pre',
  resolveId(source) {
    const match = /^@toolgate\/core(?:\/([a-z-]+))?$/.exec(source);
    return match === null ? null : join(SRC, `${match[1] ?? 'index'}.ts`);
  },
};

interface BuiltApp {
  readonly gate: ToolGate;
  readonly tools: readonly ToolDefinition[];
  readonly modules: readonly string[];
}

async function buildApp(file: string, options?: ToolgateViteOptions): Promise<BuiltApp> {
  const result = (await build({
    configFile: false,
    logLevel: 'silent',
    root: APP,
    plugins: [toolgate(options), installed],
    build: {
      write: false,
      minify: false,
      lib: { entry: join(APP, file), formats: ['es'], fileName: 'app' },
    },
  })) as Rolldown.RolldownOutput | Rolldown.RolldownOutput[];
  const chunk = [result].flat()[0]?.output.find((item) => item.type === 'chunk');
  if (chunk === undefined) throw new Error('the build made no chunk');
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-vite-'));
  made.push(dir);
  const out = join(dir, 'app.mjs');
  writeFileSync(out, chunk.code);
  const app = (await import(pathToFileURL(out).href)) as Omit<BuiltApp, 'modules'>;
  return { ...app, modules: chunk.moduleIds };
}

const run = (gate: ToolGate, name: string, args: unknown): Promise<ToolCallRecord> =>
  gate.run({ name, arguments: JSON.stringify(args) });

describe('the Vite plugin', () => {
  it('builds an app that checks each written-out schema as the runtime Ajv does, and ships no validator', async () => {
    const app = await buildApp('app.ts');
    // The same tools, as defined in the app, through a gate that compiles at runtime with Ajv.
    const runtime = createAjvGate({ tools: app.tools.filter((tool) => tool.name !== 'made_at_runtime') });
    const cases: [string, unknown][] = [
      ['add_to_cart', { sku: 'tea', quantity: 2 }],
      ['add_to_cart', { sku: '', quantity: 2.5, colour: 'red' }],
      ['add_to_cart', { quantity: 99 }],
      ['refund', { email: 'a@example.com', reason: 'late' }],
      ['refund', { email: 'not an email', reason: 'lost', note: 'far too long' }],
      ['lookup', { id: 'abc' }],
      ['lookup', { id: 'ABC' }],
      ['lookup', { id: 'abc', tags: { long: 1 } }],
    ];
    for (const [name, args] of cases) {
      const built = await run(app.gate, name, args);
      const expected = await run(runtime, name, args);
      expect({ name, args, status: built.status, reason: built.reason }).toEqual({
        name,
        args,
        status: expected.status,
        reason: expected.reason,
      });
    }
    expect(
      (await run(app.gate, 'add_to_cart', { quantity: 99 })).reason?.issues?.map((i) => i.message),
    ).toEqual(['is required', 'must be <= 10 (got integer 99)']);
    expect(
      (await run(app.gate, 'lookup', { tags: { long: 1 } })).reason?.issues?.map((i) => i.message),
    ).toContain('property name must be valid (got object)');
    expect(
      app.modules.filter((id) => /@cfworker|ajv\/dist\/(?!runtime)|ajv-formats\/dist\/index/.test(id)),
    ).toEqual([]);
    expect(app.modules.some((id) => id.endsWith(join('src', 'compiled.ts')))).toBe(true);
  }, 30_000);

  it('makes a tool whose schema it could not read unavailable, saying how to fix it', async () => {
    const app = await buildApp('app.ts');
    const problem = app.gate.check().find((p) => p.tool === 'made_at_runtime');
    expect(problem?.message).toMatch(/not compiled at build time.*runtimeSchemas: true/);
    const call = await run(app.gate, 'made_at_runtime', { q: 'x' });
    expect(call.status).toBe('rejected');
    expect(call.reason?.code).toBe('tool_unavailable');
    // The others still work.
    expect((await run(app.gate, 'lookup', { id: 'abc' })).status).toBe('committed');
  }, 30_000);

  it('keeps the runtime validator for such schemas when asked to', async () => {
    const app = await buildApp('app.ts', { runtimeSchemas: true });
    expect(app.gate.check()).toEqual([]);
    expect((await run(app.gate, 'made_at_runtime', { q: 'x' })).status).toBe('committed');
    expect((await run(app.gate, 'made_at_runtime', { q: 1 })).reason?.issues?.[0]?.message).toBe(
      'must be string (got integer 1)',
    );
  }, 30_000);

  it('does not check a schema changed after the plugin read it with the code generated from it', async () => {
    const app = await buildApp('changed.js');
    expect(app.gate.check().map((problem) => [problem.tool, problem.message])).toEqual([
      ['search', expect.stringMatching(/changed after it was read there/)],
    ]);
    expect((await run(app.gate, 'search', {})).reason?.code).toBe('tool_unavailable');
    // With a validator in the app, the schema is checked as it now stands.
    const kept = await buildApp('changed.js', { runtimeSchemas: true });
    const call = await run(kept.gate, 'search', { extra: 1 });
    expect({ status: call.status, code: call.reason?.code }).toEqual({
      status: 'rejected',
      code: 'invalid_arguments',
    });
    expect(call.reason?.issues?.map((issue) => issue.path).sort()).toEqual(['/extra', '/q']);
  }, 30_000);

  it('fails the build on a written-out schema that is not a JSON Schema, naming where it is', async () => {
    await expect(buildApp('broken.js')).rejects.toThrow(/broken\.js.*does not compile: schema is invalid/s);
  }, 30_000);

  it('says what to install when magic-string, an optional peer, is missing', async () => {
    vi.resetModules();
    vi.doMock('magic-string', () => {
      throw new Error("Cannot find package 'magic-string'");
    });
    try {
      const fresh = await import('../src/vite.ts');
      const built = build({
        configFile: false,
        logLevel: 'silent',
        root: APP,
        plugins: [fresh.toolgate(), installed],
        build: { write: false, lib: { entry: join(APP, 'app.ts'), formats: ['es'], fileName: 'app' } },
      });
      await expect(built).rejects.toThrow(/needs magic-string.*npm install --save-dev magic-string/);
    } finally {
      vi.doUnmock('magic-string');
      vi.resetModules();
    }
  }, 30_000);

  it('does the same in the dev server', async () => {
    const server = await createServer({
      configFile: false,
      logLevel: 'silent',
      root: APP,
      plugins: [toolgate(), installed],
      server: { middlewareMode: true, ws: false },
      appType: 'custom',
    });
    try {
      const app = (await server.ssrLoadModule(join(APP, 'app.ts'))) as BuiltApp;
      const call = await run(app.gate, 'refund', { email: 'not an email', reason: 'late', note: 'too long' });
      expect(call.reason?.issues?.map((issue) => issue.path)).toEqual(['/email', '/note']);
      expect(app.gate.check().map((problem) => problem.tool)).toEqual(['made_at_runtime']);
      // What the browser is sent: the app's module importing the helper the generated code
      // requires, and that helper as an ES module.
      const page = await server.transformRequest('/app.ts');
      expect(page?.code).toMatch(/import .* from "\/@id\/__x00__toolgate-cjs:.*ucs2length\.js"/);
      const helper = await server.transformRequest(
        `virtual:toolgate-cjs:${createRequire(import.meta.url).resolve('ajv/dist/runtime/ucs2length')}`,
      );
      expect(helper?.code).toMatch(/export default/);
    } finally {
      await server.close();
    }
  }, 30_000);
});
