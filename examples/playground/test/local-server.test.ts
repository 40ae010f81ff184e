/**
 * The examples' one-process servers (the playground's and the AI SDK chat's), run as real
 * processes: a taken port, bodies over the limit, and SIGINT / SIGTERM with tabs open.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const EXAMPLES = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

const EXAMPLE = {
  playground: {
    dir: join(EXAMPLES, 'playground'),
    banner: 'toolgate playground:',
    env: (dir: string) => ({ PLAYGROUND_LEDGER: join(dir, 'ledger.db') }),
  },
  'ai-sdk-chat': {
    dir: join(EXAMPLES, 'ai-sdk-chat'),
    banner: 'toolgate ai-sdk-chat:',
    env: (dir: string) => ({ AI_SDK_CHAT_LEDGER: join(dir, 'ledger.db'), OPENAI_API_KEY: '' }),
  },
} as const;
type Example = keyof typeof EXAMPLE;

interface Running {
  readonly child: ChildProcess;
  readonly url: string;
  readonly port: number;
  /** The node process of the server (the child is a shell around it in a process group of its own). */
  readonly pid: number;
  readonly output: () => string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const started: Running[] = [];
const holders: Socket[] = [];
const taken: Server[] = [];
afterEach(() => {
  for (const running of started.splice(0)) {
    try {
      process.kill(-(running.child.pid ?? 0), 'SIGKILL');
    } catch {
      // already gone
    }
  }
  for (const holder of holders.splice(0)) holder.destroy();
  for (const server of taken.splice(0)) server.close();
});

/**
 * Starts `node server.mjs` as `npm run demo` does, under a shell, in a process group of its own (as
 * a terminal's Ctrl-C reaches it), on a free port and a ledger of its own.
 */
async function start(
  example: Example,
  { production = true, port = 0 }: { production?: boolean; port?: number } = {},
): Promise<Running> {
  const { dir, banner, env } = EXAMPLE[example];
  const data = mkdtempSync(join(tmpdir(), `toolgate-local-${example}-`));
  const child = spawn(
    'sh',
    ['-c', `node server.mjs${production ? ' --production' : ''}; echo "shell still here"`],
    {
      cwd: dir,
      env: { ...process.env, PORT: String(port), ...env(data) },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    },
  );
  let output = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.once('exit', (code, signal) => done({ code, signal })),
  );
  const listening = await new Promise<number>((done, fail) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const port = new RegExp(`${banner} http://127\\.0\\.0\\.1:(\\d+)`).exec(output)?.[1];
      if (port !== undefined) done(Number(port));
    });
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    void exited.then(({ code }) =>
      fail(new Error(`${example} ended (code ${String(code)}) before it listened:\n${output}`)),
    );
  });
  const pid = Number(
    readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(/\s+/)[0],
  );
  const running = {
    child,
    url: `http://127.0.0.1:${listening}`,
    port: listening,
    pid,
    output: () => output,
    exited,
  };
  started.push(running);
  return running;
}

/** The process's resident memory, in bytes. */
function rss(pid: number): number {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb) * 1024;
}

/** How long the server took from `signal` to its exit, as it reports it on its way out. */
function stoppedWithin(server: Running, signal: NodeJS.Signals): number {
  const ms = new RegExp(`stopped on ${signal} in (\\d+) ms`).exec(server.output())?.[1];
  expect(ms, server.output()).toBeDefined();
  return Number(ms);
}

/** Whether any process of the group is left. */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Streams `bytes` of body to `path` (one 64 KiB buffer written again and again, so that this test
 * allocates nothing like it) until the server answers; resolves with the answer and what was sent.
 */
function streamBody(
  url: string,
  method: string,
  path: string,
  bytes: number,
  declared: boolean,
): Promise<{ status: number; body: unknown; sent: number }> {
  const block = Buffer.alloc(64 * 1024, 0x20);
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    const req = httpRequest(
      new URL(path, url),
      {
        method,
        headers: {
          'content-type': 'application/json',
          ...(declared ? { 'content-length': String(bytes) } : {}),
        },
      },
      (response: IncomingMessage) => {
        answered = true;
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => {
          req.destroy();
          resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) as unknown, sent });
        });
      },
    );
    req.on('error', (error) => {
      if (!answered) reject(error);
    });
    const pump = () => {
      while (!answered && sent < bytes) {
        sent += block.length;
        if (!req.write(block)) return void req.once('drain', pump);
      }
      if (!answered) req.end();
    };
    pump();
  });
}

