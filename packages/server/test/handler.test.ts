// toolgateHandler over real HTTP: served by @hono/node-server on 127.0.0.1, asked with Node's fetch.
import { defineTool, inputHash, type Clock, type ToolCallRecord } from '@toolgate/core';
import { systemClock } from '@toolgate/core/kit';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  createServerGate,
  toolgateHandler,
  type Ledger,
  type ServerGate,
  type ServerGateOptions,
  type ToolgateHandlerOptions,
} from '../src/index.ts';
import { as, bearer, openFeed, post, serve, type Served, type WireMove } from './support/http.ts';
import { start } from './support/processes.ts';
import { describeLedgers, type Target } from './support/ledgers.ts';

const charge = defineTool({
  name: 'charge',
  inputSchema: {
    type: 'object',
    properties: { amount_cents: { type: 'integer', minimum: 1 }, currency: { enum: ['USD', 'EUR'] } },
    required: ['amount_cents', 'currency'],
    additionalProperties: false,
  },
  needsApproval: (input) => input.amount_cents > 5000,
  execute: (input) => ({ charged: input.amount_cents }),
});

/** Runs until the test lets it go (or the call is cancelled). */
const held = new Map<string, () => void>();
const slow = defineTool({
  name: 'export_report',
  inputSchema: { type: 'object', properties: { report: { type: 'string' } }, required: ['report'] },
  execute: (input, { call, signal }) =>
    new Promise<{ exported: string }>((resolve) => {
      const done = () => resolve({ exported: input.report });
      held.set(call.id, done);
      signal.addEventListener('abort', done);
    }),
});

const small = { amount_cents: 100, currency: 'USD' } as const;
const large = { amount_cents: 9000, currency: 'EUR' } as const;
const proposal = (id: string, args: object, name = 'charge') => ({ id, name, arguments: args });

/** The server gate's clock: real time, moved forward by `skip` to run out an approval. */
function skippingClock(): Clock & { skip: (ms: number) => void } {
  let offset = 0;
  return { ...systemClock, now: () => Date.now() + offset, skip: (ms) => void (offset += ms) };
}

interface Setup {
  readonly ledger: Ledger;
  readonly gate: ServerGate;
  readonly served: Served;
  /** `http://127.0.0.1:<port>/api/toolgate` */
  readonly base: string;
  readonly errors: unknown[];
  readonly clock: ReturnType<typeof skippingClock>;
  /** Listeners on the ledger's commits now: every live feed holds one through the gate. */
  readonly listening: () => number;
}

let cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const done of held.values()) done();
  held.clear();
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

/**
 * A ledger, a server gate over it (alice owns what she proposes; `auditor` may see every session
 * but decide nothing), and the handler served on loopback.
 */
async function setup(
  target: Target,
  options: { handler?: Partial<ToolgateHandlerOptions>; gate?: Partial<ServerGateOptions> } = {},
): Promise<Setup> {
  const opened = await (await target.fresh()).open();
  let listeners = 0;
  const ledger: Ledger = {
    ...opened,
    onCommitted(listener) {
      listeners += 1;
      const stop = opened.onCommitted(listener);
      let stopped = false;
      return () => {
        if (!stopped) listeners -= 1;
        stopped = true;
        stop();
      };
    },
  };
  const clock = skippingClock();
  const gate = createServerGate({
    tools: [charge, slow],
    ledger,
    recover: false,
    clock,
    canSee: (principal, session) => principal === session.owner || principal === 'auditor',
    ...options.gate,
  });
  const errors: unknown[] = [];
  const served = await serve(
    toolgateHandler(gate, {
      authenticate: bearer,
      onError: (error) => errors.push(error),
      ...options.handler,
    }),
  );
  cleanup.push(
    () => served.close(),
    () => gate.close(),
  );
  return {
    ledger,
    gate,
    served,
    base: `${served.origin}/api/toolgate`,
    errors,
    clock,
    listening: () => listeners,
  };
}

/** Everything the ledger holds, to compare before and after a request. */
async function contents(ledger: Ledger) {
  return {
    sessions: await ledger.db.selectFrom('toolgate_sessions').selectAll().orderBy('id').execute(),
    calls: await ledger.db.selectFrom('toolgate_calls').selectAll().orderBy('id').execute(),
    approvals: await ledger.db.selectFrom('toolgate_approvals').selectAll().orderBy('call_id').execute(),
    events: await ledger.eventsAfter(0),
  };
}

