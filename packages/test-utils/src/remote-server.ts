// A small server gate on a loopback port that speaks the toolgate wire (the routes of
// `toolgateHandler`) from a scripted ledger, for testing the remote gate over real HTTP:
//   GET  {base}/sessions/:session/events   SSE, `id: <seq>`; a snapshot, then moves; Last-Event-ID resumes
//   GET  {base}/sessions/:session/calls    { seq, calls }
//   POST {base}/calls/:id/approve|deny|cancel   decided like a server gate; errors { error: { code, message } }
// A test scripts the ledger (`call`, `moveTo`, `refuse`), breaks things on purpose (`drop`,
// `sendRaw`, `answerFeed`, `replayFrom`, `hold`) and reads what arrived (`requests`).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inputHash, type ToolCallRecord, type ToolCallStatus, type Transition } from '@toolgate/core';

export interface WireEvent {
  readonly seq: number;
  readonly callId: string;
  readonly session: string;
  readonly from: ToolCallStatus | null;
  readonly to: ToolCallStatus;
  readonly actor: string | null;
  readonly at: number;
  readonly reason?: { readonly code: string; readonly message: string };
}

export interface ReceivedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string | undefined>>;
  readonly body: unknown;
}

export interface LoopbackServer {
  /** The base URL, as an app passes it to `createRemoteGate`. */
  readonly url: string;
  readonly session: string;
  /** Every request, in order; POST bodies parsed. */
  readonly requests: readonly ReceivedRequest[];
  /** The feed requests among them. */
  readonly feeds: () => readonly ReceivedRequest[];
  /** Feed connections open now. */
  readonly openFeeds: () => number;
  /** The ledger so far. */
  readonly events: readonly WireEvent[];
  readonly record: (id: string) => ToolCallRecord | undefined;
  /** Creates a call already in `status` (one event, from `null`), as a server gate that ran its first steps. */
  readonly call: (id: string, name: string, input: unknown, status?: ToolCallStatus) => WireEvent;
  /** Moves a call; `output` for committed, `reason` for cancelled/failed/rejected. */
  readonly moveTo: (
    id: string,
    to: ToolCallStatus,
    extra?: { output?: unknown; reason?: { code: string; message: string }; actor?: string },
  ) => WireEvent;
  /** A refusal: an event with `from === to` and the refusal's code; the call does not move. */
  readonly refuse: (id: string, code: string, message: string, actor?: string) => WireEvent;
  /** Writes text to every open feed as it is (for malformed messages). */
  readonly sendRaw: (text: string) => void;
  readonly heartbeat: () => void;
  /** Ends every open feed: `destroy` cuts the socket, `end` closes the stream cleanly. */
  readonly drop: (how?: 'destroy' | 'end') => void;
  /** The next feed requests get this answer instead of the stream, one per call. */
  readonly answerFeed: (status: number, body?: unknown) => void;
  /** The next resumed feed replays from after `seq` instead of after its Last-Event-ID (an overlap). */
  readonly replayFrom: (seq: number) => void;
  /** The next feed ignores its Last-Event-ID and starts with a snapshot, as a server that cannot resume. */
  readonly snapshotNext: () => void;
  /** Parks POST answers until the returned function is called. */
  readonly hold: () => () => void;
  /** The next POST is answered with this error instead of being decided. */
  readonly refuseNextPost: (status: number, code: string, message: string) => void;
  /** Resolves once `check()` holds; re-checked after each request, connection and close. */
  readonly until: (check: () => boolean) => Promise<void>;
  readonly close: () => Promise<void>;
}

const PATHS: Record<ToolCallStatus, readonly ToolCallStatus[]> = {
  pending: ['pending'],
  validated: ['pending', 'validated'],
  awaiting_approval: ['pending', 'validated', 'awaiting_approval'],
  executing: ['pending', 'validated', 'awaiting_approval', 'executing'],
  committed: ['pending', 'validated', 'executing', 'committed'],
  cancelled: ['pending', 'validated', 'awaiting_approval', 'cancelled'],
  rejected: ['pending', 'rejected'],
  failed: ['pending', 'validated', 'executing', 'failed'],
};
const TERMINAL = new Set<ToolCallStatus>(['committed', 'cancelled', 'rejected', 'failed']);
const REASONS: Partial<Record<ToolCallStatus, { code: string; message: string }>> = {
  cancelled: { code: 'user_cancelled', message: 'the user cancelled this call' },
  rejected: { code: 'unauthorized', message: 'not allowed' },
  failed: { code: 'tool_error', message: 'the tool threw' },
};

