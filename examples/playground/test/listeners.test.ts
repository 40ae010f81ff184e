import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import events from 'node:events';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createPlaygroundServer, type PlaygroundServer } from '../src/server/playground-server.ts';

let server: PlaygroundServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A visitor of an in-process playground server: its cookie, and the API as the page calls it. */
async function visitor(playground: PlaygroundServer) {
  const visit = await playground.fetch(new Request('http://playground.test/api/visit', { method: 'POST' }));
  const cookie = (visit.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await playground.fetch(
      new Request(`http://playground.test/api${path}`, {
        method,
        headers: { cookie, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
    );
    return (await response.json()) as Record<string, unknown>;
  };
  return { call };
}

/** Sends `text` in a new chat at `pace` and resolves once the exchange is over. */
async function exchange(
  playground: PlaygroundServer,
  pace: 'instant' | 'realistic',
  text: string,
): Promise<void> {
  const { call } = await visitor(playground);
  const { chat } = (await call('POST', '/chat', { pace, mode: 'scripted' })) as { chat: { id: string } };
  expect(await call('POST', `/chat/${chat.id}/messages`, { text })).toEqual({ ok: true });
  for (let tries = 0; tries < 400; tries++) {
    const { chat: now } = (await call('GET', '/chat')) as {
      chat: { transcript: { busy: boolean; entries: { kind: string }[] } };
    };
    if (!now.transcript.busy) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('the exchange did not end');
}

describe('an exchange with tool calls adds no abort listeners it does not remove', () => {
  // Node warns once a signal holds more listeners for one event than the limit (10): the sign of
  // a listener added per frame, per call or per turn to a signal that outlives them. With the
  // limit at 3, a listener left behind by each of two turns is caught too, not only by the tenth.
  const limit = events.defaultMaxListeners;
  beforeAll(() => {
    events.defaultMaxListeners = 3;
  });
  afterAll(() => {
    events.defaultMaxListeners = limit;
  });
  const warnings = () => {
    const seen: string[] = [];
    const listen = (warning: Error) => {
      if (warning.name === 'MaxListenersExceededWarning') seen.push(warning.stack ?? warning.message);
    };
    process.on('warning', listen);
    return { seen, stop: () => process.off('warning', listen) };
  };

  it.each([
    [
      'three parallel calls, streamed at the realistic pace',
      'realistic',
      'Add two pairs of socks, a cap and a unicorn plush to my cart.',
    ],
    ['a model stuck on bad arguments, turn after turn', 'instant', 'Pay for my cart: twelve dollars fifty.'],
    ['a flood of 200 calls', 'instant', 'Stock the cart for the scout troop: 200 items, one call each.'],
  ] as const)('%s: no MaxListenersExceededWarning', async (_name, pace, text) => {
    server = await createPlaygroundServer({
      ledgerPath: join(mkdtempSync(join(tmpdir(), 'toolgate-listeners-')), 'playground.db'),
    });
    const watch = warnings();
    try {
      await exchange(server, pace, text);
      // Warnings are emitted on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      watch.stop();
    }
    expect(watch.seen).toEqual([]);
  });
});
