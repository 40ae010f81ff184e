import { randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { getRequestListener } from '@hono/node-server';
import { toolgateHandler, type ServerGate } from '@toolgate/server';

/** The approval page as it runs. */
export interface ApprovalPage {
  /** Each approver's `http://127.0.0.1:<port>/?token=…`: the link they open (the gateway prints them on stderr). */
  readonly urls: Readonly<Record<string, string>>;
  /** The page's address without its token, for text a model reads. */
  readonly origin: string;
  readonly close: () => Promise<void>;
}

/** What the page serves. */
export interface ApprovalPageOptions {
  readonly gate: () => ServerGate;
  readonly session: string;
  /** Who may decide: each gets a token of their own, and a decision made with it is theirs. */
  readonly approvers: readonly string[];
  readonly port: number;
  /** The built page (default: `page/` beside this module once built, or the package's `dist/page/`). */
  readonly assets?: string;
  readonly onError: (error: unknown) => void;
}

const API = '/api/toolgate';
const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.map': 'application/json',
};
const SECURITY_HEADERS = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  // The token is in the page's URL: no request may carry it elsewhere.
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cache-Control': 'no-store',
};

/** Where the built page is: beside the bundled module (`dist/page/`), or the package's `dist/page/` from its sources. */
function defaultAssets(): string {
  const beside = fileURLToPath(new URL('./page/', import.meta.url));
  if (existsSync(join(beside, 'index.html'))) return beside;
  return fileURLToPath(new URL('../dist/page/', import.meta.url));
}

/**
 * Serves the approval page and toolgate's handler on 127.0.0.1 only. Every request needs the
 * page's token (`token=` in the query, or `Authorization: Bearer`), and a `Host` naming this
 * loopback address, so that neither another site in the browser nor a program that only knows the
 * port can approve a call.
 */
export async function startApprovalPage(options: ApprovalPageOptions): Promise<ApprovalPage> {
  const tokens = options.approvers.map((approver) => ({
    approver,
    token: randomBytes(24).toString('base64url'),
  }));
  const assets = options.assets ?? defaultAssets();
  /** Whose token the request carries (`token=` in the query, or `Authorization: Bearer`), if anyone's. */
  const holderOf = (request: Request): { approver: string; token: string } | undefined => {
    const url = new URL(request.url);
    const bearer = /^Bearer (.+)$/.exec(request.headers.get('authorization') ?? '')?.[1];
    const given = Buffer.from(url.searchParams.get('token') ?? bearer ?? '');
    return tokens.find(({ token }) => {
      const expected = Buffer.from(token);
      return given.length === expected.length && timingSafeEqual(given, expected);
    });
  };
  let handler: ((request: Request) => Promise<Response>) | undefined;
  let handlerGate: ServerGate | undefined;
  const api = (request: Request) => {
    const gate = options.gate();
    if (handler === undefined || handlerGate !== gate) {
      // The token was checked before: whoever holds one is the approver it was made for.
      handler = toolgateHandler(gate, {
        authenticate: (request) => holderOf(request)?.approver ?? null,
        basePath: API,
        onError: options.onError,
      });
      handlerGate = gate;
    }
    return handler(request);
  };

  let port = options.port;
  const serve = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    const host = request.headers.get('host');
    if (host !== `127.0.0.1:${port}` && host !== `localhost:${port}`) {
      return text(421, 'This page answers only at its loopback address (127.0.0.1).');
    }
    const isApi = url.pathname === API || url.pathname.startsWith(`${API}/`);
    const holder = holderOf(request);
    if (holder === undefined) {
      if (isApi)
        return json(401, {
          error: {
            code: 'unauthenticated',
            message:
              'The approval page token is missing or wrong: open the link the gateway printed when it started.',
          },
        });
      return text(
        401,
        'This approval page needs its token: open the link the gateway printed when it started (it ends in ?token=…).',
      );
    }
    if (isApi) return api(request);
    if (request.method !== 'GET' && request.method !== 'HEAD') return text(405, 'Only GET is served here.');
    if (url.pathname === '/' || url.pathname === '/index.html')
      return page(assets, options.session, holder.token);
    if (url.pathname.startsWith('/assets/')) return asset(assets, url.pathname);
    return text(404, 'Not found.');
  };

  const listener = getRequestListener(serve);
  const server: HttpServer = createServer((req, res) => void listener(req, res));
  try {
    await listen(server, options.port);
  } catch (error) {
    // Two clients started with one config (Claude Desktop and Cursor, say) each run a gateway:
    // the second one's page takes another port rather than leaving its calls without a page.
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || options.port === 0) throw error;
    await listen(server, 0);
    options.onError(
      new Error(
        `port ${options.port} is taken (by another gateway?), so the approval page is on port ${(server.address() as AddressInfo).port}`,
      ),
    );
  }
  port = (server.address() as AddressInfo).port;
  const origin = `http://127.0.0.1:${port}/`;
  return {
    urls: Object.fromEntries(tokens.map(({ approver, token }) => [approver, `${origin}?token=${token}`])),
    origin,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function listen(server: HttpServer, port: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
}

async function page(assets: string, session: string, token: string): Promise<Response> {
  let html: string;
  try {
    html = await readFile(join(assets, 'index.html'), 'utf8');
  } catch {
    return text(
      503,
      `The approval page is not built (no index.html in ${assets}); build @toolgate/mcp, or approve through the API under ${API}.`,
    );
  }
  // Each asset the page loads carries the token, as every request here must.
  const withToken = html.replace(
    /(src|href)="(\/assets\/[^"?]+)"/g,
    (_, attribute: string, path: string) => `${attribute}="${path}?token=${token}"`,
  );
  const config = JSON.stringify({ session, api: API }).replace(/</g, '\\u003c');
  const body = withToken.replace(
    '<!--toolgate-config-->',
    `<script type="application/json" id="toolgate-config">${config}</script>`,
  );
  return new Response(body, { headers: { ...SECURITY_HEADERS, 'Content-Type': 'text/html; charset=utf-8' } });
}

async function asset(assets: string, pathname: string): Promise<Response> {
  const file = normalize(join(assets, pathname));
  if (!file.startsWith(normalize(assets + sep))) return text(404, 'Not found.');
  try {
    const body = await readFile(file);
    return new Response(body, {
      headers: { ...SECURITY_HEADERS, 'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream' },
    });
  } catch {
    return text(404, 'Not found.');
  }
}

function text(status: number, body: string): Response {
  return new Response(body, {
    status,
    headers: { ...SECURITY_HEADERS, 'Content-Type': 'text/plain; charset=utf-8' },
  });
}

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { ...SECURITY_HEADERS, 'Content-Type': 'application/json' },
  });
}
