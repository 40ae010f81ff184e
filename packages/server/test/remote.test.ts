// @vitest-environment jsdom
// The browser's mirror (createRemoteGate from @toolgate/core/remote, in jsdom) against the real
// thing: a server gate over a ledger, its toolgateHandler served on loopback by @hono/node-server.
// What only a scripted server can do (malformed wire data, overlapping replays, a server that cannot
// resume) is tested in @toolgate/core against its loopback server.
import { createHash } from 'node:crypto';
import { defineTool, inputHash, type ToolCallRecord } from '@toolgate/core';
import { createRemoteGate, type RemoteGate, type RemoteGateOptions } from '@toolgate/core/remote';
import { afterEach, describe, expect, it } from 'vitest';
import { createStore } from 'zustand/vanilla';
import { createFakeClock, errorLog, type FakeClock, when } from '@toolgate/test-utils';
import {
  createServerGate,
  toolgateHandler,
  type Ledger,
  type ServerGate,
  type ServerGateOptions,
} from '../src/index.ts';
import { bearer, serve, type Served } from './support/http.ts';
import { describeLedgers, type Target } from './support/ledgers.ts';

interface Shop {
  readonly balance_cents: number;
  readonly charges: readonly number[];
}

/** The one tool definition both halves import: the server runs it, the page only commits its output. */
const charge = defineTool({
  name: 'charge',
  inputSchema: {
    type: 'object',
    properties: { amount_cents: { type: 'integer', minimum: 1 }, currency: { enum: ['USD', 'EUR'] } },
    required: ['amount_cents', 'currency'],
    additionalProperties: false,
  },
  needsApproval: (input) => input.amount_cents > 5000,
  execute: (input) => {
    if (input.currency === 'EUR' && input.amount_cents === 13) throw new Error('card declined');
    return { charged: input.amount_cents };
  },
  commit: (state: Shop, output) => ({
    balance_cents: state.balance_cents - output.charged,
    charges: [...state.charges, output.charged],
  }),
});

const small = { amount_cents: 100, currency: 'USD' } as const;
const large = { amount_cents: 9000, currency: 'EUR' } as const;
const alice = { session: 's1', principal: 'alice' };
const proposal = (id: string, args: object) => ({ id, name: 'charge', arguments: args });

let cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

interface Setup {
  readonly server: ServerGate;
  readonly ledger: Ledger;
  readonly served: Served;
  readonly gate: RemoteGate;
  readonly shop: ReturnType<typeof createShop>;
  readonly writes: Shop[];
  readonly clock: FakeClock;
  readonly log: ReturnType<typeof errorLog>;
  /** The feed requests the server received, with their Last-Event-ID. */
  readonly feeds: () => (string | null)[];
  /** The decisions the server received. */
  readonly posts: readonly { path: string; type: string | null; body: unknown }[];
  /** The server's clock runs ahead by this much from now on. */
  readonly skip: (ms: number) => void;
}

function createShop() {
  return createStore<Shop>()(() => ({ balance_cents: 10_000, charges: [] }));
}

/**
 * A server gate with `script` already run on it (alice owns session `s1`; `auditor` may see it
 * but decide nothing), served on loopback, and alice's page mirroring `s1` once its feed is live.
 */
async function connect(
  target: Target,
  script: (server: ServerGate) => Promise<unknown> = async () => {},
  options: {
    gate?: Partial<RemoteGateOptions<Shop>>;
    server?: Partial<ServerGateOptions>;
    live?: boolean;
    principal?: string;
  } = {},
): Promise<Setup> {
  const ledger = await (await target.fresh()).open();
  let offset = 0;
  const server = createServerGate({
    tools: [charge],
    ledger,
    recover: false,
    clock: {
      now: () => Date.now() + offset,
      setTimeout: (callback, ms) => setTimeout(callback, ms),
      clearTimeout: (timer) => clearTimeout(timer as number),
    },
    canSee: (principal, session) => principal === session.owner || principal === 'auditor',
    ...options.server,
  });
  const handler = toolgateHandler(server, { authenticate: bearer });
  const feeds: (string | null)[] = [];
  const posts: { path: string; type: string | null; body: unknown }[] = [];
  const served = await serve(async (request) => {
    if (request.url.endsWith('/events')) feeds.push(request.headers.get('last-event-id'));
    if (request.method === 'POST')
      posts.push({
        path: new URL(request.url).pathname,
        type: request.headers.get('content-type'),
        body: await request.clone().json(),
      });
    return handler(request);
  });
  cleanup.push(
    () => served.close(),
    () => server.close(),
  );
  await script(server);
  const shop = createShop();
  const writes: Shop[] = [];
  shop.subscribe((state) => writes.push(state));
  const clock = createFakeClock();
  const log = errorLog();
  const gate = createRemoteGate<Shop>({
    url: `${served.origin}/api/toolgate`,
    session: 's1',
    tools: [charge],
    store: shop,
    clock,
    onError: log.onError,
    retry: { random: () => 1 },
    headers: { Authorization: `Bearer ${options.principal ?? 'alice'}` },
    ...options.gate,
  });
  cleanup.push(() => gate.close());
  if (options.live !== false) await when(gate.connection, (state) => state.state === 'live');
  return {
    server,
    ledger,
    served,
    gate,
    shop,
    writes,
    clock,
    log,
    feeds: () => feeds,
    posts,
    skip: (ms) => void (offset += ms),
  };
}

