import { defineTool, notExecuted, type JsonSchemaObject } from '@toolgate/core';

/**
 * The payment provider's test cards: `pm_card_visa` is charged and answered; on
 * `pm_card_answer_lost` the charge is recorded and the answer lost on the way back; on
 * `pm_card_provider_down` the answer is lost and the provider cannot look the charge up either.
 */
export const TEST_CARDS = ['pm_card_visa', 'pm_card_answer_lost', 'pm_card_provider_down'] as const;
export type TestCard = (typeof TEST_CARDS)[number];

/** A charge as the payment provider's dashboard shows it: refunded once `refund` names the refund. */
export interface CardCharge {
  readonly id: string;
  readonly amount_cents: number;
  readonly currency: string;
  readonly payment_method: TestCard;
  readonly refund: string | undefined;
}

const PAY_BY_CARD = {
  type: 'object',
  properties: {
    amount_cents: { type: 'integer', minimum: 1, maximum: 50_000, description: 'Amount in cents.' },
    currency: { type: 'string', enum: ['USD'] },
    payment_method: {
      type: 'string',
      enum: [...TEST_CARDS],
      description: 'The card on file, as the payment provider names it.',
    },
  },
  required: ['amount_cents', 'currency', 'payment_method'],
  additionalProperties: false,
} as const satisfies JsonSchemaObject;

/** What a card payment returns: the provider's charge. */
export interface CardReceipt {
  readonly charge: string;
  readonly amount_cents: number;
  readonly currency: string;
}

const RECEIPT = {
  type: 'object',
  properties: {
    charge: { type: 'string', pattern: '^ch_' },
    amount_cents: { type: 'integer', minimum: 1 },
    currency: { type: 'string' },
  },
  required: ['charge', 'amount_cents', 'currency'],
  additionalProperties: false,
} as const satisfies JsonSchemaObject;

const receiptOf = (charge: { id: string; amount_cents: number; currency: string }): CardReceipt => ({
  charge: charge.id,
  amount_cents: charge.amount_cents,
  currency: charge.currency,
});

/**
 * `pay_by_card` charges the visitor's card at the payment provider at `url`, the way a tool that
 * pays through Stripe is written: every request carries the call's idempotency key, so a repeat
 * is never a second charge; a 4xx means the provider charged nothing (`notExecuted`); any other
 * failure (the connection dropped after the provider recorded the charge) asks `reconcile`, which
 * looks the charge up by that key. When the provider cannot say either, the call is held for a
 * person (`onUnknown: 'hold'`) and never run again by itself. `compensate` refunds a charge.
 */
export function payByCard(url: string) {
  return defineTool({
    name: 'pay_by_card',
    description:
      'Charge the visitor’s card at the payment provider. The charge happens at the provider, not in the wallet; it can be refunded afterwards.',
    inputSchema: PAY_BY_CARD,
    outputSchema: RECEIPT,
    onUnknown: 'hold',
    async execute(input, ctx): Promise<CardReceipt> {
      const response = await fetch(`${url}/v1/charges`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': ctx.idempotencyKey },
        body: JSON.stringify(input),
        signal: ctx.signal,
      });
      if (response.status >= 400 && response.status < 500)
        throw notExecuted(`the provider refused the charge: ${await errorOf(response)}`);
      if (!response.ok) throw new Error(`the provider answered ${response.status}`);
      return receiptOf((await response.json()) as { id: string; amount_cents: number; currency: string });
    },
    async reconcile({ idempotencyKey, signal }) {
      const response = await fetch(
        `${url}/v1/charges?idempotency_key=${encodeURIComponent(idempotencyKey)}`,
        {
          signal,
        },
      );
      if (response.status === 404) return { outcome: 'not_executed' };
      if (!response.ok) return { outcome: 'unknown' };
      const charge = (await response.json()) as { id: string; amount_cents: number; currency: string };
      return { outcome: 'committed', output: receiptOf(charge) };
    },
    async compensate(receipt, ctx) {
      const response = await fetch(`${url}/v1/refunds`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': ctx.idempotencyKey },
        body: JSON.stringify({ charge: receipt.charge }),
        signal: ctx.signal,
      });
      if (!response.ok) throw new Error(`the provider answered ${response.status} to the refund`);
      const refund = (await response.json()) as { id: string; amount_cents: number };
      return { refund: refund.id, amount_cents: refund.amount_cents };
    },
  });
}

async function errorOf(response: Response): Promise<string> {
  const body = (await response.json().catch(() => undefined)) as
    { error?: { message?: unknown } } | undefined;
  return typeof body?.error?.message === 'string' ? body.error.message : `HTTP ${response.status}`;
}
