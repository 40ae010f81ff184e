// The remote gate over a scripted loopback server, for what a real server gate cannot be made to
// do: malformed or overlapping feed data, a server that cannot resume, refusals and answers on cue.
// The same scenarios against the real server gate and handler are in @toolgate/server
// (test/remote.test.ts).
import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { defineTool } from '../src/index.ts';
import { createRemoteGate, type RemoteGate, type RemoteGateOptions } from '../src/remote.ts';
import {
  chargeTool,
  createFakeClock,
  createShop,
  errorLog,
  type FakeClock,
  type LoopbackServer,
  type Shop,
  startLoopbackServer,
  watchStore,
  when,
  wireRecord,
} from '@toolgate/test-utils';

const input = { amount_cents: 1250, currency: 'USD' };
const receipt = { amount_cents: 1250, currency: 'USD' };

let cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

interface Setup {
  readonly server: LoopbackServer;
  readonly gate: RemoteGate;
  readonly shop: ReturnType<typeof createShop>;
  readonly writes: Shop[];
  readonly clock: FakeClock;
  readonly log: ReturnType<typeof errorLog>;
}

/** A server with `script` already in its ledger, and a page's remote gate on it, once the feed is live. */
async function connect(
  script: (server: LoopbackServer) => void = () => {},
  options: { token?: string; gate?: Partial<RemoteGateOptions<Shop>>; live?: boolean } = {},
): Promise<Setup> {
  const server = await startLoopbackServer(options.token === undefined ? {} : { token: options.token });
  cleanup.push(() => server.close());
  script(server);
  const shop = createShop();
  const writes = watchStore(shop);
  const clock = createFakeClock();
  const log = errorLog();
  const gate = createRemoteGate<Shop>({
    url: server.url,
    session: server.session,
    tools: [chargeTool()],
    store: shop,
    clock,
    onError: log.onError,
    retry: { random: () => 1 },
    ...options.gate,
  });
  cleanup.push(() => gate.close());
  if (options.live !== false) await when(gate.connection, (state) => state.state === 'live');
  return { server, gate, shop, writes, clock, log };
}

const statusOf = (gate: RemoteGate, id: string) => gate.get(id)?.status;
/** Resolves with the call's request once `check` holds. */
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
const until = (gate: RemoteGate, id: string, status: string) =>
  when(gate.calls, () => statusOf(gate, id) === status);