const statusOf = (gate: RemoteGate, id: string) => gate.get(id)?.status;
const until = (gate: RemoteGate, id: string, status: string) =>
  when(gate.calls, () => statusOf(gate, id) === status);
const requestWhen = (
  gate: RemoteGate,
  id: string,
  check: (request: ReturnType<RemoteGate['requestOf']>) => boolean,
) =>
  when(
    {
      getState: () => gate.requestOf(id),
      subscribe: (listener) => gate.subscribeCall(id, () => listener(gate.requestOf(id))),
    },
    check,
  );
/** The page's records with what a person sees of them. */
const shown = (records: Iterable<ToolCallRecord>) =>
  [...records].map(({ id, status, input, output, reason }) => ({ id, status, input, output, reason }));

describeLedgers(
  'remote gate against a real server gate',
  (target) => {
    describe('mirroring', () => {
      it('shows the first snapshot as the server has it, in its order, and never commits from it', async () => {
        const { server, gate, writes } = await connect(target, async (s) => {
          await s.propose(proposal('c1', large), alice);
          await s.run(proposal('c2', small), alice);
          await s.run(proposal('c3', { amount_cents: 1.5, currency: 'USD' }), alice);
        });
        expect(shown(gate.calls.getState().records.values())).toEqual(
          shown(await server.calls('s1', 'alice')),
        );
        expect([...gate.calls.getState().records.keys()]).toEqual(['c1', 'c2', 'c3']);
        expect(gate.get('c2')).toMatchObject({ status: 'committed', output: { charged: 100 } });
        expect(gate.get('c3')).toMatchObject({ status: 'rejected', reason: { code: 'invalid_arguments' } });
        expect(writes).toEqual([]);
      });

      it("follows live moves, telling only the moved call's subscribers", async () => {
        const { server, gate } = await connect(target, async (s) => {
          await s.propose(proposal('c1', large), alice);
          await s.propose(proposal('c2', large), alice);
        });
        const told: string[] = [];
        gate.subscribeCall('c1', () => told.push('c1'));
        gate.subscribeCall('c2', () => told.push('c2'));
        await server.deny('c2', { principal: 'alice', reason: 'not this one' });
        await until(gate, 'c2', 'cancelled');
        expect(told).toEqual(['c2']);
        expect(gate.calls.getState().changed).toEqual(['c2']);
      });

      it("writes the store once per call that commits live, through the tool's commit, and for nothing else", async () => {
        const { server, gate, shop, writes } = await connect(target);
        await server.run(proposal('c1', small), alice);
        await server.run(proposal('c2', { amount_cents: 13, currency: 'EUR' }), alice);
        await server.run(proposal('c3', { amount_cents: 'ten', currency: 'USD' }), alice);
        await server.propose(proposal('c4', large), alice);
        await server.deny('c4', { principal: 'alice', reason: 'not today' });
        await server.run(proposal('c5', { amount_cents: 250, currency: 'USD' }), alice);
        await until(gate, 'c5', 'committed');
        expect(
          Object.fromEntries(
            [...gate.calls.getState().records.values()].map((call) => [call.id, call.status]),
          ),
        ).toEqual({
          c1: 'committed',
          c2: 'failed',
          c3: 'rejected',
          c4: 'cancelled',
          c5: 'committed',
        });
        expect(gate.get('c4')?.reason).toEqual({ code: 'approval_denied', message: 'not today' });
        expect(writes).toHaveLength(2);
        expect(shop.getState()).toEqual({ balance_cents: 10_000 - 100 - 250, charges: [100, 250] });
        // The audit log is the ledger's: every move of the session, in order.
        expect(gate.audit.export().map(({ callId, to }) => `${callId}:${to}`)).toEqual(
          (await gateEvents(server)).map(({ callId, to }) => `${callId}:${to}`),
        );
      });

      it('after a reconnect, commits once what committed while the feed was down, and nothing it had already', async () => {
        const { server, served, gate, shop, writes, clock, feeds } = await connect(target);
        await server.run(proposal('c1', small), alice);
        await until(gate, 'c1', 'committed');
        expect(writes).toHaveLength(1);
        const seen = await server.get('c1');
        await server.propose(proposal('c2', large), alice);
        await until(gate, 'c2', 'awaiting_approval');
        // The connection breaks; the call is approved and commits while the page is away.
        served.server.closeAllConnections();
        await when(gate.connection, (state) => state.state === 'reconnecting');
        expect(await server.approve('c2', { principal: 'alice', inputHash: await inputHash(large) })).toEqual(
          { ok: true },
        );
        await server.settled('c2');
        clock.advance(500);
        await until(gate, 'c2', 'committed');
        expect(gate.connection.getState().state).toBe('live');
        const resumedAt = Number(feeds()[1]);
        expect(feeds()).toEqual([null, String(resumedAt)]);
        expect(resumedAt).toBeGreaterThan(0);
        expect(writes).toHaveLength(2);
        expect(shop.getState()).toEqual({ balance_cents: 10_000 - 100 - 9000, charges: [100, 9000] });
        expect(gate.get('c1')).toEqual(seen);
        // Each move once in the audit log, across the break.
        expect(gate.audit.export().map(({ callId, to }) => `${callId}:${to}`)).toEqual(
          (await gateEvents(server)).map(({ callId, to }) => `${callId}:${to}`),
        );
      });
    });

    describe('approve, deny and cancel', () => {
      it('approve sends the hash of the input the page shows; the server runs the call and the store is written once', async () => {
        const { server, gate, shop, writes, posts } = await connect(target, (s) =>
          s.propose(proposal('c1', { currency: 'EUR', amount_cents: 9000 }), alice),
        );
        expect(gate.approve('c1')).toBe(true);
        expect(gate.requestOf('c1')).toEqual({ action: 'approve', state: 'sending' });
        await until(gate, 'c1', 'committed');
        await requestWhen(gate, 'c1', (request) => request === undefined);
        expect(await server.get('c1')).toMatchObject({ status: 'committed', output: { charged: 9000 } });
        expect(writes).toHaveLength(1);
        expect(shop.getState().charges).toEqual([9000]);
        // RFC 8785: keys sorted, no spaces.
        const expected = createHash('sha256').update('{"amount_cents":9000,"currency":"EUR"}').digest('hex');
        expect(posts).toEqual([
          { path: '/api/toolgate/calls/c1/approve', type: 'application/json', body: { inputHash: expected } },
        ]);
        const approval = await server.calls('s1', 'alice');
        expect(approval[0]?.history.map((step) => step.status)).toEqual([
          'pending',
          'validated',
          'awaiting_approval',
          'executing',
          'committed',
        ]);
      });

      it("a refused approve (403: may see, may not decide) stays visible with the server's code and message, and is audited", async () => {
        const { server, gate, writes } = await connect(
          target,
          (s) => s.propose(proposal('c1', large), alice),
          { principal: 'auditor' },
        );
        expect(gate.approve('c1')).toBe(true);
        const refused = await requestWhen(gate, 'c1', (request) => request?.state === 'refused');
        expect(refused).toEqual({
          action: 'approve',
          state: 'refused',
          error: { code: 'forbidden', message: 'this principal may not decide this call' },
        });
        expect(statusOf(gate, 'c1')).toBe('awaiting_approval');
        expect((await server.get('c1'))?.status).toBe('awaiting_approval');
        await when(
          {
            getState: () => gate.audit.size(),
            subscribe: (listener) => gate.audit.subscribe(() => listener(gate.audit.size())),
          },
          (size) => size === 1,
        );
        expect(gate.audit.export().at(-1)).toMatchObject({
          callId: 'c1',
          from: 'awaiting_approval',
          to: 'awaiting_approval',
          reason: { code: 'forbidden' },
        });
        expect(writes).toEqual([]);
      });

      it('an approve that comes after the approval expired is refused (409 expired), and the call shows cancelled', async () => {
        const { gate, skip, writes } = await connect(target, (s) => s.propose(proposal('c1', large), alice), {
          server: { approvalTtlMs: 60_000 },
        });
        skip(60_000);
        expect(gate.approve('c1')).toBe(true);
        await until(gate, 'c1', 'cancelled');
        expect(gate.get('c1')?.reason).toEqual({
          code: 'approval_expired',
          message: 'the approval expired: nobody decided this call in time',
        });
        // The refusal and the move it caused are both in the audit log; the request ended with the move.
        expect(gate.audit.export().slice(-2)).toMatchObject([
          { from: 'awaiting_approval', to: 'awaiting_approval', reason: { code: 'expired' } },
          { from: 'awaiting_approval', to: 'cancelled', reason: { code: 'approval_expired' } },
        ]);
        expect(gate.requestOf('c1')).toBeUndefined();
        expect(writes).toEqual([]);
      });

      it('deny and cancel post their reason and the server records it', async () => {
        const { server, gate, posts } = await connect(target, async (s) => {
          await s.propose(proposal('c1', large), alice);
          await s.propose(proposal('c2', { amount_cents: 7000, currency: 'USD' }), alice);
        });
        expect(gate.deny('c1', 'wrong card')).toBe(true);
        expect(gate.cancel('c2')).toBe(true);
        await until(gate, 'c1', 'cancelled');
        await until(gate, 'c2', 'cancelled');
        expect(await server.get('c1')).toMatchObject({
          reason: { code: 'approval_denied', message: 'wrong card' },
        });
        expect(gate.get('c2')?.reason).toEqual({
          code: 'user_cancelled',
          message: 'the user cancelled this call',
        });
        expect(posts.map(({ path, body }) => ({ path, body }))).toEqual(
          expect.arrayContaining([
            { path: '/api/toolgate/calls/c1/deny', body: { reason: 'wrong card' } },
            { path: '/api/toolgate/calls/c2/cancel', body: {} },
          ]),
        );
      });

      it("run and settled wait for the server's outcome, even for a call the feed has not delivered yet", async () => {
        const { server, gate } = await connect(target, (s) => s.propose(proposal('c1', large), alice));
        const ran = gate.run({ id: 'c1', name: 'charge', arguments: large });
        const later = gate.settled('c2');
        await server.approve('c1', { principal: 'alice', inputHash: await inputHash(large) });
        await server.run(proposal('c2', { amount_cents: 13, currency: 'EUR' }), alice);
        await expect(ran).resolves.toMatchObject({
          id: 'c1',
          status: 'committed',
          output: { charged: 9000 },
        });
        await expect(later).resolves.toMatchObject({
          id: 'c2',
          status: 'failed',
          reason: { code: 'tool_error' },
        });
        expect(gate.toolResult('c2', 'openai-chat')).toEqual(await server.toolResult('c2', 'openai-chat'));
      });
    });

    describe('the connection', () => {
      it('stops on 401 without a principal, says so, and does not ask again', async () => {
        const { gate, clock, log, feeds } = await connect(target, async () => {}, {
          gate: { headers: {} },
          live: false,
        });
        const state = await when(gate.connection, (s) => s.state === 'closed');
        expect(state.error).toEqual({
          code: 'unauthenticated',
          message: 'sign in first: this request carries no principal',
        });
        expect(log.messages()).toEqual([
          'toolgate remote: the event feed stopped (unauthenticated): sign in first: this request carries no principal',
        ]);
        expect(clock.pending).toBe(0);
        clock.advance(60_000);
        expect(feeds()).toHaveLength(1);
      });

      it('close() ends the feed on the server too', async () => {
        const { gate, served } = await connect(target);
        expect(served.sockets.size).toBe(1);
        gate.close();
        await served.drained();
        expect(served.sockets.size).toBe(0);
      });
    });
  },
  { shared: true },
);

/** The session's events as alice may see them, from the start. */
async function gateEvents(server: ServerGate) {
  const events = [];
  const iterator = server.events('s1', { principal: 'alice', after: 0 });
  const head = (await server.snapshot('s1', 'alice')).seq;
  for await (const event of iterator) {
    events.push(event);
    if (event.seq >= head) break;
  }
  return events;
}