/**
 * A record as a server gate writes it, at a status, with a history that leads there.
 *
 * @example
 * const settled = wireRecord('call_1', 'charge', { amount_cents: 500 }, 'committed', { output: { ok: true } });
 */
export function wireRecord(
  id: string,
  name: string,
  input: unknown,
  status: ToolCallStatus,
  extra: { output?: unknown; reason?: { code: string; message: string }; at?: number } = {},
): ToolCallRecord {
  const at = extra.at ?? 1_767_225_600_000;
  const reason =
    TERMINAL.has(status) && status !== 'committed' ? (extra.reason ?? REASONS[status]) : undefined;
  const history: Transition[] = PATHS[status].map((step) =>
    step === status && reason ? { status: step, at, reason } : { status: step, at },
  ) as Transition[];
  return {
    id,
    name,
    source: 'openai-chat',
    generatedId: false,
    turn: undefined,
    createdAt: at,
    updatedAt: at,
    status,
    history,
    input: status === 'pending' ? undefined : input,
    output: status === 'committed' ? extra.output : undefined,
    reason,
    preview: undefined,
    repairs: undefined,
    evicted: false,
  } as ToolCallRecord;
}

type WireReason = { code: string; message: string };

/** What the scripted ledger and the routes share: the ledger, the open feeds and the scripted faults. */
interface WireState {
  readonly session: string;
  readonly base: string;
  readonly token: string | undefined;
  readonly records: Map<string, ToolCallRecord>;
  readonly events: WireEvent[];
  readonly moves: { event: WireEvent; record: ToolCallRecord }[];
  readonly requests: ReceivedRequest[];
  readonly open: Set<ServerResponse>;
  readonly feedAnswers: { status: number; body: unknown }[];
  readonly postRefusals: { status: number; code: string; message: string }[];
  readonly parked: (() => void)[];
  readonly checks: Set<() => void>;
  replay: number | undefined;
  forget: boolean;
  held: boolean;
  clock: number;
}

const changed = (state: WireState) => {
  for (const check of [...state.checks]) check();
};

