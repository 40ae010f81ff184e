import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { TEST_CARDS, type CardCharge, type TestCard } from '../shop/card-payment.ts';

/** A charge as the provider keeps it. */
export interface ProviderCharge {
  readonly id: string;
  /** The `Idempotency-Key` it was made with: a repeat of the key answers this charge again. */
  readonly key: string;
  readonly amount_cents: number;
  readonly currency: string;
  readonly payment_method: TestCard;
  readonly created: number;
  /** The refund that undid it, once there is one. */
  refund: string | undefined;
}

/**
 * A small payment provider that works the way Stripe's API does with idempotency keys, on a
 * loopback port of the playground's own server, with no account and no key:
 *
 * - `POST /v1/charges` with an `Idempotency-Key` header and `{ amount_cents, currency,
 *   payment_method }`: a charge; the same key again answers the same charge and charges nothing;
 * - `GET /v1/charges?idempotency_key=…`: the charge made with that key, or 404;
 * - `POST /v1/refunds` with an `Idempotency-Key` and `{ charge }`: refunds a charge, once.
 *
 * Its test cards misbehave on purpose, as a real network does: `pm_card_answer_lost` records the
 * charge, then the connection drops before the answer; `pm_card_provider_down` does the same, and
 * its charges cannot be looked up either (the provider answers 503).
 */
export interface PaymentProvider {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** The charges made with these keys, in the order they were made (what the provider's dashboard shows). */
  readonly chargesFor: (keys: ReadonlySet<string>) => readonly CardCharge[];
  readonly close: () => Promise<void>;
}

const send = (response: ServerResponse, status: number, body: unknown) => {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
};
const failure = (response: ServerResponse, status: number, message: string) =>
  send(response, status, { error: { message } });

/** Starts the provider on 127.0.0.1, on a port of the system's choosing. */
export async function startPaymentProvider(): Promise<PaymentProvider> {
  const charges: ProviderCharge[] = [];
  const refunds = new Map<string, { id: string; charge: string; amount_cents: number }>();
  const sockets = new Set<Socket>();
  const view = (charge: ProviderCharge) => ({
    id: charge.id,
    amount_cents: charge.amount_cents,
    currency: charge.currency,
    payment_method: charge.payment_method,
    status: charge.refund === undefined ? 'succeeded' : 'refunded',
  });

  function charge(
    key: string,
    body: Record<string, unknown>,
    request: IncomingMessage,
    response: ServerResponse,
  ) {
    const { amount_cents: amount, currency, payment_method: card } = body;
    if (
      typeof amount !== 'number' ||
      !Number.isInteger(amount) ||
      amount <= 0 ||
      typeof currency !== 'string'
    )
      return failure(response, 400, 'amount_cents must be a positive integer, with a currency');
    if (typeof card !== 'string' || !TEST_CARDS.includes(card as TestCard))
      return failure(response, 402, 'the card was declined: no such payment method');
    let made = charges.find((candidate) => candidate.key === key);
    if (made === undefined) {
      made = {
        id: `ch_${String(charges.length + 1).padStart(4, '0')}`,
        key,
        amount_cents: amount,
        currency,
        payment_method: card as TestCard,
        created: Date.now(),
        refund: undefined,
      };
      charges.push(made);
    }
    // Recorded, and then the answer is lost on the way back.
    if (made.payment_method !== 'pm_card_visa') return void request.socket.destroy();
    send(response, 200, view(made));
  }

  function lookUp(key: string | null, response: ServerResponse) {
    const found = charges.find((candidate) => candidate.key === key);
    if (found === undefined) return failure(response, 404, 'no charge was made with that idempotency key');
    if (found.payment_method === 'pm_card_provider_down')
      return failure(response, 503, 'the provider cannot look charges up right now');
    send(response, 200, view(found));
  }

  function refund(key: string, body: Record<string, unknown>, response: ServerResponse) {
    const target = charges.find((candidate) => candidate.id === body['charge']);
    if (target === undefined) return failure(response, 404, 'no such charge');
    let made = refunds.get(key);
    if (made === undefined) {
      if (target.refund !== undefined) return failure(response, 409, `${target.id} was refunded already`);
      made = {
        id: `re_${String(refunds.size + 1).padStart(4, '0')}`,
        charge: target.id,
        amount_cents: target.amount_cents,
      };
      refunds.set(key, made);
      target.refund = made.id;
    }
    send(response, 200, made);
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    let text = '';
    for await (const chunk of request) text += String(chunk);
    if (request.method === 'GET' && url.pathname === '/v1/charges')
      return lookUp(url.searchParams.get('idempotency_key'), response);
    if (request.method !== 'POST') return failure(response, 404, 'no such endpoint');
    const key = request.headers['idempotency-key'];
    if (typeof key !== 'string' || key === '')
      return failure(response, 400, 'an Idempotency-Key header is required');
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return failure(response, 400, 'the body is not JSON');
    }
    if (url.pathname === '/v1/charges') return charge(key, body, request, response);
    if (url.pathname === '/v1/refunds') return refund(key, body, response);
    failure(response, 404, 'no such endpoint');
  }

  const server = createServer((request, response) => {
    handle(request, response).catch(() => failure(response, 500, 'the provider failed'));
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    chargesFor: (keys) =>
      charges
        .filter((candidate) => keys.has(candidate.key))
        .map(({ id, amount_cents, currency, payment_method, refund: refunded }) => ({
          id,
          amount_cents,
          currency,
          payment_method,
          refund: refunded,
        })),
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
