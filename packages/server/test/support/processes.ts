import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { build } from 'vite';
import { afterAll } from 'vitest';

const runner = fileURLToPath(new URL('./run-ts.mjs', import.meta.url));
const packageRoot = fileURLToPath(new URL('../..', import.meta.url));

/** A TypeScript module of this package running in a process of its own, printing JSON lines. */
export interface Child {
  /** Resolves with the first line printed that `match` accepts. */
  readonly line: (match: (message: Record<string, unknown>) => boolean) => Promise<Record<string, unknown>>;
  /** Every line printed so far. */
  readonly lines: readonly Record<string, unknown>[];
  /** Writes `message` to the process's standard input, as one JSON line. */
  readonly send: (message: unknown) => void;
  /** Resolves when the process is gone, with its exit code or the signal that ended it. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
  readonly kill: (signal: NodeJS.Signals) => void;
}

/** What a child process gets besides its arguments. */
export interface StartOptions {
  /** Added to this process's environment. */
  readonly env?: Readonly<Record<string, string>>;
}

/** Starts `test/support/processes/<name>.ts` with `args`, compiling it as it loads (a few seconds). */
export function start(name: string, args: readonly string[], options: StartOptions = {}): Child {
  const module = fileURLToPath(new URL(`./processes/${name}.ts`, import.meta.url));
  return spawnChild(name, [runner, module, ...args], options);
}

/** A child program compiled once, to be started many times. */
export interface Program {
  readonly start: (args: readonly string[], options?: StartOptions) => Child;
}

const bundles = new Set<string>();
afterAll(() => {
  for (const directory of bundles) rmSync(directory, { recursive: true, force: true });
  bundles.clear();
});

/**
 * Bundles `test/support/processes/<name>.ts` and everything it imports from this workspace into
 * one JavaScript file, for a test that starts it again and again (after each kill): it then starts
 * in a fraction of a second instead of the seconds `start` takes to compile it on every start.
 * The database drivers stay outside the bundle, loaded from this package's node_modules, where
 * the bundle is written.
 */
export async function compile(name: string): Promise<Program> {
  const outDir = fileURLToPath(
    new URL(`../../node_modules/.cache/toolgate-test-${randomBytes(6).toString('hex')}/`, import.meta.url),
  );
  bundles.add(outDir);
  await build({
    configFile: false,
    root: packageRoot,
    logLevel: 'warn',
    build: {
      ssr: fileURLToPath(new URL(`./processes/${name}.ts`, import.meta.url)),
      outDir,
      emptyOutDir: false,
      minify: false,
      target: 'node20',
      rollupOptions: { output: { entryFileNames: '[name].mjs' } },
    },
    ssr: { noExternal: true, external: ['better-sqlite3', 'pg'] },
  });
  const file = `${outDir}${name}.mjs`;
  const { readFileSync, writeFileSync } = await import('node:fs');
  let text = readFileSync(file, 'utf8');
  text = text.replace(
    /(\tasync lock\(\) \{\n)([\s\S]*?)(\n\t\}\n\tunlock\(\) \{\n)/,
    (_m, a, body, c) =>
      `${a}${body}\n(globalThis.__holders ??= []).push(new Error().stack);${c}(globalThis.__holders ??= []).shift();\n`,
  );
  writeFileSync(file, text);
  return { start: (args, options = {}) => spawnChild(name, [file, ...args], options) };
}

function spawnChild(name: string, argv: readonly string[], options: StartOptions): Child {
  const child = spawn(process.execPath, argv, {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, ...options.env },
  });
  // A child that is killed closes its end: writes after that fail, and that is no test failure.
  child.stdin.on('error', () => undefined);
  const lines: Record<string, unknown>[] = [];
  const waiting = new Set<{
    match: (message: Record<string, unknown>) => boolean;
    resolve: (message: Record<string, unknown>) => void;
  }>();
  createInterface({ input: child.stdout }).on('line', (text) => {
    let message: Record<string, unknown>;
    try {
      message = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return;
    }
    lines.push(message);
    for (const waiter of waiting) {
      if (!waiter.match(message)) continue;
      waiting.delete(waiter);
      waiter.resolve(message);
    }
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>(
    (resolve) => {
      // 'close', not 'exit': only then has all of its stderr been read.
      child.on('close', (code, signal) => resolve({ code, signal, stderr }));
    },
  );
  return {
    line: (match) => {
      const seen = lines.find(match);
      if (seen) return Promise.resolve(seen);
      return Promise.race([
        new Promise<Record<string, unknown>>((resolve) => waiting.add({ match, resolve })),
        exited.then(({ code, signal, stderr: errors }) => {
          throw new Error(
            `${name} ended (code ${String(code)}, signal ${String(signal)}) before printing the line awaited:\n${errors}`,
          );
        }),
      ]);
    },
    lines,
    send: (message) => {
      if (child.stdin.writable) child.stdin.write(`${JSON.stringify(message)}\n`);
    },
    exited,
    kill: (signal) => child.kill(signal),
  };
}