describe('remote gate: the app store is written once per live commit (what only a scripted server does)', () => {
  it('never commits twice when a reconnect replays an overlapping range of moves', async () => {
    const { server, gate, shop, writes, clock } = await connect((s) =>
      s.call('c1', 'charge', input, 'executing'),
    );
    server.moveTo('c1', 'committed', { output: receipt });
    await until(gate, 'c1', 'committed');
    const auditBefore = gate.audit.size();
    // The server replays from the start on the next resume, though the page asks for after the commit.
    server.replayFrom(0);
    server.drop();
    await when(gate.connection, (state) => state.state === 'reconnecting');
    clock.advance(500);
    await server.until(() => server.feeds().length === 2);
    await when(gate.connection, (state) => state.state === 'live');
    server.call('c2', 'charge', { amount_cents: 50, currency: 'USD' }, 'executing');
    server.moveTo('c2', 'committed', { output: { amount_cents: 50, currency: 'USD' } });
    await until(gate, 'c2', 'committed');
    expect(writes).toHaveLength(2);
    expect(shop.getState().charges).toEqual([receipt, { amount_cents: 50, currency: 'USD' }]);
    expect(gate.audit.size()).toBe(auditBefore + 2);
  });

  it('commits, once, a call that committed while the feed was down and came back in a fresh snapshot', async () => {
    const { server, gate, shop, writes, clock } = await connect((s) =>
      s.call('c1', 'charge', input, 'executing'),
    );
    server.drop();
    await when(gate.connection, (state) => state.state === 'reconnecting');
    server.moveTo('c1', 'committed', { output: receipt });
    // A server that cannot resume answers with a snapshot again.
    server.snapshotNext();
    clock.advance(500);
    await until(gate, 'c1', 'committed');
    expect(writes).toHaveLength(1);
    expect(shop.getState().charges).toEqual([receipt]);
    // And a later resume that replays the commit changes nothing.
    server.replayFrom(0);
    server.drop();
    await when(gate.connection, (state) => state.state === 'reconnecting');
    clock.advance(500);
    await server.until(() => server.feeds().length === 3);
    server.call('c2', 'charge', input, 'awaiting_approval');
    await until(gate, 'c2', 'awaiting_approval');
    expect(server.feeds().map((feed) => feed.headers['last-event-id'])).toEqual([undefined, '1', '2']);
    expect(writes).toHaveLength(1);
  });

  it('reports a commit that throws, and keeps the record committed as the server says', async () => {
    const throwing = defineTool({
      name: 'charge',
      inputSchema: { type: 'object' },
      execute: () => ({}),
      commit: (): Partial<Shop> => {
        throw new Error('state is read-only');
      },
    });
    const { server, gate, writes, log } = await connect((s) => s.call('c1', 'charge', input, 'executing'), {
      gate: { tools: [throwing] },
    });
    server.moveTo('c1', 'committed', { output: receipt });
    await until(gate, 'c1', 'committed');
    expect(writes).toHaveLength(0);
    expect(log.messages()).toEqual([
      'toolgate remote: call "c1" (charge) committed on the server, but its commit threw here: state is read-only; the record stays committed as the server says, and the app\'s store was not changed.',
    ]);
  });

  it('reports a commit that returns something other than a plain object (a Promise, an array)', async () => {
    const answers: unknown[] = [
      Promise.resolve({}),
      [1],
      { then: (resolve: (value: unknown) => void) => resolve({}) },
    ];
    const odd = defineTool({
      name: 'charge',
      inputSchema: { type: 'object' },
      execute: () => ({}),
      commit: () => answers.shift() as Partial<Shop>,
    });
    const { server, gate, writes, log } = await connect(
      (s) => {
        s.call('c1', 'charge', input, 'executing');
        s.call('c2', 'charge', input, 'executing');
        s.call('c3', 'charge', input, 'executing');
      },
      { gate: { tools: [odd] } },
    );
    server.moveTo('c1', 'committed', { output: receipt });
    server.moveTo('c2', 'committed', { output: receipt });
    server.moveTo('c3', 'committed', { output: receipt });
    await until(gate, 'c3', 'committed');
    expect(writes).toHaveLength(0);
    expect(log.messages()).toHaveLength(3);
    expect(log.messages()[2]).toContain('not a thenable');
    expect(log.messages()[0]).toContain(
      'its commit must return the partial next state as a plain object, not a Promise',
    );
  });
});

describe('remote gate: approve, deny and cancel are requests', () => {
  it("a refused approval (409 stale) stays visible with the server's code and message, and the refusal is audited", async () => {
    const { server, gate } = await connect((s) => s.call('c1', 'charge', input, 'awaiting_approval'));
    // The server's call holds other arguments than the page was shown.
    Object.assign(server.record('c1')?.input as object, { amount_cents: 999_999 });
    expect(gate.approve('c1')).toBe(true);
    const refused = await requestWhen(gate, 'c1', (request) => request?.state === 'refused');
    expect(refused).toEqual({
      action: 'approve',
      state: 'refused',
      error: { code: 'stale', message: 'the arguments you approved are not the ones this call has' },
    });
    expect(statusOf(gate, 'c1')).toBe('awaiting_approval');
    // The refusal's event may reach the page after the 409 does. Its code is the server's, outside
    // the browser's own reason codes.
    await when(
      {
        getState: () => gate.audit.size(),
        subscribe: (l) => gate.audit.subscribe(() => l(gate.audit.size())),
      },
      (size) => size > 0,
    );
    expect(gate.audit.export().at(-1)).toMatchObject({
      callId: 'c1',
      from: 'awaiting_approval',
      to: 'awaiting_approval',
      reason: { code: 'stale' },
    });
  });

  it('returns false, sending nothing, for a call in a status that does not allow it or with a request on its way', async () => {
    const { server, gate } = await connect((s) => {
      s.call('waiting', 'charge', input, 'awaiting_approval');
      s.call('running', 'charge', input, 'executing');
      s.call('done', 'charge', input, 'committed');
    });
    const release = server.hold();
    expect(gate.approve('running')).toBe(false);
    expect(gate.deny('running')).toBe(false);
    expect(gate.approve('done')).toBe(false);
    expect(gate.cancel('done')).toBe(false);
    expect(gate.approve('nope')).toBe(false);
    expect(gate.approve('waiting')).toBe(true);
    expect(gate.approve('waiting')).toBe(false);
    expect(gate.deny('waiting')).toBe(false);
    await server.until(() => server.requests.some((request) => request.method === 'POST'));
    release();
    await until(gate, 'waiting', 'executing');
    expect(server.requests.filter((request) => request.method === 'POST')).toHaveLength(1);
  });

  it('sends the headers on every request, and a refusal without a JSON body still has a code', async () => {
    const { server, gate } = await connect((s) => s.call('c1', 'charge', input, 'awaiting_approval'), {
      token: 't0ken',
      gate: { headers: () => ({ Authorization: 'Bearer t0ken' }) },
    });
    server.refuseNextPost(403, 'forbidden', 'only the session owner may approve');
    gate.approve('c1');
    const refused = await requestWhen(gate, 'c1', (request) => request?.state === 'refused');
    expect(refused).toEqual({
      action: 'approve',
      state: 'refused',
      error: { code: 'forbidden', message: 'only the session owner may approve' },
    });
    expect(server.requests.every((request) => request.headers.authorization === 'Bearer t0ken')).toBe(true);
  });
});

