import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { createServerGate, sqliteLedger } from '@toolgate/server';
import { tools } from './tools.ts';

/** The server gate over an SQLite ledger: one per process, shared by every request. */
export async function openServerGate(path: string) {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const ledger = await sqliteLedger({ path });
  const serverGate = createServerGate({ tools, ledger });
  return { serverGate, close: async () => (await serverGate.close(), await ledger.close()) };
}

/** The app's one gate (AI_SDK_CHAT_LEDGER names the SQLite file; default .data/ai-sdk-chat.db). */
export const { serverGate, close } = await openServerGate(
  resolve(process.env['AI_SDK_CHAT_LEDGER'] ?? '.data/ai-sdk-chat.db'),
);

/** The demo's sign-in: a random id in an HttpOnly cookie, set on the first visit. */
export function signedInUser(request: Request): string | undefined {
  const cookie = request.headers.get('cookie') ?? '';
  return /(?:^|;\s*)uid=([\w-]{16,64})(?:;|$)/.exec(cookie)?.[1];
}

/**
 * Who is asking. A real app reads its own session here; never the request body, which is the
 * client's. The app's middleware answers 401 before a request without a user reaches a route.
 */
export function userOf(request: Request): string {
  const user = signedInUser(request);
  if (user === undefined)
    throw new Error('userOf: the request has no signed-in user; the middleware should have refused it.');
  return user;
}
