// A payment provider on 127.0.0.1 that works the way Stripe's API does with idempotency keys: a
// charge sent again with the same `Idempotency-Key` answers the charge made the first time and
// charges nothing more; a charge can be looked up by its key; a refund is a charge's undoing, also
// keyed. It can be told to misbehave the ways a real one does: record a charge and then drop the
// connection before answering, hold the answer for ever, or drop the request before recording.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface Charge {
  readonly id: string;
  readonly key: string;
  readonly amount_cents: number;
  readonly order: string;
  refunded: boolean;
}

export interface Refund {
  readonly id: string;
  readonly key: string;
  readonly charge: string;
  readonly amount_cents: number;
}

/**
 * How the provider treats the next requests to an endpoint:
 * - `answer`: as a provider should;
 * - `record-then-drop`: a charge or refund is recorded, then the connection is cut before any answer;
 * - `record-then-hang`: a charge or refund is recorded, and the answer held until the provider closes;
 * - `drop`: the connection is cut before anything is recorded;
 * - `hang`: the request is held, unanswered, until the provider closes;
 * - `error`: answered 500 after nothing was recorded (an outage in front of the provider).
 */
export type Behaviour = 'answer' | 'record-then-drop' | 'record-then-hang' | 'drop' | 'hang' | 'error';

export interface PaymentApi {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly charges: readonly Charge[];
  readonly refunds: readonly Refund[];
  /** Every request as it arrived: method, path and the key it carried. */
  readonly requests: readonly { method: string; path: string; key: string | null }[];
  /**
   * How charges (`POST /charges`), lookups (`GET /charges`) and refunds are treated from now on;
   * with `times`, only the next that many requests, then as they should be.
   */
  readonly behave: (endpoint: 'charge' | 'lookup' | 'refund', how: Behaviour, times?: number) => void;
  /** Resolves once a charge is recorded (the `n`th, counting from 1). */
  readonly charged: (n?: number) => Promise<Charge>;
  /** Lookups being answered right now, most at once so far. */
  readonly lookups: { now: number; most: number };
  /** Holds each lookup's answer this long, so that two at once would overlap. */
  lookupDelayMs: number;
  readonly close: () => Promise<void>;
}

export async function startPaymentApi(): Promise<PaymentApi> {
  const charges: Charge[] = [];
  const refunds: Refund[] = [];
  const requests: { method: string; path: string; key: string | null }[] = [];
  const behaviour = { charge: 'answer', lookup: 'answer', refund: 'answer' } as Record<
    'charge' | 'lookup' | 'refund',
    Behaviour
  >;
  const left = { charge: Infinity, lookup: Infinity, refund: Infinity };
  const waiting: { n: number; resolve: (charge: Charge) => void }[] = [];
  const held = new Set<ServerResponse>();
  const sockets = new Set<Socket>();
  const lookups = { now: 0, most: 0 };

  const send = (response: ServerResponse, status: number, body: unknown) => {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify(body));
  };
  const cut = (request: IncomingMessage): void => void request.socket.destroy();

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    const key = request.headers['idempotency-key'];
    const keyText = typeof key === 'string' ? key : null;
    requests.push({ method: request.method ?? '', path: url.pathname, key: keyText });
    let text = '';
    for await (const chunk of request) text += String(chunk);
    const body = (text === '' ? {} : JSON.parse(text)) as Record<string, unknown>;
    const endpoint =
      url.pathname === '/charges'
        ? request.method === 'GET'
          ? 'lookup'
          : 'charge'
        : url.pathname === '/refunds'
          ? 'refund'
          : undefined;
    if (endpoint === undefined) return send(response, 404, { error: { message: 'no such endpoint' } });
    const how = behaviour[endpoint];
    if ((left[endpoint] -= 1) <= 0) {
      behaviour[endpoint] = 'answer';
      left[endpoint] = Infinity;
    }
    if (how === 'hang') {
      held.add(response);
      return;
    }
    if (how === 'drop') return cut(request);
    if (how === 'error') return send(response, 500, { error: { message: 'the provider is having trouble' } });
    if (endpoint === 'lookup') return lookUp(url.searchParams.get('idempotency_key'), response);
    if (keyText === null)
      return send(response, 400, { error: { message: 'an Idempotency-Key header is required' } });
    if (endpoint === 'charge') {
      if (typeof body.amount_cents !== 'number' || body.amount_cents <= 0)
        return send(response, 402, { error: { message: 'the card was declined' } });
      let charge = charges.find((candidate) => candidate.key === keyText);
      if (charge === undefined) {
        charge = {
          id: `ch_${charges.length + 1}`,
          key: keyText,
          amount_cents: body.amount_cents,
          order: String(body.order),
          refunded: false,
        };
        charges.push(charge);
        for (const waiter of waiting.filter((candidate) => candidate.n === charges.length))
          waiter.resolve(charge);
      }
      if (how === 'record-then-drop') return cut(request);
      if (how === 'record-then-hang') return void held.add(response);
      return send(response, 200, charge);
    }
    const target = charges.find((candidate) => candidate.id === body.charge);
    if (target === undefined) return send(response, 404, { error: { message: 'no such charge' } });
    let refund = refunds.find((candidate) => candidate.key === keyText);
    if (refund === undefined) {
      refund = {
        id: `re_${refunds.length + 1}`,
        key: keyText,
        charge: target.id,
        amount_cents: target.amount_cents,
      };
      refunds.push(refund);
      target.refunded = true;
    }
    if (how === 'record-then-drop') return cut(request);
    if (how === 'record-then-hang') return void held.add(response);
    return send(response, 200, refund);
  }

  async function lookUp(key: string | null, response: ServerResponse): Promise<void> {
    lookups.now += 1;
    lookups.most = Math.max(lookups.most, lookups.now);
    try {
      if (api.lookupDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, api.lookupDelayMs));
      const charge = charges.find((candidate) => candidate.key === key);
      if (charge === undefined) send(response, 404, { error: { message: 'no charge has that key' } });
      else send(response, 200, charge);
    } finally {
      lookups.now -= 1;
    }
  }

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) =>
      send(response, 500, { error: { message: String(error) } }),
    );
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const api: PaymentApi = {
    url: `http://127.0.0.1:${port}`,
    charges,
    refunds,
    requests,
    behave: (endpoint, how, times = Infinity) => {
      behaviour[endpoint] = how;
      left[endpoint] = times;
    },
    charged: (n = 1) =>
      charges.length >= n
        ? Promise.resolve(charges[n - 1] as Charge)
        : new Promise((resolve) => waiting.push({ n, resolve })),
    lookups,
    lookupDelayMs: 0,
    close: () =>
      new Promise((resolve) => {
        for (const response of held) response.destroy();
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
  return api;
}