describe('remote gate: reconnecting', () => {
  it('waits with exponential backoff and jitter, and resumes with Last-Event-ID', async () => {
    const random = [1, 1, 0, 1];
    const { server, gate, clock } = await connect((s) => s.call('c1', 'charge', input, 'awaiting_approval'), {
      gate: { retry: { initialMs: 1000, maxMs: 8000, random: () => random.shift() ?? 1 } },
    });
    expect(server.feeds()[0]?.headers['last-event-id']).toBeUndefined();
    const snapshotAt = clock.now();
    server.answerFeed(503, { error: { code: 'unavailable', message: 'restarting' } });
    server.answerFeed(502);
    server.drop();
    let state = await when(gate.connection, (s) => s.state === 'reconnecting');
    expect(state.retryAt).toBe(clock.now() + 1000);
    clock.advance(999);
    expect(server.feeds()).toHaveLength(1);
    clock.advance(1);
    state = await when(gate.connection, (s) => s.error?.code === 'unavailable');
    // Doubled: 2000, jittered down by up to half (random 1 → the full 2000).
    expect(state).toEqual({
      state: 'reconnecting',
      error: { code: 'unavailable', message: 'restarting' },
      retryAt: clock.now() + 2000,
      lastEventAt: snapshotAt,
    });
    clock.advance(2000);
    state = await when(gate.connection, (s) => s.error?.code === 'bad_response');
    // Doubled again to 4000; random 0 → half of it.
    expect(state.retryAt).toBe(clock.now() + 2000);
    clock.advance(2000);
    await when(gate.connection, (s) => s.state === 'live');
    expect(server.feeds().map((feed) => feed.headers['last-event-id'])).toEqual([undefined, '1', '1', '1']);
    server.moveTo('c1', 'executing');
    await until(gate, 'c1', 'executing');
    // Live again: the backoff starts over.
    server.drop('end');
    state = await when(gate.connection, (s) => s.state === 'reconnecting');
    expect(state).toMatchObject({ error: { code: 'ended' }, retryAt: clock.now() + 1000 });
  });

  it('caps its backoff at a few seconds by default, so a page catches up soon after a restart, offline or not', async () => {
    const { server, gate, clock } = await connect(() => {}, { gate: { retry: { random: () => 1 } } });
    let longest = 0;
    const states: string[] = [];
    for (let i = 0; i < 8; i++) {
      server.answerFeed(503, { error: { code: 'unavailable', message: 'restarting' } });
      if (i === 0) server.drop();
      const state = await when(
        gate.connection,
        (s) => s.state !== 'live' && s.retryAt !== undefined && s.retryAt > clock.now(),
      );
      states.push(state.state);
      longest = Math.max(longest, (state.retryAt ?? 0) - clock.now());
      clock.advance((state.retryAt ?? 0) - clock.now());
      await server.until(() => server.feeds().length === i + 2);
    }
    expect(longest).toBeLessThanOrEqual(4000);
    // Three attempts failed after the break: from then on the page says the server is offline, and still retries.
    expect(states).toEqual([
      'reconnecting',
      'reconnecting',
      'reconnecting',
      'offline',
      'offline',
      'offline',
      'offline',
      'offline',
    ]);
    // The server serves again: the next attempt, at most 4 s away, finds it.
    const last = await when(
      gate.connection,
      (s) => s.state === 'offline' && s.retryAt !== undefined && s.retryAt > clock.now(),
    );
    clock.advance((last.retryAt ?? 0) - clock.now());
    await when(gate.connection, (s) => s.state === 'live');
  });

  it('says offline after offlineAfter failed attempts in a row, refuses a decision then, and is live again at once when the browser is back online', async () => {
    const events = new EventTarget();
    const { server, gate, clock } = await connect((s) => s.call('c1', 'charge', input, 'awaiting_approval'), {
      gate: { offlineAfter: 2, events },
    });
    for (let i = 0; i < 2; i++)
      server.answerFeed(503, { error: { code: 'unavailable', message: 'restarting' } });
    server.drop();
    await when(gate.connection, (s) => s.state === 'reconnecting');
    clock.advance(500);
    await when(gate.connection, (s) => s.error?.code === 'unavailable');
    expect(gate.connection.getState().state).toBe('reconnecting');
    clock.advance(1000);
    const offline = await when(gate.connection, (s) => s.state === 'offline');
    expect(offline).toMatchObject({
      error: { code: 'unavailable', message: 'restarting' },
      retryAt: clock.now() + 2000,
    });
    gate.approve('c1');
    expect(gate.requestOf('c1')).toMatchObject({ state: 'refused', error: { code: 'offline' } });
    // The refused decision asked for an attempt at once, which the server (back now) accepts.
    await when(gate.connection, (s) => s.state === 'live');
    server.answerFeed(503, { error: { code: 'unavailable', message: 'restarting' } });
    server.answerFeed(503, { error: { code: 'unavailable', message: 'restarting' } });
    server.drop();
    await when(gate.connection, (s) => s.state === 'reconnecting');
    // The browser says it lost its network: offline at once, before any attempt failed.
    events.dispatchEvent(new Event('offline'));
    expect(gate.connection.getState().state).toBe('offline');
    const feeds = server.feeds().length;
    events.dispatchEvent(new Event('online'));
    await server.until(() => server.feeds().length === feeds + 1);
    expect(gate.connection.getState().state).toBe('reconnecting');
  });

  it("says when the feed last delivered something (lastEventAt, on the gate's clock): the snapshot, a move, a heartbeat; kept while it is away", async () => {
    const { server, gate, clock } = await connect((s) => s.call('c1', 'charge', input, 'awaiting_approval'));
    const opened = clock.now();
    expect(gate.connection.getState()).toEqual({
      state: 'live',
      error: undefined,
      retryAt: undefined,
      lastEventAt: opened,
    });
    clock.advance(3_000);
    server.moveTo('c1', 'executing');
    await when(gate.connection, (s) => s.lastEventAt === opened + 3_000);
    expect(statusOf(gate, 'c1')).toBe('executing');
    clock.advance(15_000);
    server.heartbeat();
    await when(gate.connection, (s) => s.lastEventAt === opened + 18_000);
    clock.advance(2_000);
    server.drop();
    const away = await when(gate.connection, (s) => s.state === 'reconnecting');
    expect(away.lastEventAt).toBe(opened + 18_000);
    clock.advance(500);
    await when(gate.connection, (s) => s.state === 'live');
    // A resumed feed is live once accepted; it has delivered nothing yet.
    expect(gate.connection.getState().lastEventAt).toBe(opened + 18_000);
    server.heartbeat();
    await when(gate.connection, (s) => s.lastEventAt === opened + 20_500);
  });

  it('tries again at once when the browser says it is back online or the tab is shown again', async () => {
    const events = new EventTarget();
    const { server, gate } = await connect(() => {}, {
      gate: { retry: { initialMs: 60_000, maxMs: 60_000 }, events },
    });
    server.drop();
    await when(gate.connection, (s) => s.state === 'reconnecting');
    expect(server.feeds()).toHaveLength(1);
    events.dispatchEvent(new Event('online'));
    await when(gate.connection, (s) => s.state === 'live');
    expect(server.feeds()).toHaveLength(2);
    server.drop();
    await when(gate.connection, (s) => s.state === 'reconnecting');
    events.dispatchEvent(new Event('visibilitychange'));
    await when(gate.connection, (s) => s.state === 'live');
    expect(server.feeds()).toHaveLength(3);
  });

  it('refuses a decision while the feed is not live, visibly, and tries to reconnect at once', async () => {
    const { server, gate } = await connect((s) => s.call('c1', 'charge', input, 'awaiting_approval'), {
      gate: { retry: { initialMs: 60_000, maxMs: 60_000 } },
    });
    server.drop();
    await when(gate.connection, (s) => s.state === 'reconnecting');
    expect(gate.approve('c1')).toBe(true);
    expect(gate.requestOf('c1')).toEqual({
      action: 'approve',
      state: 'refused',
      error: { code: 'offline', message: expect.stringContaining('not sent') },
    });
    expect(server.requests.filter((request) => request.method === 'POST')).toHaveLength(0);
    // The refusal asked the feed to try again now, without waiting out the backoff.
    await server.until(() => server.feeds().length === 2);
    await when(gate.connection, (s) => s.state === 'live');
    expect(gate.approve('c1')).toBe(true);
    await server.until(() => server.requests.some((request) => request.method === 'POST'));
  });

  it('reopens a feed that went quiet (no move, no heartbeat) for idleTimeoutMs', async () => {
    const { server, gate, clock } = await connect(() => {}, { gate: { idleTimeoutMs: 30_000 } });
    clock.advance(30_000);
    const state = await when(gate.connection, (s) => s.state === 'reconnecting');
    expect(state.error).toEqual({ code: 'idle', message: 'nothing arrived on the feed for 30000 ms' });
    clock.advance(500);
    await server.until(() => server.feeds().length === 2);
    expect(server.feeds()[1]?.headers['last-event-id']).toBe('0');
  });

  it('close() ends the feed and requests on their way, leaves no timer, and rejects settled() waiters', async () => {
    const { server, gate, clock } = await connect((s) => s.call('c1', 'charge', input, 'awaiting_approval'));
    const waiting = gate.settled('c1').then(
      () => 'settled',
      (error: Error) => error.message,
    );
    server.hold();
    gate.approve('c1');
    await server.until(() => server.requests.some((request) => request.method === 'POST'));
    expect(server.openFeeds()).toBe(1);
    gate.close();
    await server.until(() => server.openFeeds() === 0);
    await expect(waiting).resolves.toBe('gate.settled: the remote gate was closed before call "c1" settled.');
    expect(gate.connection.getState()).toEqual({
      state: 'closed',
      error: undefined,
      retryAt: undefined,
      lastEventAt: clock.now(),
    });
    expect(clock.pending).toBe(0);
    expect(gate.approve('c1')).toBe(false);
  });
});