describe.each(['playground', 'ai-sdk-chat'] as const)('%s: server.mjs', (example) => {
  it('a taken port is one clear line on stderr and exit code 1', async () => {
    const holder = createServer();
    taken.push(holder);
    await new Promise<void>((done) => holder.listen(0, '127.0.0.1', done));
    const port = (holder.address() as { port: number }).port;
    const { dir, env } = EXAMPLE[example];
    const child = spawn(process.execPath, ['server.mjs', '--production'], {
      cwd: dir,
      env: { ...process.env, PORT: String(port), ...env(mkdtempSync(join(tmpdir(), 'toolgate-port-'))) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    let stdout = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const code = await new Promise<number | null>((done) => child.once('exit', done));
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr.trim().split('\n')).toEqual([
      expect.stringMatching(
        new RegExp(`^toolgate ${example}: port ${port} on 127\\.0\\.0\\.1 is taken .*PORT=`),
      ),
    ]);
    expect(stderr).not.toContain('EADDRINUSE');
  }, 60_000);

  it('a 400 MB body is refused with 413 on every route, without the server reading it into memory; one of unknown length with 411', async () => {
    const server = await start(example);
    const routes: [string, string][] =
      example === 'playground'
        ? [
            ['POST', '/api/visit'],
            ['POST', '/api/chat'],
            ['POST', '/api/chat/chat_x/messages'],
            ['PUT', '/api/model'],
            ['POST', '/api/toolgate/calls/x/approve'],
            ['POST', '/'],
            ['PUT', '/index.html'],
          ]
        : [
            ['POST', '/api/chat'],
            ['POST', '/'],
            ['PUT', '/index.html'],
          ];
    const before = rss(server.pid);
    for (const [method, path] of routes) {
      const answer = await streamBody(server.url, method, path, 400 * 1024 * 1024, true);
      expect({ route: `${method} ${path}`, status: answer.status, body: answer.body }).toEqual({
        route: `${method} ${path}`,
        status: 413,
        body: { error: { code: 'too_large', message: expect.stringMatching(/at most \d+ bytes/) } },
      });
      // Refused at once: the answer came long before the body could have been sent.
      expect(answer.sent).toBeLessThan(64 * 1024 * 1024);
      const chunked = await streamBody(server.url, method, path, 8 * 1024 * 1024, false);
      expect(chunked).toMatchObject({ status: 411, body: { error: { code: 'length_required' } } });
    }
    expect(rss(server.pid) - before).toBeLessThan(48 * 1024 * 1024);
    // And the server still serves.
    const page = await fetch(new URL(example === 'playground' ? '/api/model' : '/api/chat', server.url));
    expect(page.status).toBeLessThan(500);
  }, 90_000);

  it.each(['SIGINT', 'SIGTERM'] as const)(
    'with tabs open (hot reload and event streams), %s to the process group ends every process in it within 2 s',
    async (signal) => {
      const server = await start(example, { production: false });
      const open: Socket[] = [];
      // The dev server's hot-reload socket, as a tab holds it.
      open.push(
        await new Promise<Socket>((done, fail) => {
          const req = httpRequest(new URL('/', server.url), {
            headers: {
              connection: 'Upgrade',
              upgrade: 'websocket',
              'sec-websocket-key': randomBytes(16).toString('base64'),
              'sec-websocket-version': '13',
              'sec-websocket-protocol': 'vite-hmr',
            },
          });
          req.on('upgrade', (_response, socket) => done(socket));
          req.on('response', (response) => fail(new Error(`no upgrade: ${response.statusCode ?? 0}`)));
          req.on('error', fail);
          req.end();
        }),
      );
      if (example === 'playground') {
        const visit = await fetch(new URL('/api/visit', server.url), { method: 'POST' });
        const cookie = (visit.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
        const { chat } = (await (
          await fetch(new URL('/api/chat', server.url), { headers: { cookie } })
        ).json()) as { chat: { id: string } };
        for (const path of [`/api/chat/${chat.id}/events`, `/api/toolgate/sessions/${chat.id}/events`]) {
          open.push(
            await new Promise<Socket>((done, fail) => {
              const req = httpRequest(
                new URL(path, server.url),
                { headers: { cookie, accept: 'text/event-stream' } },
                (response) => {
                  expect(response.statusCode).toBe(200);
                  response.once('data', () => done(response.socket));
                },
              );
              req.on('error', fail);
              req.end();
            }),
          );
        }
      }
      for (const socket of open) socket.on('error', () => undefined);
      holders.push(...open);

      const sent = performance.now();
      process.kill(-(server.child.pid ?? 0), signal);
      // Nothing of the group is left behind: not the server, not the shell that started it. The
      // wall clock here also counts how long a loaded machine takes to deliver and schedule, so the
      // bound on it is loose; the server's own clock, from the signal to its exit, is held to 2 s.
      while (groupAlive(server.child.pid ?? 0) && performance.now() - sent < 10_000)
        await new Promise((done) => setTimeout(done, 20));
      expect(groupAlive(server.child.pid ?? 0), server.output()).toBe(false);
      expect(stoppedWithin(server, signal)).toBeLessThan(2000);
    },
    90_000,
  );

  it('with a tab open, SIGTERM to the server alone ends it within 2 s with code 0', async () => {
    const server = await start(example, { production: false });
    const hmr = await new Promise<Socket>((done, fail) => {
      const req = httpRequest(new URL('/', server.url), {
        headers: {
          connection: 'Upgrade',
          upgrade: 'websocket',
          'sec-websocket-key': randomBytes(16).toString('base64'),
          'sec-websocket-version': '13',
          'sec-websocket-protocol': 'vite-hmr',
        },
      });
      req.on('upgrade', (_response, socket) => done(socket));
      req.on('error', fail);
      req.end();
    });
    hmr.on('error', () => undefined);
    holders.push(hmr);
    process.kill(server.pid, 'SIGTERM');
    // The shell around it goes on once the server is gone: its own exit tells that it was.
    const exit = await Promise.race([
      server.exited,
      new Promise<'late'>((done) => setTimeout(() => done('late'), 10_000)),
    ]);
    expect(exit, server.output()).toEqual({ code: 0, signal: null });
    expect(stoppedWithin(server, 'SIGTERM')).toBeLessThan(2000);
    expect(server.output()).toContain('shell still here');
  }, 90_000);
});
