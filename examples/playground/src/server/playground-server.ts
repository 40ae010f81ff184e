import {
  isTerminal,
  type AuditEvent,
  type Reason,
  type SettledCall,
  type ToolCallRecord,
} from '@toolgate/core';
import {
  approvalLinks,
  createServerGate,
  sqliteLedger,
  toolgateHandler,
  type Budget,
  type Ledger,
} from '@toolgate/server';
import { Hono, type Context } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import { streamSSE } from 'hono/streaming';
import { createHash, randomBytes } from 'node:crypto';
import {
  MESSAGE_LIMIT,
  type ChatMode,
  type ChatView,
  type Pace,
  type TranscriptEntry,
} from '../chat/transcript.ts';
import { PAGE_TOOLS } from '../shop/page-tools.ts';
import type { ShopState } from '../shop/shop-store.ts';
import { createShopTools, type ApprovalTimes } from '../shop/shop-tools.ts';
import { loadChat, startChat, type Chat, type ChatDeps } from './chat.ts';
import { remoteLabel, type RemoteModel } from './model-connection.ts';
import { createOutbox, playgroundMail } from './outbox.ts';
import { createPageResults } from './page-calls.ts';
import { startPaymentProvider } from './payment-provider.ts';
import { openPlaygroundDb } from './playground-db.ts';
import { createShopBook } from './shop-book.ts';

/** What {@link createPlaygroundServer} takes. */
export interface PlaygroundServerOptions {
  /** The SQLite file of the ledger and the shops (created when missing). */
  readonly ledgerPath: string;
  /** How long the bank holds a transfer before sending it (default 1500 ms). */
  readonly transferHoldMs?: number;
  /** The server gate's lease on a running call (default 4 s): a call left running by a stopped server is settled this long after. */
  readonly leaseMs?: number;
  /** Where a browser reaches this server (`http://127.0.0.1:5173`): approval links point there. */
  readonly publicUrl?: string;
  /** Signs approval links (32 bytes or more); a random one per process when not given, so links end with it. */
  readonly linkSecret?: string;
  /** How soon a large transfer's manager is reminded, finance asked, and the call expired (demo speed by default). */
  readonly approvalTimes?: ApprovalTimes;
  /**
   * An SMTP URL (`smtp://127.0.0.1:1025`): the notices are also mailed there, each person at a
   * made-up address under `playground.toolgate.invalid`, so a local mail catcher shows them.
   */
  readonly smtpUrl?: string;
  /** Serve `POST /api/test/drop-feeds`, which ends every open event stream (for the end-to-end tests). */
  readonly testHooks?: boolean;
  readonly onError?: (error: unknown) => void;
}

/** What the page loads for its conversation: the chat, the shop as the server keeps it, and the audit trail so far. */
export interface ChatLoad {
  readonly chat: ChatView;
  readonly shop: ShopState;
  readonly audit: readonly AuditEvent[];
}

/** The playground's back end: the server gate and its ledger, the chats, and the HTTP API over them. */
export interface PlaygroundServer {
  /** The API, as a Web handler: everything under `/api/`. */
  readonly fetch: (request: Request) => Promise<Response>;
  readonly close: () => Promise<void>;
}

/** What the page's "as the manager" and "as finance" add to the visitor's principal. */
const MANAGER = ':manager';
const FINANCE = ':finance';

/** The visitor a principal belongs to: the manager and finance this browser plays are the visitor's. */
const visitorOf = (principal: string): string => principal.replace(/:(manager|finance)$/, '');

/**
 * Transfers and wires of one chat: $60.00, counted by the ledger as it decides each call. It belongs
 * to the chat (the gate's session), as the wallet does, so a scenario, which starts a fresh chat,
 * does what its card says however often it is picked; one scenario of its own runs into it.
 */
const TRANSFER_BUDGET: Budget = {
  name: 'chat_transfers',
  tools: ['transfer_funds', 'wire_funds'],
  per: 'session',
  windowMs: 24 * 60 * 60 * 1000,
  max: 6000,
  measure: (input) => (input as { amount_cents: number }).amount_cents,
};

/** The browser's cookie: a random secret per browser, sent only to this origin, never readable by the page's script. */
const COOKIE = 'tg_visitor';

const paceScale = (pace: Pace) => (pace === 'instant' ? 0 : 1);

