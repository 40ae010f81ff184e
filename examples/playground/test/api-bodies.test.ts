import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createPlaygroundServer, type PlaygroundServer } from '../src/server/playground-server.ts';

let server: PlaygroundServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("the playground's API reads a body only as far as its limit, whatever server carries it", () => {
  it('refuses a declared or a streamed body over 64 KiB with 413, having read no more than the limit of it', async () => {
    server = await createPlaygroundServer({
      ledgerPath: join(mkdtempSync(join(tmpdir(), 'toolgate-bodies-')), 'playground.db'),
    });
    const visit = await server.fetch(new Request('http://playground.test/api/visit', { method: 'POST' }));
    const cookie = (visit.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const { chat } = (await (
      await server.fetch(new Request('http://playground.test/api/chat', { headers: { cookie } }))
    ).json()) as { chat: { id: string } };

    // Streamed, with no length: 16 MiB offered, in 64 KiB pieces, counting what is pulled.
    let pulled = 0;
    const piece = new Uint8Array(64 * 1024).fill(0x20);
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (pulled >= 16 * 1024 * 1024) return controller.close();
        pulled += piece.byteLength;
        controller.enqueue(piece);
      },
    });
    const streamed = await server.fetch(
      new Request(`http://playground.test/api/chat/${chat.id}/messages`, {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/json' },
        body,
        duplex: 'half',
      } as RequestInit),
    );
    expect(streamed.status).toBe(413);
    expect(await streamed.json()).toEqual({
      error: { code: 'too_large', message: 'the body may be at most 65536 bytes' },
    });
    expect(pulled).toBeLessThanOrEqual(3 * 64 * 1024);

    const declared = await server.fetch(
      new Request(`http://playground.test/api/model`, {
        method: 'PUT',
        headers: { cookie, 'content-type': 'application/json' },
        body: JSON.stringify({ baseURL: 'http://127.0.0.1:1/v1', model: 'x'.repeat(70 * 1024) }),
      }),
    );
    expect(declared.status).toBe(413);
    expect(((await declared.json()) as { error: { code: string } }).error.code).toBe('too_large');
  });
});