describe('remote gate: the feed is untrusted', () => {
  it('drops malformed messages with a report, never throws, and goes on with the next good one', async () => {
    const { server, gate, log } = await connect((s) => s.call('c1', 'charge', input, 'awaiting_approval'));
    const before = gate.get('c1');
    const good = server.record('c1');
    const event = (seq: number, extra: object = {}) => ({
      seq,
      callId: 'c1',
      session: 'chat_1',
      from: 'awaiting_approval',
      to: 'executing',
      actor: 'u',
      at: 1,
      ...extra,
    });
    const running = {
      ...good,
      status: 'executing',
      history: [...(good?.history ?? []), { status: 'executing', at: 2 }],
    };
    server.sendRaw('event: move\nid: 2\ndata: {not json\n\n');
    server.sendRaw(
      `event: move\nid: 2\ndata: ${JSON.stringify({ event: event(2), record: { ...running, status: 'done' } })}\n\n`,
    );
    server.sendRaw(
      `event: move\nid: 2\ndata: ${JSON.stringify({ event: event(2), record: { ...running, id: 'other' } })}\n\n`,
    );
    server.sendRaw(
      `event: move\nid: 2\ndata: ${JSON.stringify({ event: event(2, { session: 'chat_2' }), record: running })}\n\n`,
    );
    server.sendRaw(`event: move\nid: 3\ndata: ${JSON.stringify({ event: event(2), record: running })}\n\n`);
    server.sendRaw(
      `event: move\nid: 2\ndata: ${JSON.stringify({ event: event(2, { seq: -1 }), record: running })}\n\n`,
    );
    server.sendRaw(
      `event: move\nid: 2\ndata: ${JSON.stringify({ event: event(2), record: { ...running, history: [] } })}\n\n`,
    );
    server.sendRaw(
      `event: move\nid: 2\ndata: ${JSON.stringify({ event: event(2, { to: 'failed' }), record: { ...running, status: 'failed', history: [...running.history.slice(0, -1), { status: 'failed', at: 2 }] } })}\n\n`,
    );
    server.sendRaw(`event: snapshot\nid: 9\ndata: ${JSON.stringify({ seq: 9, calls: 'all of them' })}\n\n`);
    server.sendRaw('event: something-new\nid: 9\ndata: {}\n\n');
    await log.nth(9);
    expect(log.messages()).toEqual([
      'toolgate remote: dropped a feed message (id 2): its move data is not JSON.',
      'toolgate remote: dropped a feed message (id 2): event 2: call "c1" has an unknown status "done".',
      'toolgate remote: dropped a feed message (id 2): event 2 is about call "c1" but carries call "other".',
      'toolgate remote: dropped event 2: it is about session "chat_2", not "chat_1".',
      'toolgate remote: dropped a feed message (id 3): its id "3" is not its sequence number 2.',
      'toolgate remote: dropped a feed message (id 2): a ledger event has no sequence number (got -1).',
      'toolgate remote: dropped a feed message (id 2): event 2: call "c1" has no readable history.',
      'toolgate remote: dropped a feed message (id 2): event 2: call "c1" is failed without a reason { code, message }.',
      'toolgate remote: dropped a feed message (id 9): snapshot 9 has no calls array.',
    ]);
    expect(gate.get('c1')).toBe(before);
    expect(gate.audit.size()).toBe(0);
    expect(gate.connection.getState().state).toBe('live');
    server.moveTo('c1', 'executing');
    await until(gate, 'c1', 'executing');
    expect(log.errors).toHaveLength(9);
  });

  it('keeps the good calls of a snapshot and names the bad ones', async () => {
    const { gate, log } = await connect((s) => {
      s.call('c1', 'charge', input, 'awaiting_approval');
      s.call('c2', 'charge', input, 'awaiting_approval');
      Object.assign(s.record('c2') as object, { status: 'approved' });
    });
    expect([...gate.calls.getState().records.keys()]).toEqual(['c1']);
    expect(log.messages()).toEqual([
      'toolgate remote: dropped a feed message (id 2): snapshot 2: call "c2" has an unknown status "approved".',
    ]);
  });

  it('does not let a settled call move again', async () => {
    const { server, gate, log, writes } = await connect((s) => s.call('c1', 'charge', input, 'cancelled'));
    server.sendRaw(
      `event: move\nid: 2\ndata: ${JSON.stringify({
        event: {
          seq: 2,
          callId: 'c1',
          session: 'chat_1',
          from: 'cancelled',
          to: 'committed',
          actor: 'u',
          at: 1,
        },
        record: wireRecord('c1', 'charge', input, 'committed', { output: receipt }),
      })}\n\n`,
    );
    await log.nth(1);
    expect(log.messages()).toEqual([
      'toolgate remote: dropped event 2: call "c1" is cancelled, and a settled call never moves again.',
    ]);
    expect(statusOf(gate, 'c1')).toBe('cancelled');
    expect(writes).toHaveLength(0);
  });
});