/**
 * The playground's server: one server gate over an SQLite ledger, the shop's tools running on it,
 * a chat loop per conversation calling the model from here, and `toolgateHandler` for the page's
 * mirror. Each browser is a principal of its own (a cookie), so one browser cannot see or decide
 * another's calls.
 */
export async function createPlaygroundServer(options: PlaygroundServerOptions): Promise<PlaygroundServer> {
  const onError = options.onError ?? ((error: unknown) => console.error(error));
  const ledger: Ledger = await sqliteLedger({ path: options.ledgerPath });
  const store = await openPlaygroundDb(ledger);
  const chats = new Map<string, Chat>();
  // The payment provider `pay_by_card` charges: on loopback, in this process, with no account.
  const provider = await startPaymentProvider();
  const book = createShopBook(store, {
    paceOf: (session) => paceScale(chats.get(session)?.pace ?? 'realistic'),
    transferHoldMs: options.transferHoldMs ?? 1500,
    paymentsUrl: provider.url,
  });
  const serverTools = createShopTools(book.backend, options.approvalTimes);
  // The visitor, and the same visitor acting as the manager or finance (the page's switches): each
  // may see and approve the visitor's calls, so a wire gets its two distinct approvers. A large
  // transfer asks the manager by name, and its requester may not approve it.
  const mayDecide = (principal: string, owner: string) =>
    principal === owner || principal === `${owner}${MANAGER}` || principal === `${owner}${FINANCE}`;
  // Approval links point at this server; the outbox keeps the notices a real app would send.
  const links = approvalLinks({
    secret: options.linkSecret ?? randomBytes(32),
    baseUrl: `${options.publicUrl ?? 'http://127.0.0.1:5173'}/api/toolgate`,
  });
  const outbox = createOutbox(visitorOf);
  const gate = createServerGate({
    tools: serverTools,
    ledger,
    links,
    channels: [outbox.channel, ...(options.smtpUrl === undefined ? [] : [playgroundMail(options.smtpUrl)])],
    leaseMs: options.leaseMs ?? 4000,
    approvalTtlMs: 60 * 60 * 1000,
    onError,
    budgets: [TRANSFER_BUDGET],
    canSee: (principal, session) => mayDecide(principal, session.owner),
    canApprove: (principal, call) => mayDecide(principal, call.owner),
  });
  // Held in this process's memory only: never written anywhere, never sent back to a page.
  const remoteModels = new Map<string, RemoteModel>();
  const deps: ChatDeps = {
    gate,
    store,
    book,
    pageResults: createPageResults(),
    serverTools,
    pageTools: PAGE_TOOLS,
    remoteModelOf: (principal) => remoteModels.get(principal),
    onError,
  };

  async function chatById(id: string): Promise<Chat | undefined> {
    const known = chats.get(id);
    if (known !== undefined) return known;
    const row = await store.db
      .selectFrom('playground_chats')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    if (row === undefined) return undefined;
    const chat = chats.get(id) ?? loadChat(deps, row);
    chats.set(id, chat);
    return chat;
  }

  async function newChat(principal: string, pace: Pace, mode: ChatMode, notice?: string): Promise<Chat> {
    const chat = await startChat(deps, { principal, pace, mode, notice });
    chats.set(chat.id, chat);
    return chat;
  }

  /**
   * The visitor leaves their chat for a new one, and the page offers no way back to it: every call
   * still open there is cancelled through the gate, so that nothing waits for an approval nobody
   * can give. Resolves with what the new chat should say about them, if anything was open.
   */
  /** The chat the visitor has open: the last one started, in whichever tab. */
  async function currentChatOf(principal: string): Promise<string | undefined> {
    const row = await store.db
      .selectFrom('playground_visitors')
      .select('chat')
      .where('principal', '=', principal)
      .executeTakeFirst();
    return row?.chat;
  }

  // The pages still showing a chat, told when the visitor leaves it for a new one (in another tab):
  // a page left on an abandoned chat could go on proposing there, unreachable from any other.
  const leftListeners = new Map<string, Set<(current: string) => void>>();

  async function leave(principal: string): Promise<string | undefined> {
    const id = await currentChatOf(principal);
    const chat = id === undefined ? undefined : await chatById(id);
    if (chat === undefined) return undefined;
    const open = (await gate.calls(chat.id, principal)).filter((call) => !isTerminal(call.status));
    const reason = 'the visitor started a new chat';
    // The exchange's own stop cancels its calls (and the page's); with none running, the gate does it here.
    if (!chat.stop(reason))
      await Promise.all(open.map((call) => gate.cancel(call.id, { principal, reason })));
    if (open.length === 0) return undefined;
    // A call held in doubt is not cancelled (only a person's word ends it): nothing to wait for.
    const ended = await Promise.all(
      open.map((call) =>
        isHeld(call)
          ? Promise.resolve(undefined)
          : Promise.race([gate.settled(call.id), new Promise<undefined>((done) => setTimeout(done, 3000))]),
      ),
    );
    return `Started a new chat. In the last one, ${open.map((call, index) => leftBehind(call, ended[index])).join(' ')}`;
  }

  // Conversations a stopped process left waiting for their calls' answers go on now.
  for (const row of await store.db
    .selectFrom('playground_chats')
    .selectAll()
    .where('waiting', 'is not', null)
    .execute()) {
    const chat = await chatById(row.id);
    chat?.resume();
  }

  async function load(chat: Chat): Promise<ChatLoad> {
    const audit: AuditEvent[] = [];
    for (let after = 0; ;) {
      const page = await ledger.movesAfter(after, { session: chat.id, limit: 1000 });
      for (const { event, record } of page) {
        audit.push({
          callId: event.callId,
          name: record.name,
          from: event.from,
          to: event.to,
          at: event.at,
          ...(event.reason === undefined ? {} : { reason: event.reason as Reason }),
        });
      }
      if (page.length < 1000) break;
      after = page[page.length - 1]?.event.seq ?? after;
    }
    return { chat: viewOf(chat), shop: await book.read(chat.id), audit };
  }

  const viewOf = (chat: Chat): ChatView => ({
    id: chat.id,
    pace: chat.pace,
    mode: chat.mode,
    modelLabel: chat.modelLabel(),
    transcript: chat.transcript.getState(),
  });

  // Every open event stream, so that the end-to-end tests can cut them all from the server's side.
  const feeds = new Set<() => void>();

  const handler = toolgateHandler(gate, {
    authenticate: (request) => principals.get(request),
    basePath: '/api/toolgate',
    links,
    heartbeatMs: 10_000,
    onError,
  });
  const principals = new WeakMap<Request, string>();

  type Env = { Variables: { principal: string | undefined } };
  const app = new Hono<Env>().basePath('/api');

  app.use('*', async (c, next) => {
    const secret = getCookie(c as Context, COOKIE);
    c.set('principal', secret !== undefined && /^[\w-]{43}$/.test(secret) ? principalOf(secret) : undefined);
    await next();
    c.header('cache-control', 'no-store');
  });

  const visitor = (c: Context<Env>): string => {
    const principal = c.get('principal');
    if (principal === undefined)
      throw new ApiError(401, 'unauthenticated', 'this browser has no session: load the page first');
    return principal;
  };

  const ownChat = async (c: Context<Env>): Promise<Chat> => {
    const principal = visitor(c);
    const chat = await chatById(c.req.param('id') ?? '');
    // Another browser's chat is answered exactly as a chat that does not exist.
    if (chat === undefined || chat.principal !== principal)
      throw new ApiError(404, 'not_found', 'no such chat');
    return chat;
  };

  /** The page's first request: gives this browser its cookie, when it has none. */
  app.post('/visit', (c) => {
    if (c.get('principal') === undefined) {
      setCookie(c, COOKIE, randomBytes(32).toString('base64url'), {
        httpOnly: true,
        sameSite: 'Strict',
        path: '/',
        maxAge: 60 * 60 * 24 * 30,
      });
    }
    return c.json({ ok: true });
  });

  /** The conversation this browser has open (a new one when it has none). */
  app.get('/chat', async (c) => {
    const principal = visitor(c);
    const id = await currentChatOf(principal);
    const pace = readPace(c.req.query('pace'));
    const chat =
      (id === undefined ? undefined : await chatById(id)) ?? (await newChat(principal, pace, 'scripted'));
    return c.json(await load(chat));
  });

  /** A new conversation, with a fresh shop; the calls still open in the last one are cancelled. */
  app.post('/chat', async (c) => {
    const principal = visitor(c);
    const body = await readJson(c);
    const left = await currentChatOf(principal);
    const notice = await leave(principal);
    const chat = await newChat(
      principal,
      readPace(body['pace']),
      body['mode'] === 'remote' ? 'remote' : 'scripted',
      notice,
    );
    for (const tell of leftListeners.get(left ?? '') ?? []) tell(chat.id);
    return c.json(await load(chat));
  });

  app.post('/chat/:id/messages', async (c) => {
    const chat = await ownChat(c);
    if ((await currentChatOf(chat.principal)) !== chat.id)
      throw new ApiError(
        409,
        'left',
        'this chat was left for a newer one, started in another tab or window; continue there',
      );
    const text = (await readJson(c))['text'];
    if (typeof text !== 'string' || text.trim() === '')
      throw new ApiError(400, 'malformed', 'send { "text": "…" }, a message of 1 or more characters');
    const message = text.trim();
    if (message.length > MESSAGE_LIMIT)
      throw new ApiError(
        400,
        'too_long',
        `a message can be at most ${MESSAGE_LIMIT} characters; this one has ${message.length}`,
      );
    if (!chat.send(message)) throw new ApiError(409, 'busy', 'the model is still answering; stop it or wait');
    return c.json({ ok: true }, 202);
  });

  app.post('/chat/:id/stop', async (c) => {
    (await ownChat(c)).stop();
    return c.json({ ok: true });
  });

  /** What the page's own gate settled for a call the server handed to it. */
  app.post('/chat/:id/tool-results', async (c) => {
    const chat = await ownChat(c);
    const body = await readJson(c);
    const id = body['id'];
    const handed = chat.transcript
      .getState()
      .entries.some(
        (entry) =>
          entry.kind === 'assistant' && typeof id === 'string' && entry.pageCalls?.[id] !== undefined,
      );
    if (typeof id !== 'string' || !handed)
      throw new ApiError(404, 'not_found', 'this chat handed no such call to the page');
    const answered = deps.pageResults.answer(
      id,
      typeof body['record'] === 'object' && body['record'] !== null ? body['record'] : {},
    );
    return c.json({ ok: true, answered });
  });

  app.get('/chat/:id/shop', async (c) => c.json({ shop: await book.read((await ownChat(c)).id) }));

  /** The conversation's card charges as the payment provider's dashboard shows them (a call's key is its id). */
  app.get('/chat/:id/payments', async (c) => {
    const chat = await ownChat(c);
    const calls = await gate.calls(chat.id, chat.principal);
    const keys = new Set(calls.filter((call) => call.name === 'pay_by_card').map((call) => call.id));
    return c.json({ charges: provider.chargesFor(keys) });
  });

  /** The chat's transfer budget as the ledger counts it now: what is used and what is left. */
  app.get('/chat/:id/budget', async (c) => {
    const chat = await ownChat(c);
    const since = Date.now() - TRANSFER_BUDGET.windowMs;
    const row = await ledger.db
      .selectFrom('toolgate_budget_uses')
      .select((eb) => eb.fn.sum<number>('amount').as('used'))
      .where('budget', '=', TRANSFER_BUDGET.name)
      .where('key', '=', chat.id)
      .where('at', '>', since)
      .executeTakeFirst();
    const used = Number(row?.used ?? 0);
    return c.json({
      name: TRANSFER_BUDGET.name,
      max: TRANSFER_BUDGET.max,
      used,
      left: Math.max(0, TRANSFER_BUDGET.max - used),
      windowMs: TRANSFER_BUDGET.windowMs,
    });
  });

  /** The transcript as it changes: a `transcript` snapshot, then `patch`es with the entries that changed. */
  app.get('/chat/:id/events', async (c) => {
    const chat = await ownChat(c);
    return streamSSE(c, async (stream) => {
      let sent = new Map<string, TranscriptEntry>();
      let busy: boolean | undefined;
      let timer: NodeJS.Timeout | undefined;
      let done!: () => void;
      const ended = new Promise<void>((resolve) => (done = resolve));
      const write = (event: string, data: unknown) =>
        stream.writeSSE({ event, data: JSON.stringify(data) }).catch(() => done());
      const flush = () => {
        timer = undefined;
        const state = chat.transcript.getState();
        const changed = state.entries.filter((entry) => sent.get(entry.key) !== entry);
        if (changed.length === 0 && state.busy === busy) return;
        sent = new Map(state.entries.map((entry) => [entry.key, entry]));
        busy = state.busy;
        void write('patch', { entries: changed, busy: state.busy });
      };
      const state = chat.transcript.getState();
      sent = new Map(state.entries.map((entry) => [entry.key, entry]));
      busy = state.busy;
      await stream.writeSSE({ event: 'transcript', data: JSON.stringify(state), retry: 1000 });
      const unsubscribe = chat.transcript.subscribe(() => {
        timer ??= setTimeout(flush, 40);
      });
      const heartbeat = setInterval(() => void stream.write(': heartbeat\n\n').catch(() => done()), 10_000);
      feeds.add(done);
      stream.onAbort(done);
      const tell = (current: string) => void write('left', { chat: current });
      const listeners = leftListeners.get(chat.id) ?? new Set();
      leftListeners.set(chat.id, listeners.add(tell));
      const current = await currentChatOf(chat.principal);
      if (current !== chat.id && current !== undefined) tell(current);
      await ended;
      listeners.delete(tell);
      if (listeners.size === 0) leftListeners.delete(chat.id);
      feeds.delete(done);
      unsubscribe();
      clearTimeout(timer);
      clearInterval(heartbeat);
    });
  });

  /**
   * What the outbox would have sent to this visitor, their manager and finance, oldest first. Read
   * again and again rather than streamed: a browser holds six connections to a server, and a tab's
   * two feeds and a second tab's would leave a decision none.
   */
  app.get('/outbox', (c) => c.json({ notices: outbox.itemsOf(visitor(c)) }));

  /** The visitor's own model. The key is kept in this server's memory and never sent back. */
  app.get('/model', (c) => {
    const settings = remoteModels.get(visitor(c));
    return c.json(
      settings === undefined
        ? { configured: false }
        : {
            configured: true,
            baseURL: settings.baseURL,
            model: settings.model,
            hasKey: settings.apiKey !== '',
            label: remoteLabel(settings),
          },
    );
  });

  app.put('/model', async (c) => {
    const principal = visitor(c);
    const body = await readJson(c);
    const { baseURL, model, apiKey } = body;
    if (
      typeof baseURL !== 'string' ||
      !/^https?:\/\/[^\s]+$/.test(baseURL) ||
      typeof model !== 'string' ||
      model.trim() === '' ||
      (apiKey !== undefined && typeof apiKey !== 'string')
    ) {
      throw new ApiError(400, 'malformed', 'send { "baseURL": "http(s)://…", "model": "…", "apiKey"?: "…" }');
    }
    const previous = remoteModels.get(principal);
    // An empty key field keeps the key already held for the same endpoint.
    const key =
      typeof apiKey === 'string' && apiKey !== ''
        ? apiKey
        : previous?.baseURL === baseURL
          ? previous.apiKey
          : '';
    const settings: RemoteModel = { baseURL, model: model.trim(), apiKey: key };
    remoteModels.set(principal, settings);
    return c.json({
      configured: true,
      baseURL: settings.baseURL,
      model: settings.model,
      hasKey: key !== '',
      label: remoteLabel(settings),
    });
  });

  app.all('/toolgate/*', async (c) => {
    const principal = c.get('principal');
    const drop = new AbortController();
    const request = new Request(c.req.raw, { signal: AbortSignal.any([c.req.raw.signal, drop.signal]) });
    const as = c.req.header('x-playground-as');
    if (principal !== undefined)
      principals.set(
        request,
        as === 'manager' ? `${principal}${MANAGER}` : as === 'finance' ? `${principal}${FINANCE}` : principal,
      );
    const cut = () => drop.abort();
    if (request.method === 'GET' && new URL(request.url).pathname.endsWith('/events')) {
      feeds.add(cut);
      request.signal.addEventListener('abort', () => feeds.delete(cut), { once: true });
    }
    return handler(request);
  });

  if (options.testHooks === true) {
    // Ends every open event stream now, or, with `afterEvents`, once that many more ledger events
    // are committed (in the middle of a flood, say). GET says how many streams it has ended.
    let dropped = 0;
    const cutAll = () => {
      const open = [...feeds];
      for (const cut of open) cut();
      dropped += open.length;
    };
    app.post('/test/drop-feeds', async (c) => {
      const body = c.req.header('content-type') === undefined ? {} : await readJson(c);
      const after = typeof body['afterEvents'] === 'number' ? body['afterEvents'] : 0;
      if (after <= 0) {
        cutAll();
        return c.json({ dropped });
      }
      const target = (await ledger.head()) + after;
      let checking = false;
      const stop = ledger.onCommitted(() => {
        if (checking) return;
        checking = true;
        void ledger.head().then((head) => {
          checking = false;
          if (head < target) return;
          stop();
          cutAll();
        }, onError);
      });
      return c.json({ armed: target });
    });
    app.get('/test/drop-feeds', (c) => c.json({ dropped }));
  }

  app.onError((error, c) => {
    if (error instanceof ApiError)
      return c.json({ error: { code: error.code, message: error.message } }, error.status);
    onError(error);
    return c.json(
      { error: { code: 'unavailable', message: 'the server could not answer this request' } },
      500,
    );
  });
  app.notFound((c) =>
    c.json({ error: { code: 'not_found', message: `no route ${c.req.method} ${c.req.path}` } }, 404),
  );

  return {
    fetch: (request) => Promise.resolve(app.fetch(request)),
    async close() {
      for (const cut of [...feeds]) cut();
      for (const chat of chats.values()) chat.close();
      await gate.close();
      await ledger.close();
      await provider.close();
    },
  };
}