/** Alice's session `s1`: a call awaiting approval (`big`), one committed (`done`), one running (`run`). */
async function aliceSession(
  gate: ServerGate,
): Promise<{ big: ToolCallRecord; done: ToolCallRecord; run: ToolCallRecord }> {
  const options = { session: 's1', principal: 'alice' };
  const big = await gate.propose(proposal('big', large), options);
  const done = await gate.run(proposal('done', small), options);
  const run = await gate.propose(proposal('run', { report: 'q3' }, 'export_report'), options);
  expect([big.status, done.status, run.status]).toEqual(['awaiting_approval', 'committed', 'executing']);
  return { big, done, run };
}

const json = async (response: Response) => ({ status: response.status, body: await response.json() });
/** A JSON error body: its code, and its message (any string when not given). */
const error = (code: string, message?: string | RegExp) => ({
  error: {
    code,
    message:
      message === undefined
        ? (expect.any(String) as unknown)
        : typeof message === 'string'
          ? message
          : (expect.stringMatching(message) as unknown),
  },
});

describeLedgers(
  'toolgateHandler over HTTP',
  (target) => {
    describe('routes', () => {
      it('GET …/sessions/:session/calls answers { seq, calls } with what the principal may see', async () => {
        const { gate, base, ledger } = await setup(target);
        const { big, done, run } = await aliceSession(gate);
        const response = await fetch(`${base}/sessions/s1/calls`, { headers: as('alice') });
        expect(response.status).toBe(200);
        expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
        expect(response.headers.get('cache-control')).toBe('no-store');
        const body = (await response.json()) as { seq: number; calls: ToolCallRecord[] };
        expect(body.seq).toBe(await ledger.head());
        expect(body.calls).toEqual(
          [big, done, run].map((call) =>
            expect.objectContaining({ id: call.id, status: call.status, input: call.input }),
          ),
        );
        expect(body.calls[1]).toMatchObject({ output: { charged: 100 } });
        // Another principal allowed by canSee sees the same; a session nobody proposed into is empty.
        expect(
          (await json(await fetch(`${base}/sessions/s1/calls`, { headers: as('auditor') }))).body,
        ).toEqual(body);
        expect(await json(await fetch(`${base}/sessions/fresh/calls`, { headers: as('mallory') }))).toEqual({
          status: 200,
          body: { seq: body.seq, calls: [] },
        });
      });

      it('POST …/calls/:id/approve with the hash of the shown input runs the call', async () => {
        const { gate, base } = await setup(target);
        const { big } = await aliceSession(gate);
        expect(
          await post(`${base}/calls/big/approve`, 'alice', { inputHash: await inputHash(big.input) }),
        ).toMatchObject({ status: 200, body: { ok: true } });
        expect(await gate.settled('big')).toMatchObject({ status: 'committed', output: { charged: 9000 } });
      });

      it('POST …/deny and …/cancel post an optional reason; ids are percent-decoded', async () => {
        const { gate, base } = await setup(target);
        const options = { session: 's1', principal: 'alice' };
        await gate.propose(proposal('call 1/b', large), options);
        await gate.propose(proposal('run', { report: 'q3' }, 'export_report'), options);
        expect(
          await post(`${base}/calls/${encodeURIComponent('call 1/b')}/deny`, 'alice', {
            reason: 'wrong card',
          }),
        ).toMatchObject({ status: 200, body: { ok: true } });
        expect(await post(`${base}/calls/run/cancel`, 'alice', {})).toMatchObject({
          status: 200,
          body: { ok: true },
        });
        expect(await gate.get('call 1/b')).toMatchObject({
          status: 'cancelled',
          reason: { code: 'approval_denied', message: 'wrong card' },
        });
        expect(await gate.get('run')).toMatchObject({
          status: 'cancelled',
          reason: { code: 'user_cancelled', message: 'the user cancelled this call' },
        });
      });

      it('an empty body counts as {}: cancel needs no body', async () => {
        const { gate, base } = await setup(target);
        await gate.propose(proposal('run', { report: 'q3' }, 'export_report'), {
          session: 's1',
          principal: 'alice',
        });
        const response = await fetch(`${base}/calls/run/cancel`, {
          method: 'POST',
          headers: as('alice', { 'content-type': 'application/json' }),
        });
        expect(await json(response)).toEqual({ status: 200, body: { ok: true } });
        expect((await gate.get('run'))?.status).toBe('cancelled');
      });

      it("mounts under another basePath, and at the root as Express's app.use leaves the path", async () => {
        const opened = await (await target.fresh()).open();
        const gate = createServerGate({ tools: [charge], ledger: opened, recover: false });
        cleanup.push(() => gate.close());
        await gate.propose(proposal('c1', small), { session: 's1', principal: 'alice' });
        for (const [basePath, path] of [
          ['/toolgate/', '/toolgate/sessions/s1/calls'],
          ['/', '/sessions/s1/calls'],
        ] as const) {
          const served = await serve(toolgateHandler(gate, { authenticate: bearer, basePath }));
          cleanup.push(() => served.close());
          expect(
            (await json(await fetch(`${served.origin}${path}`, { headers: as('alice') }))).body,
          ).toMatchObject({ calls: [{ id: 'c1' }] });
          expect(
            await json(
              await fetch(`${served.origin}/api/toolgate/sessions/s1/calls`, { headers: as('alice') }),
            ),
          ).toMatchObject(
            basePath === '/'
              ? { status: 404, body: error('not_found') }
              : { status: 404, body: error('not_found', 'no route /api/toolgate/sessions/s1/calls') },
          );
        }
      });
    });

    describe('refusals: the status, the code, and a ledger left exactly as it was', () => {
      it('answers each malformed, unauthenticated or misrouted request with its status and code, and changes nothing', async () => {
        const { gate, base, ledger, served } = await setup(target, { handler: { maxBodyBytes: 1024 } });
        const { big } = await aliceSession(gate);
        const hash = await inputHash(big.input);
        const approve = `${base}/calls/big/approve`;
        const send = (url: string, init: RequestInit) => fetch(url, init).then(json);
        const postRaw = (
          url: string,
          principal: string | undefined,
          body: string,
          headers: Record<string, string> = {},
        ) =>
          send(url, {
            method: 'POST',
            headers: as(principal, { 'content-type': 'application/json', ...headers }),
            body,
          });
        const cases: [
          string,
          () => Promise<{ status: number; body: unknown }>,
          number,
          ReturnType<typeof error>,
        ][] = [
          [
            'no principal: GET calls',
            () => send(`${base}/sessions/s1/calls`, {}),
            401,
            error('unauthenticated', 'sign in first: this request carries no principal'),
          ],
          [
            'no principal: GET events',
            () => send(`${base}/sessions/s1/events`, {}),
            401,
            error('unauthenticated'),
          ],
          [
            'no principal: POST approve',
            () => postRaw(approve, undefined, JSON.stringify({ inputHash: hash })),
            401,
            error('unauthenticated'),
          ],
          [
            'a principal authenticate does not know',
            () =>
              postRaw(approve, undefined, JSON.stringify({ inputHash: hash }), {
                authorization: 'Basic YWxpY2U6',
              }),
            401,
            error('unauthenticated'),
          ],
          [
            'a foreign principal: GET calls',
            () => send(`${base}/sessions/s1/calls`, { headers: as('mallory') }),
            403,
            error('forbidden', 'you may not see session "s1"'),
          ],
          [
            'a foreign principal: GET events',
            () => send(`${base}/sessions/s1/events`, { headers: as('mallory') }),
            403,
            error('forbidden'),
          ],
          [
            'an unknown route',
            () => send(`${base}/sessions/s1`, { headers: as('alice') }),
            404,
            error('not_found', 'no route /api/toolgate/sessions/s1'),
          ],
          [
            'an unknown action',
            () => postRaw(`${base}/calls/big/publish`, 'alice', '{}'),
            404,
            error('not_found'),
          ],
          [
            'a path outside the base',
            () => send(`${served.origin}/elsewhere/sessions/s1/calls`, { headers: as('alice') }),
            404,
            error('not_found'),
          ],
          [
            'a path with more after the route',
            () => send(`${base}/sessions/s1/calls/extra`, { headers: as('alice') }),
            404,
            error('not_found'),
          ],
          [
            'GET on approve',
            () => send(approve, { headers: as('alice') }),
            405,
            error('method_not_allowed', 'use POST here'),
          ],
          [
            'POST on calls',
            () => postRaw(`${base}/sessions/s1/calls`, 'alice', '{}'),
            405,
            error('method_not_allowed', 'use GET here'),
          ],
          [
            'PUT on events',
            () => send(`${base}/sessions/s1/events`, { method: 'PUT', headers: as('alice'), body: '{}' }),
            405,
            error('method_not_allowed'),
          ],
          [
            'DELETE on cancel',
            () => send(`${base}/calls/big/cancel`, { method: 'DELETE', headers: as('alice') }),
            405,
            error('method_not_allowed'),
          ],
          [
            'a declared Content-Length over the limit',
            () => postRaw(approve, 'alice', JSON.stringify({ inputHash: hash, pad: 'x'.repeat(2000) })),
            413,
            error('too_large', 'the body may be at most 1024 bytes'),
          ],
          [
            'text/plain',
            () =>
              postRaw(approve, 'alice', JSON.stringify({ inputHash: hash }), {
                'content-type': 'text/plain',
              }),
            415,
            error('unsupported_media_type', 'send the body as application/json'),
          ],
          [
            'no content type',
            () =>
              send(approve, {
                method: 'POST',
                headers: as('alice'),
                body: new TextEncoder().encode(JSON.stringify({ inputHash: hash })),
              }),
            415,
            error('unsupported_media_type'),
          ],
          [
            'a content type that only starts like JSON',
            () =>
              postRaw(approve, 'alice', JSON.stringify({ inputHash: hash }), {
                'content-type': 'application/jsonp',
              }),
            415,
            error('unsupported_media_type'),
          ],
          [
            'malformed JSON',
            () => postRaw(approve, 'alice', `{"inputHash": "${hash}"`),
            400,
            error('malformed', 'the body is not valid JSON'),
          ],
          [
            'a JSON array',
            () => postRaw(approve, 'alice', `["${hash}"]`),
            400,
            error('malformed', 'the body must be a JSON object'),
          ],
          [
            'approve without inputHash',
            () => postRaw(approve, 'alice', '{}'),
            400,
            error('malformed', /^approve needs \{ "inputHash"/),
          ],
          [
            'approve with an inputHash that is no SHA-256 hex',
            () => postRaw(approve, 'alice', JSON.stringify({ inputHash: hash.toUpperCase() })),
            400,
            error('malformed'),
          ],
          [
            'deny with a reason that is not a string',
            () => postRaw(`${base}/calls/big/deny`, 'alice', '{"reason":42}'),
            400,
            error('malformed', '`reason` must be a string'),
          ],
          [
            'a path that is not valid percent-encoding',
            () => postRaw(`${base}/calls/%E0%A4%A/approve`, 'alice', JSON.stringify({ inputHash: hash })),
            400,
            error('malformed', 'the path is not valid percent-encoding'),
          ],
          [
            'a Last-Event-ID that is no seq',
            () => send(`${base}/sessions/s1/events`, { headers: as('alice', { 'last-event-id': 'latest' }) }),
            400,
            error('malformed', 'Last-Event-ID must be the seq of an event this feed sent'),
          ],
        ];
        const before = await contents(ledger);
        for (const [name, request, status, body] of cases) {
          expect({ name, ...(await request()) }).toEqual({ name, status, body });
          expect(await contents(ledger), name).toEqual(before);
        }
        const wrongMethod = await fetch(approve, { headers: as('alice') });
        expect(wrongMethod.headers.get('allow')).toBe('POST');
        // Nothing was half-applied: the call still waits, and approving it now works.
        expect(await post(approve, 'alice', { inputHash: hash })).toMatchObject({ status: 200 });
        expect((await gate.settled('big'))?.status).toBe('committed');
      });

      it("refuses a decision with 403, 404 or 409 and the gate's code; the call is unchanged and the refusal is audited", async () => {
        const { gate, base, ledger } = await setup(target);
        const { big } = await aliceSession(gate);
        const hash = await inputHash(big.input);
        const cases: [
          string,
          string,
          string,
          object,
          number,
          string,
          { actor: string; code: string; status: string } | undefined,
        ][] = [
          [
            'a principal who may see but not decide',
            'big/approve',
            'auditor',
            { inputHash: hash },
            403,
            'forbidden',
            { actor: 'auditor', code: 'forbidden', status: 'awaiting_approval' },
          ],
          [
            'a foreign principal (who may not even see it)',
            'big/approve',
            'mallory',
            { inputHash: hash },
            404,
            'not_found',
            { actor: 'mallory', code: 'forbidden', status: 'awaiting_approval' },
          ],
          ['an unknown call', 'nope/approve', 'alice', { inputHash: hash }, 404, 'not_found', undefined],
          [
            'approving other arguments than the call holds',
            'big/approve',
            'alice',
            { inputHash: await inputHash({ ...large, amount_cents: 1 }) },
            409,
            'stale',
            { actor: 'alice', code: 'stale', status: 'awaiting_approval' },
          ],
          [
            'approving a running call',
            'run/approve',
            'alice',
            { inputHash: hash },
            409,
            'not_awaiting',
            { actor: 'alice', code: 'not_awaiting', status: 'executing' },
          ],
          [
            'denying a running call',
            'run/deny',
            'alice',
            {},
            409,
            'not_awaiting',
            { actor: 'alice', code: 'not_awaiting', status: 'executing' },
          ],
          [
            'cancelling a settled call',
            'done/cancel',
            'alice',
            {},
            409,
            'settled',
            { actor: 'alice', code: 'settled', status: 'committed' },
          ],
          [
            'denying a settled call',
            'done/deny',
            'alice',
            { reason: 'too late' },
            409,
            'settled',
            { actor: 'alice', code: 'settled', status: 'committed' },
          ],
        ];
        for (const [name, path, principal, body, status, code, audited] of cases) {
          const before = await contents(ledger);
          const answer = await post(`${base}/calls/${path}`, principal, body);
          expect({ name, status: answer.status, body: answer.body }).toEqual({
            name,
            status,
            body: error(code),
          });
          const after = await contents(ledger);
          expect({ name, calls: after.calls, approvals: after.approvals, sessions: after.sessions }).toEqual({
            name,
            calls: before.calls,
            approvals: before.approvals,
            sessions: before.sessions,
          });
          const added = after.events.slice(before.events.length);
          expect(after.events.slice(0, before.events.length)).toEqual(before.events);
          expect({ name, added }).toEqual({
            name,
            added:
              audited === undefined
                ? []
                : [
                    expect.objectContaining({
                      callId: path.split('/')[0],
                      from: audited.status,
                      to: audited.status,
                      actor: audited.actor,
                      reason: expect.objectContaining({ code: audited.code }),
                    }),
                  ],
          });
        }
        expect(await post(`${base}/calls/big/approve`, 'alice', { inputHash: hash })).toMatchObject({
          status: 200,
        });
        expect((await gate.settled('big'))?.status).toBe('committed');
      });

      it('an approval that comes after its time is refused with 409 expired, and the call is cancelled with approval_expired', async () => {
        const { gate, base, clock } = await setup(target, { gate: { approvalTtlMs: 60_000 } });
        const { big } = await aliceSession(gate);
        clock.skip(60_000);
        expect(
          await post(`${base}/calls/big/approve`, 'alice', { inputHash: await inputHash(big.input) }),
        ).toEqual({
          status: 409,
          body: error('expired', 'the approval expired; the call was cancelled'),
          headers: expect.anything() as unknown,
        });
        expect(await gate.get('big')).toMatchObject({
          status: 'cancelled',
          reason: { code: 'approval_expired' },
        });
      });

      it('a principal that authenticate throws for is 401, and the error goes to onError', async () => {
        const failure = new Error('session store down');
        const { base, errors } = await setup(target, {
          handler: {
            authenticate: () => {
              throw failure;
            },
          },
        });
        expect(await json(await fetch(`${base}/sessions/s1/calls`, { headers: as('alice') }))).toEqual({
          status: 401,
          body: error('unauthenticated'),
        });
        expect(errors).toEqual([failure]);
      });

      it('a chunked body (no Content-Length) that grows past the limit is cut off before it is all read', async () => {
        const { gate, base, ledger, served } = await setup(target, { handler: { maxBodyBytes: 1024 } });
        await aliceSession(gate);
        const before = await contents(ledger);
        const upload = endlessBody(256 * 1024 * 1024);
        const response = await fetch(`${base}/calls/big/approve`, {
          method: 'POST',
          headers: as('alice', { 'content-type': 'application/json' }),
          body: upload.body,
          duplex: 'half',
        });
        expect(await json(response)).toEqual({
          status: 413,
          body: error('too_large', 'the body may be at most 1024 bytes'),
        });
        // Answered long before the upload could end, and then the server closes the connection.
        expect(upload.pulled()).toBeLessThan(upload.total);
        await served.drained();
        expect(upload.pulled()).toBeLessThan(upload.total);
        expect(await contents(ledger)).toEqual(before);
      });

      it('reads no further than the limit (the handler asked directly, with a body that never ends)', async () => {
        const ledger = await (await target.fresh()).open();
        const gate = createServerGate({ tools: [charge], ledger, recover: false });
        cleanup.push(() => gate.close());
        const handler = toolgateHandler(gate, { authenticate: bearer, maxBodyBytes: 1024 });
        const upload = endlessBody(Infinity, 100);
        const request = new Request('http://127.0.0.1/api/toolgate/calls/big/approve', {
          method: 'POST',
          headers: as('alice', { 'content-type': 'application/json' }),
          body: upload.body,
          duplex: 'half',
        });
        expect(await json(await handler(request))).toEqual({ status: 413, body: error('too_large') });
        // 1024 bytes are 11 chunks of 100: the 11th passes the limit, and reading stops there.
        expect(upload.pulled()).toBe(1100);
        expect(upload.cancelled()).toBe(true);
        // Declared too large: refused before a byte is read.
        const declared = endlessBody(Infinity, 100);
        const refused = await handler(
          new Request('http://127.0.0.1/api/toolgate/calls/big/approve', {
            method: 'POST',
            headers: as('alice', { 'content-type': 'application/json', 'content-length': '1025' }),
            body: declared.body,
            duplex: 'half',
          }),
        );
        expect(refused.status).toBe(413);
        expect(declared.pulled()).toBe(0);
      });

      it('reads a chunked body under the limit', async () => {
        const { gate, base } = await setup(target, { handler: { maxBodyBytes: 1024 } });
        const { big } = await aliceSession(gate);
        const text = new TextEncoder().encode(JSON.stringify({ inputHash: await inputHash(big.input) }));
        const body = new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(text.slice(0, 10));
            controller.enqueue(text.slice(10));
            controller.close();
          },
        });
        const response = await fetch(`${base}/calls/big/approve`, {
          method: 'POST',
          headers: as('alice', { 'content-type': 'application/json' }),
          body,
          duplex: 'half',
        });
        expect(await json(response)).toEqual({ status: 200, body: { ok: true } });
      });
    });

    describe('the event feed', () => {
      const alice = { session: 's1', principal: 'alice' };
      const path = (moves: readonly WireMove[]) =>
        moves.map(({ event }) => `${event.callId}:${event.from}->${event.to}`);

      it('sends `event: snapshot` (the calls as of a seq), then `event: move` with the record after each move, each with `id: <seq>`', async () => {
        const { gate, base, ledger } = await setup(target);
        await gate.run(proposal('c0', small), alice);
        const head = await ledger.head();
        const feed = await openFeed(`${base}/sessions/s1/events`, { principal: 'alice' });
        cleanup.push(() => feed.close());
        expect(feed.response.status).toBe(200);
        expect(feed.response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
        expect(feed.response.headers.get('cache-control')).toBe('no-store');
        await feed.until(() => feed.messages.length === 1);
        expect(feed.messages[0]).toEqual({
          id: String(head),
          event: 'snapshot',
          data: {
            seq: head,
            calls: [
              expect.objectContaining({
                id: 'c0',
                status: 'committed',
                input: small,
                output: { charged: 100 },
              }),
            ],
          },
        });
        await gate.run(proposal('c1', { amount_cents: 250, currency: 'EUR' }), alice);
        await feed.until(() => feed.moves().length === 4);
        expect(path(feed.moves())).toEqual([
          'c1:null->pending',
          'c1:pending->validated',
          'c1:validated->executing',
          'c1:executing->committed',
        ]);
        expect(feed.messages.slice(1).map((message) => message.id)).toEqual(
          feed.moves().map(({ event }) => String(event.seq)),
        );
        expect(feed.moves().map(({ event }) => event.seq)).toEqual([head + 1, head + 2, head + 3, head + 4]);
        expect(feed.moves()[3]).toEqual({
          event: expect.objectContaining({ session: 's1', actor: 'alice', seq: head + 4 }),
          record: expect.objectContaining({
            id: 'c1',
            status: 'committed',
            input: { amount_cents: 250, currency: 'EUR' },
            output: { charged: 250 },
          }),
        });
      });

      it('with Last-Event-ID sends no snapshot, and every move after that seq, then live ones', async () => {
        const { gate, base } = await setup(target);
        await gate.run(proposal('c0', small), alice);
        await gate.run(proposal('c1', small), alice);
        const feed = await openFeed(`${base}/sessions/s1/events`, { principal: 'alice', lastEventId: 2 });
        cleanup.push(() => feed.close());
        await feed.until(() => feed.moves().length === 6);
        expect(feed.messages.map((message) => message.event)).toEqual(Array(6).fill('move'));
        expect(feed.moves().map(({ event }) => event.seq)).toEqual([3, 4, 5, 6, 7, 8]);
        await gate.propose(proposal('c2', large), alice);
        await feed.until(() => feed.moves().length === 9);
        expect(path(feed.moves().slice(6))).toEqual([
          'c2:null->pending',
          'c2:pending->validated',
          'c2:validated->awaiting_approval',
        ]);
      });

      it('a reconnect with Last-Event-ID in the middle of a burst of 500 events gets every event exactly once', async () => {
        const { gate, base, ledger } = await setup(target);
        const first = await openFeed(`${base}/sessions/s1/events`, { principal: 'alice' });
        await first.until(() => first.messages.length === 1);
        let reconnect!: () => void;
        const reconnecting = new Promise<void>((resolve) => (reconnect = resolve));
        const burst = (async () => {
          // 125 calls of 4 moves each, five at a time; the client goes after 30 calls and comes back during the rest.
          for (let batch = 0; batch < 25; batch += 1) {
            if (batch === 6) await reconnecting;
            await Promise.all(
              [0, 1, 2, 3, 4].map((n) => gate.run(proposal(`c${batch * 5 + n}`, small), alice)),
            );
          }
        })();
        await first.until(() => first.moves().length >= 100);
        first.close();
        await first.ended;
        const lastId = first.messages.at(-1)?.id ?? '';
        reconnect();
        const second = await openFeed(`${base}/sessions/s1/events`, {
          principal: 'alice',
          lastEventId: lastId,
        });
        cleanup.push(() => second.close());
        await burst;
        const all = (await ledger.eventsAfter(0, { session: 's1', limit: 10_000 })).map((event) => event.seq);
        expect(all).toHaveLength(500);
        await second.until(() => second.moves().at(-1)?.event.seq === all.at(-1));
        expect(first.messages[0]).toMatchObject({ event: 'snapshot', data: { seq: 0, calls: [] } });
        expect(second.messages.every((message) => message.event === 'move')).toBe(true);
        expect([...first.moves(), ...second.moves()].map(({ event }) => event.seq)).toEqual(all);
      });

      it('100 concurrent clients all see every event', async () => {
        // One principal's hundred feeds: past the default bound, the oldest would be ended.
        const { gate, base, ledger } = await setup(target, { handler: { maxFeedsPerPrincipal: 100 } });
        const feeds = await Promise.all(
          Array.from({ length: 100 }, () => openFeed(`${base}/sessions/s1/events`, { principal: 'alice' })),
        );
        cleanup.push(() => feeds.forEach((feed) => feed.close()));
        await Promise.all(feeds.map((feed) => feed.until(() => feed.messages.length > 0)));
        for (let n = 0; n < 5; n += 1) await gate.run(proposal(`c${n}`, small), alice);
        const all = (await ledger.eventsAfter(0, { session: 's1' })).map((event) => event.seq);
        expect(all).toHaveLength(20);
        await Promise.all(feeds.map((feed) => feed.until(() => feed.moves().length >= 20)));
        for (const feed of feeds) expect(feed.moves().map(({ event }) => event.seq)).toEqual(all);
      });

      it('sends heartbeats as comments', async () => {
        const { base } = await setup(target, { handler: { heartbeatMs: 20 } });
        const feed = await openFeed(`${base}/sessions/s1/events`, { principal: 'alice' });
        cleanup.push(() => feed.close());
        await feed.until(() => feed.comments.filter((comment) => comment.trim() === 'heartbeat').length >= 3);
        expect(feed.messages.map((message) => message.event)).toEqual(['snapshot']);
      });

      it("a feed opened on a session before its first call never shows another principal's calls", async () => {
        // Whom mallory's feed asked about (once per event it would deliver), and whether alice shared the session yet.
        const asked = counter();
        let shared = false;
        const { gate, base, ledger } = await setup(target, {
          gate: {
            canSee: (principal, session) => {
              if (principal === 'mallory') asked.add();
              return principal === session.owner || (principal === 'mallory' && shared);
            },
          },
        });
        const mallory = await openFeed(`${base}/sessions/fresh/events`, { principal: 'mallory' });
        cleanup.push(() => mallory.close());
        await mallory.until(() => mallory.messages.length === 1);
        expect(mallory.messages[0]?.data).toEqual({ seq: 0, calls: [] });
        const options = { session: 'fresh', principal: 'alice' };
        await gate.propose(proposal('secret', large), options);
        await gate.run(proposal('secret-2', small), options);
        await asked.reaches((await ledger.eventsAfter(0, { session: 'fresh' })).length);
        // Alice shares the session: from here on mallory may see it, and the feed delivers in order.
        shared = true;
        await gate.run(proposal('shared', small), options);
        await mallory.until(() => mallory.moves().some(({ event }) => event.to === 'committed'));
        expect(path(mallory.moves())).toEqual([
          'shared:null->pending',
          'shared:pending->validated',
          'shared:validated->executing',
          'shared:executing->committed',
        ]);
      });

      it('closes cleanly when the client goes: the connection, the ledger subscription and the heartbeat are let go', async () => {
        const setIntervalSpy = vi.spyOn(globalThis, 'setInterval');
        const clearIntervalSpy = vi.spyOn(globalThis, 'clearInterval');
        cleanup.push(() => {
          setIntervalSpy.mockRestore();
          clearIntervalSpy.mockRestore();
        });
        const { gate, base, served, listening } = await setup(target, { handler: { heartbeatMs: 60_000 } });
        const feed = await openFeed(`${base}/sessions/s1/events`, { principal: 'alice' });
        // A call that waits for a person: the gate itself does not follow the ledger for it.
        await gate.propose(proposal('big', large), alice);
        await feed.until(() => feed.moves().length === 3);
        const heartbeats = setIntervalSpy.mock.results
          .filter((_, n) => setIntervalSpy.mock.calls[n]?.[1] === 60_000)
          .map((result) => result.value as unknown);
        expect(heartbeats).toHaveLength(1);
        expect(listening()).toBe(1);
        feed.close();
        await feed.ended;
        await served.drained();
        expect(served.sockets.size).toBe(0);
        expect(listening()).toBe(0);
        expect(clearIntervalSpy.mock.calls.map(([timer]) => timer as unknown)).toEqual(
          expect.arrayContaining(heartbeats),
        );
      });

      it('once the client went and the gate, the server and the ledger are closed, the process has nothing left open', async () => {
        const store = await target.fresh();
        const child = start('feed-client-goes', [`${target.dialect}:${store.location}`]);
        expect(await child.line((message) => message['closed'] === true)).toEqual({ closed: true, moves: 3 });
        expect(await child.exited).toMatchObject({ code: 0, signal: null });
      });

      it("the gate's close() ends its open feeds", async () => {
        const { gate, base } = await setup(target);
        const feed = await openFeed(`${base}/sessions/s1/events`, { principal: 'alice' });
        await feed.until(() => feed.messages.length === 1);
        await gate.close();
        await feed.ended;
        expect(feed.messages.map((message) => message.event)).toEqual(['snapshot']);
      });
    });
  },
  { shared: true },
);

/** Counts, and resolves `reaches(n)` once the count is `n` or more. */
function counter() {
  let count = 0;
  const waiting = new Set<{ n: number; resolve: () => void }>();
  return {
    add() {
      count += 1;
      for (const waiter of [...waiting]) {
        if (count < waiter.n) continue;
        waiting.delete(waiter);
        waiter.resolve();
      }
    },
    reaches: (n: number) =>
      count >= n ? Promise.resolve() : new Promise<void>((resolve) => waiting.add({ n, resolve })),
  };
}

/** A request body that yields `chunkBytes` of spaces each time it is read, up to `total`, and counts what was read. */
function endlessBody(total: number, chunkBytes = 16 * 1024) {
  const chunk = new TextEncoder().encode(' '.repeat(chunkBytes));
  let pulled = 0;
  let cancelled = false;
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (pulled >= total) return controller.close();
        pulled += chunk.byteLength;
        controller.enqueue(chunk);
      },
      cancel() {
        cancelled = true;
      },
    },
    { highWaterMark: 0 },
  );
  return { body, total, pulled: () => pulled, cancelled: () => cancelled };
}