describe('remote gate: the rest of the ToolGate shape', () => {
  it('propose answers the mirrored record for a known id, and otherwise a rejected record that is not stored', async () => {
    const { gate } = await connect((s) => s.call('call_1', 'charge', input, 'awaiting_approval'));
    const openaiCall = (id: string) => ({
      id,
      type: 'function',
      function: { name: 'charge', arguments: JSON.stringify(input) },
    });
    expect(gate.propose(openaiCall('call_1'))).toBe(gate.get('call_1'));
    const unknown = gate.propose(openaiCall('call_9'));
    expect(unknown).toMatchObject({
      id: 'call_9',
      name: 'charge',
      status: 'rejected',
      source: 'openai-chat',
      reason: { code: 'unauthorized' },
    });
    expect(unknown.reason?.message).toMatch(
      /^this page mirrors a server gate and proposes no calls: the server proposes them/,
    );
    expect(gate.get('call_9')).toBeUndefined();
    expect(() => gate.toolResult('call_1', 'openai-chat')).toThrow(
      'call "call_1" is awaiting_approval; answer it once it has settled',
    );
    expect(gate.stream.open({ id: 'call_1', name: 'charge', source: 'openai-chat' })).toBe(
      gate.get('call_1'),
    );
    expect(gate.stream.open({ id: 'call_8', name: 'charge', source: 'openai-chat' }).status).toBe('rejected');
    expect(gate.propose(42).status).toBe('rejected');
  });

  it('stopped(id) answers a mirrored call that waits for a person at once, one that runs once it ends, and rejects once closed', async () => {
    const { server, gate } = await connect((s) => {
      s.call('c1', 'charge', input, 'awaiting_approval');
      s.call('c2', 'charge', input, 'executing');
      s.call('c3', 'charge', input, 'executing');
    });
    await expect(gate.stopped('c1')).resolves.toMatchObject({ id: 'c1', status: 'awaiting_approval' });
    const running = gate.stopped('c2');
    server.moveTo('c2', 'committed', { output: receipt });
    await expect(running).resolves.toMatchObject({ id: 'c2', status: 'committed', output: receipt });
    const left = gate.stopped('c3').then(
      () => 'stopped',
      (error: Error) => error.message,
    );
    gate.close();
    await expect(left).resolves.toBe('gate.settled: the remote gate was closed before call "c3" settled.');
  });

  it('throws at once for a programmer error: a commit without a store, two tools with one name, no url', () => {
    expect(() =>
      createRemoteGate({ url: 'http://127.0.0.1:1/x', session: 's', tools: [chargeTool()] }),
    ).toThrow(
      'createRemoteGate: tool "charge" has a commit but the gate has no store; pass your Zustand store as `store`.',
    );
    expect(() =>
      createRemoteGate({
        url: 'http://127.0.0.1:1/x',
        session: 's',
        tools: [chargeTool(), chargeTool()],
        store: createShop(),
      }),
    ).toThrow('two tools are named "charge"');
    expect(() => createRemoteGate({ url: '', session: 's', tools: [] })).toThrow(
      '`url` must be where the server mounted toolgateHandler',
    );
  });
});