function sse(res: ServerResponse, name: string, id: number, data: unknown): void {
  res.write(`id: ${id}\nevent: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
}
const error = (res: ServerResponse, status: number, code: string, message: string) =>
  json(res, status, { error: { code, message } });

async function readBody(req: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of req) text += String(chunk);
  return text;
}

/** The ledger a test scripts: each change is an event, sent at once to every open feed. */
function scriptedLedger(state: WireState) {
  function append(
    record: ToolCallRecord,
    from: ToolCallStatus | null,
    to: ToolCallStatus,
    actor: string | null,
    reason?: WireReason,
  ): WireEvent {
    const event: WireEvent = {
      seq: state.events.length + 1,
      callId: record.id,
      session: state.session,
      from,
      to,
      actor,
      at: ++state.clock,
      ...(reason ? { reason } : {}),
    };
    state.events.push(event);
    state.moves.push({ event, record });
    for (const res of state.open) sse(res, 'move', event.seq, { event, record });
    return event;
  }

  function moveTo(
    id: string,
    to: ToolCallStatus,
    extra: { output?: unknown; reason?: WireReason; actor?: string } = {},
  ): WireEvent {
    const current = state.records.get(id);
    if (current === undefined) throw new Error(`no call ${id}`);
    const at = state.clock + 1;
    const reason = TERMINAL.has(to) && to !== 'committed' ? (extra.reason ?? REASONS[to]) : undefined;
    const next = {
      ...current,
      status: to,
      updatedAt: at,
      history: [...current.history, reason ? { status: to, at, reason } : { status: to, at }],
      output: to === 'committed' ? extra.output : undefined,
      reason,
    } as ToolCallRecord;
    state.records.set(id, next);
    return append(next, current.status, to, extra.actor ?? 'system', reason);
  }

  function refuse(id: string, code: string, message: string, actor = 'user_1'): WireEvent {
    const call = state.records.get(id);
    if (call === undefined) throw new Error(`no call ${id}`);
    return append(call, call.status, call.status, actor, { code, message });
  }

  function call(id: string, name: string, input: unknown, status: ToolCallStatus = 'awaiting_approval') {
    const record = wireRecord(id, name, input, status, { at: ++state.clock });
    state.records.set(id, record);
    return append(record, null, status, 'system', record.reason ?? undefined);
  }

  return { call, moveTo, refuse };
}

type Ledger = ReturnType<typeof scriptedLedger>;

/** The routes of `toolgateHandler`, answered from the scripted ledger. */
function wireRoutes(state: WireState, ledger: Ledger) {
  function feed(req: IncomingMessage, res: ServerResponse): void {
    const scripted = state.feedAnswers.shift();
    if (scripted !== undefined) return json(res, scripted.status, scripted.body ?? {});
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
    // A resumed feed may have nothing to send yet: the client must still see the stream open.
    res.flushHeaders();
    state.open.add(res);
    res.on('close', () => {
      state.open.delete(res);
      changed(state);
    });
    const last = req.headers['last-event-id'];
    const resume = !state.forget && typeof last === 'string' && /^\d+$/.test(last);
    state.forget = false;
    if (resume) {
      const after = state.replay ?? Number(last);
      state.replay = undefined;
      for (const { event, record } of state.moves)
        if (event.seq > after) sse(res, 'move', event.seq, { event, record });
    } else {
      const calls = [...state.records.values()];
      sse(res, 'snapshot', state.events.length, { seq: state.events.length, calls });
    }
    changed(state);
  }

  async function decide(
    req: IncomingMessage,
    res: ServerResponse,
    id: string,
    action: string,
    text: string,
    body: unknown,
  ): Promise<void> {
    const refusal = state.postRefusals.shift();
    if (refusal !== undefined) return error(res, refusal.status, refusal.code, refusal.message);
    if (!(req.headers['content-type'] ?? '').startsWith('application/json'))
      return error(res, 415, 'unsupported_media_type', 'send JSON');
    if (typeof body !== 'object' || body === null || text === '')
      return error(res, 400, 'bad_request', 'the body must be a JSON object');
    const call = state.records.get(id);
    if (call === undefined) return error(res, 404, 'not_found', `no call ${id}`);
    const actor = 'user_1';
    const fields = body as { inputHash?: unknown; reason?: unknown };
    const reason = typeof fields.reason === 'string' ? fields.reason : undefined;
    if (action === 'approve' || action === 'deny') {
      if (TERMINAL.has(call.status)) return error(res, 409, 'settled', `call ${id} has settled`);
      if (call.status !== 'awaiting_approval')
        return error(res, 409, 'not_awaiting', `call ${id} is not awaiting approval`);
      if (action === 'approve') {
        if (fields.inputHash !== (await inputHash(call.input))) {
          ledger.refuse(id, 'stale', 'the approval names other arguments than the call has', actor);
          return error(res, 409, 'stale', 'the arguments you approved are not the ones this call has');
        }
        ledger.moveTo(id, 'executing', { actor });
      } else {
        ledger.moveTo(id, 'cancelled', {
          actor,
          reason: { code: 'approval_denied', message: reason ?? 'a person denied this call' },
        });
      }
      return json(res, 200, { ok: true });
    }
    if (action === 'cancel') {
      if (TERMINAL.has(call.status)) return error(res, 409, 'settled', `call ${id} has settled`);
      ledger.moveTo(id, 'cancelled', {
        actor,
        reason: { code: 'user_cancelled', message: reason ?? 'the user cancelled this call' },
      });
      return json(res, 200, { ok: true });
    }
    return error(res, 404, 'not_found', 'no such action');
  }

  return async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
    const text = req.method === 'POST' ? await readBody(req) : '';
    let body: unknown = text;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      // kept as text; answered 400 below
    }
    const headers = Object.fromEntries(
      Object.entries(req.headers).map(([key, value]) => [
        key,
        Array.isArray(value) ? value.join(', ') : value,
      ]),
    );
    state.requests.push({ method: req.method ?? '', path, headers, body });
    changed(state);
    const { base } = state;
    if (!path.startsWith(`${base}/`)) return error(res, 404, 'not_found', 'no such route');
    if (state.token !== undefined && req.headers.authorization !== `Bearer ${state.token}`) {
      return error(res, 401, 'unauthorized', 'sign in to see this session');
    }
    const route = path.slice(base.length).split('/').map(decodeURIComponent);
    if (req.method === 'GET' && route[1] === 'sessions' && route[3] === 'events') {
      if (route[2] !== state.session) return error(res, 404, 'not_found', 'no such session');
      return feed(req, res);
    }
    if (req.method === 'GET' && route[1] === 'sessions' && route[3] === 'calls') {
      return json(res, 200, { seq: state.events.length, calls: [...state.records.values()] });
    }
    if (req.method === 'POST' && route[1] === 'calls' && route.length === 4) {
      if (state.held) await new Promise<void>((resolve) => state.parked.push(resolve));
      return decide(req, res, route[2] ?? '', route[3] ?? '', text, body);
    }
    return error(res, 404, 'not_found', 'no such route');
  };
}

/**
 * Starts the scripted server gate described above on a free loopback port.
 *
 * @example
 * const server = await startLoopbackServer();
 * server.call('call_1', 'charge', { amount_cents: 500, currency: 'USD' });
 * const gate = createRemoteGate({ url: server.url, session: server.session, tools: [chargeTool()] });
 */
export async function startLoopbackServer(
  options: { session?: string; token?: string; base?: string } = {},
): Promise<LoopbackServer> {
  const state: WireState = {
    session: options.session ?? 'chat_1',
    base: options.base ?? '/api/toolgate',
    token: options.token,
    records: new Map(),
    events: [],
    moves: [],
    requests: [],
    open: new Set(),
    feedAnswers: [],
    postRefusals: [],
    parked: [],
    checks: new Set(),
    replay: undefined,
    forget: false,
    held: false,
    clock: 1_767_225_600_000,
  };
  const ledger = scriptedLedger(state);
  const handle = wireRoutes(state, ledger);
  const { open, requests } = state;

  const server = createServer((req, res) => {
    handle(req, res).catch((failure: unknown) => {
      if (!res.headersSent) error(res, 500, 'internal', String(failure));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}${state.base}`,
    session: state.session,
    requests,
    feeds: () => requests.filter((request) => request.method === 'GET' && request.path.endsWith('/events')),
    openFeeds: () => open.size,
    events: state.events,
    record: (id) => state.records.get(id),
    call: ledger.call,
    moveTo: ledger.moveTo,
    refuse: ledger.refuse,
    sendRaw(text) {
      for (const res of open) res.write(text);
    },
    heartbeat() {
      for (const res of open) res.write(': heartbeat\n\n');
    },
    drop(how = 'destroy') {
      for (const res of open) {
        if (how === 'end') res.end();
        else res.destroy();
      }
    },
    answerFeed(status, body) {
      state.feedAnswers.push({ status, body });
    },
    replayFrom(seq) {
      state.replay = seq;
    },
    snapshotNext() {
      state.forget = true;
    },
    hold() {
      state.held = true;
      return () => {
        state.held = false;
        for (const resume of state.parked.splice(0)) resume();
      };
    },
    refuseNextPost(status, code, message) {
      state.postRefusals.push({ status, code, message });
    },
    until(check) {
      return new Promise((resolve) => {
        const test = () => {
          if (!check()) return;
          state.checks.delete(test);
          resolve();
        };
        state.checks.add(test);
        test();
      });
    },
    async close() {
      for (const res of open) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