/** What became of one call left open in a chat the visitor left, in a sentence. */
function leftBehind(call: ToolCallRecord, ended: SettledCall | undefined): string {
  if (isHeld(call))
    return `${call.name}'s outcome was unknown: it stays held for a person to settle, and is never run again by itself.`;
  const was =
    call.status === 'awaiting_approval'
      ? `${call.name} awaited your approval`
      : `${call.name} was ${call.status === 'executing' ? 'running' : 'not finished'}`;
  if (ended === undefined) return `${was}; it is being cancelled.`;
  if (ended.status === 'cancelled')
    return `${was}: it was cancelled, and ${call.status === 'executing' ? 'nothing it did was committed' : 'nothing of it ran'}.`;
  return `${was}, and it ended ${ended.status}${ended.reason === undefined ? '' : ` (${ended.reason.code})`}.`;
}

/** A running call whose outcome nobody can tell, held for a person. */
const isHeld = (call: ToolCallRecord): boolean => call.status === 'executing' && call.doubt !== undefined;

/** The principal a browser's cookie stands for: a digest, so the secret itself is never stored or shown. */
function principalOf(secret: string): string {
  return `visitor-${createHash('sha256').update(secret).digest('hex').slice(0, 16)}`;
}

class ApiError extends Error {
  constructor(
    readonly status: 400 | 401 | 404 | 409 | 413 | 415,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The largest body the API reads, in bytes: a message is 4,000 characters (up to 4 bytes each in UTF-8), the rest is smaller. */
const MAX_BODY_BYTES = 64 * 1024;

/**
 * The request's JSON body, read only as far as the limit: a body declared larger is refused before
 * a byte of it is read, and one that turns out larger is cut off there.
 */
async function readJson(c: Context): Promise<Record<string, unknown>> {
  if (!/^application\/json\b/i.test(c.req.header('content-type') ?? ''))
    throw new ApiError(415, 'unsupported_media_type', 'send the body as application/json');
  const tooLarge = () => new ApiError(413, 'too_large', `the body may be at most ${MAX_BODY_BYTES} bytes`);
  if (Number(c.req.header('content-length') ?? 0) > MAX_BODY_BYTES) throw tooLarge();
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = c.req.raw.body?.getReader();
  for (let part = await reader?.read(); part !== undefined && !part.done; part = await reader?.read()) {
    size += part.value.byteLength;
    if (size > MAX_BODY_BYTES) {
      await reader?.cancel();
      throw tooLarge();
    }
    chunks.push(part.value);
  }
  let body: unknown;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new ApiError(400, 'malformed', 'the body is not valid JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new ApiError(400, 'malformed', 'the body must be a JSON object');
  return body as Record<string, unknown>;
}

const readPace = (value: unknown): Pace => (value === 'instant' ? 'instant' : 'realistic');
