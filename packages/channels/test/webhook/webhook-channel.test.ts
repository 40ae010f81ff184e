import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { defineTool, inputHash } from '@toolgate/core';
import { createServerGate, sqliteLedger, type Ledger } from '@toolgate/server';
import { createFakeClock, deferred } from '@toolgate/test-utils';
import { Webhook } from 'standardwebhooks';
import { afterEach, expect, it } from 'vitest';
import { webhookChannel, type WebhookPayload } from '../../src/webhook/index.ts';

const SECRET = `whsec_${Buffer.from('a secret both ends share, 32 b!').toString('base64')}`;
const WIRE = { id: 'w1', name: 'wire', arguments: { amount_cents: 500 } };

type Answer = 200 | 500 | 'hang' | { ref: string };

/** A loopback receiver that checks each request's signature with the Standard Webhooks library, and answers as scripted (200 once the script is used up). */
async function receiver(script: Answer[] = []) {
  const received: {
    id: string;
    timestamp: string;
    signature: string;
    body: string;
    payload: WebhookPayload;
  }[] = [];
  const rejected: string[] = [];
  const hanging: ServerResponse[] = [];
  let arrived = deferred();
  const verifier = new Webhook(SECRET);
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const headers = request.headers as Record<string, string>;
      try {
        const payload = verifier.verify(body, headers) as WebhookPayload;
        received.push({
          id: headers['webhook-id'] ?? '',
          timestamp: headers['webhook-timestamp'] ?? '',
          signature: headers['webhook-signature'] ?? '',
          body,
          payload,
        });
      } catch (error) {
        rejected.push(String(error));
        response.writeHead(400).end();
        return;
      }
      arrived.resolve();
      arrived = deferred();
      const answer = script.shift() ?? 200;
      if (answer === 'hang') hanging.push(response);
      else if (typeof answer === 'object')
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
      else response.writeHead(answer).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/toolgate`,
    received,
    rejected,
    next: () => arrived.promise,
    close: async () => {
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

const opened: { close: () => Promise<unknown> }[] = [];
afterEach(async () => {
  for (const thing of opened.splice(0).reverse()) await thing.close();
});

async function setup(url: string, { remindAfterMs }: { remindAfterMs?: number } = {}) {
  const clock = createFakeClock();
  const ledger: Ledger = await sqliteLedger({ path: ':memory:' });
  const wire = defineTool({
    name: 'wire',
    inputSchema: { type: 'object' },
    approvers: () => ['manager_1'],
    ...(remindAfterMs === undefined ? {} : { remindAfterMs }),
    execute: () => ({ sent: true }),
  });
  const gate = createServerGate({
    tools: [wire],
    ledger,
    clock,
    recover: false,
    leaseMs: 4000,
    onError: () => undefined,
    channels: [webhookChannel({ url, secret: SECRET })],
  });
  opened.push(ledger, gate);
  return { gate, clock, ledger };
}

it('signs each notice so that the receiver verifies it with Standard Webhooks, and updates what the receiver showed with the ref it answered', async () => {
  const hook = await receiver([{ ref: 'card-17' }]);
  opened.push(hook);
  const { gate } = await setup(hook.url);
  const call = await gate.propose(WIRE, { session: 'chat_1', principal: 'alice' });
  await gate.recover();
  expect(hook.rejected).toEqual([]);
  expect(hook.received).toHaveLength(1);
  const [asked] = hook.received;
  expect(asked?.payload).toMatchObject({
    type: 'toolgate.notice.asked',
    data: {
      kind: 'asked',
      to: 'manager_1',
      from: { principal: 'alice' },
      call: { id: 'w1', status: 'awaiting_approval' },
    },
  });
  expect(asked?.id).toBe(asked?.payload.data.id);
  expect(asked?.payload.ref).toBeUndefined();

  expect(
    await gate.approve('w1', { principal: 'manager_1', inputHash: await inputHash(call.input) }),
  ).toEqual({
    ok: true,
  });
  await gate.recover();
  await gate.recover();
  expect(hook.received.map(({ payload }) => [payload.type, payload.data.to, payload.ref])).toEqual([
    ['toolgate.notice.asked', 'manager_1', undefined],
    ['toolgate.notice.decided', 'manager_1', 'card-17'],
  ]);
  expect(hook.received[1]?.payload.data.call.status).toMatch(/executing|committed/);
  // The signature covers the body: the same request naming another principal does not verify.
  const headers = {
    'webhook-id': asked?.id ?? '',
    'webhook-timestamp': asked?.timestamp ?? '',
    'webhook-signature': asked?.signature ?? '',
  };
  expect(new Webhook(SECRET).verify(asked?.body ?? '', headers)).toEqual(asked?.payload);
  expect(() =>
    new Webhook(SECRET).verify((asked?.body ?? '').replace('manager_1', 'mallory'), headers),
  ).toThrow(/signature/i);
});

it('updates each message the receiver showed a call in, the ask and the reminder, each under a webhook-id of its own', async () => {
  const hook = await receiver([{ ref: 'card-1' }, { ref: 'card-2' }]);
  opened.push(hook);
  const { gate, clock } = await setup(hook.url, { remindAfterMs: 10_000 });
  await gate.propose(WIRE, { session: 'chat_1', principal: 'alice' });
  await gate.recover();
  clock.advance(10_000);
  await gate.recover();
  await gate.recover();
  await gate.deny('w1', { principal: 'manager_1' });
  await gate.recover();
  await gate.recover();
  expect(hook.rejected).toEqual([]);
  expect(hook.received.map(({ payload }) => [payload.type, payload.ref])).toEqual([
    ['toolgate.notice.asked', undefined],
    ['toolgate.notice.reminder', undefined],
    ['toolgate.notice.decided', 'card-1'],
    ['toolgate.notice.decided', 'card-2'],
  ]);
  const [, , first, second] = hook.received;
  expect(first?.payload.data.id).toBe(second?.payload.data.id);
  expect(new Set(hook.received.map(({ id }) => id)).size).toBe(4);
  expect(first?.id.startsWith(`${first.payload.data.id}.`)).toBe(true);
});

it('a receiver that answers 500, then hangs, gets the notice again with the same webhook-id until it answers 2xx; the call keeps waiting', async () => {
  const hook = await receiver([500, 'hang', 200]);
  opened.push(hook);
  const { gate, clock, ledger } = await setup(hook.url);
  await gate.propose(WIRE, { session: 'chat_1', principal: 'alice' });
  await gate.recover(); // 500: tried again in 1 s
  clock.advance(1000);
  const hung = gate.recover();
  await hook.next();
  clock.advance(2000); // half a lease: the request is given up on
  await hung;
  clock.advance(2000);
  await gate.recover(); // 200
  expect(hook.rejected).toEqual([]);
  expect(hook.received).toHaveLength(3);
  expect(new Set(hook.received.map(({ id }) => id))).toEqual(new Set([hook.received[0]?.payload.data.id]));
  expect(await gate.get('w1')).toMatchObject({ status: 'awaiting_approval' });
  const notes = (await ledger.eventsAfter(0))
    .filter((event) => event.reason?.code?.startsWith('notice_'))
    .map((event) => [event.actor, event.reason?.code, event.reason?.message.replace(/ntc_\w+/, 'ntc')]);
  expect(notes).toEqual([
    [
      'toolgate:webhook',
      'notice_failed',
      `notice ntc (asked) to "manager_1" through "webhook" not delivered (attempt 1): the channel threw: the webhook at ${new URL(hook.url).origin} answered 500; tried again in 1000 ms`,
    ],
    [
      'toolgate:webhook',
      'notice_failed',
      'notice ntc (asked) to "manager_1" through "webhook" not delivered (attempt 2): the channel did not answer within 2000 ms; tried again in 2000 ms',
    ],
    ['toolgate:webhook', 'notice_delivered', 'notice ntc (asked) to "manager_1" through "webhook" delivered'],
  ]);
});

it('refuses a URL that is not http(s) and a secret that is not base64, when the channel is made', () => {
  expect(() => webhookChannel({ url: 'ftp://relay.example/x', secret: SECRET })).toThrow(
    'webhookChannel: `url` must be an http(s) URL (got ftp:).',
  );
  expect(() => webhookChannel({ url: 'https://relay.example/x', secret: 'whsec_not base64!' })).toThrow();
});