describe('remote gate: runs in browsers', () => {
  it('imports nothing from Node, anywhere in the modules it reaches', () => {
    const seen = new Set<string>();
    const bare = new Set<string>();
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      for (const [, specifier = ''] of readFileSync(file, 'utf8').matchAll(
        /^(?:import|export)[^'"]*?from\s+'([^']+)'/gm,
      )) {
        if (specifier.startsWith('.')) visit(join(dirname(file), specifier));
        else bare.add(specifier);
      }
    };
    visit(join(import.meta.dirname, '..', 'src', 'remote.ts'));
    expect(seen.size).toBeGreaterThan(5);
    const node = [...bare].filter(
      (specifier) => specifier.startsWith('node:') || builtinModules.includes(specifier.split('/')[0] ?? ''),
    );
    expect(node).toEqual([]);
    expect([...bare].sort()).toEqual([
      '@standard-schema/spec',
      'canonicalize',
      'eventsource-parser',
      'json-schema-to-ts',
      'zustand/vanilla',
    ]);
  });
});

describe('remote gate: its listeners behave as the browser gate’s', () => {
  it('tells every listener each move once, though one throws and another subscribes again while told', async () => {
    const { server, gate, log } = await connect((s) => s.call('c1', 'charge', input, 'executing'));
    const seen: string[] = [];
    gate.calls.subscribe(() => {
      throw new Error('a broken listener');
    });
    gate.calls.subscribe((state) => seen.push(`store:${state.changed.join(',')}`));
    let again = 0;
    const resubscribe = () => {
      seen.push('call');
      stop();
      again += 1;
      if (again < 50) stop = gate.subscribeCall('c1', resubscribe);
    };
    let stop = gate.subscribeCall('c1', resubscribe);
    server.moveTo('c1', 'committed', { output: receipt });
    await until(gate, 'c1', 'committed');
    expect(seen).toEqual(['store:c1', 'call']);
    expect(log.messages()).toContain('a broken listener');
  });
});
