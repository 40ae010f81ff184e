// A Stripe-style charge tool over the test's payment provider, written the way the server README
// tells a tool author to: the effect is named by the order (`charge:<order>`), the key goes to the
// provider with every request, a lookup by that key reconciles a run nobody saw end, a 4xx is
// marked `notExecuted`, and a refund undoes a committed charge.
import { defineTool, notExecuted, type ToolConfig } from '@toolgate/core';

export const chargeInput = {
  type: 'object',
  properties: { order: { type: 'string' }, amount_cents: { type: 'integer' } },
  required: ['order', 'amount_cents'],
  additionalProperties: false,
} as const;

export interface Receipt {
  readonly charge: string;
  readonly amount_cents: number;
}

export const receiptSchema = {
  type: 'object',
  properties: { charge: { type: 'string', pattern: '^ch_' }, amount_cents: { type: 'integer' } },
  required: ['charge', 'amount_cents'],
} as const;

type ChargeConfig = ToolConfig<typeof chargeInput, Receipt>;

/** Reports where a run of the tool is, for a process that kills itself there. */
export type PaymentReach = (point: 'request' | 'reconcile' | 'refund', key: string) => void;

/** The charge tool against the provider at `url`; `overrides` replace any part of it. */
export function chargeTool(
  url: string,
  overrides: Partial<ChargeConfig> = {},
  reach: PaymentReach = () => undefined,
) {
  const config: ChargeConfig = {
    name: 'charge',
    description: 'Charges the customer for an order',
    inputSchema: chargeInput,
    outputSchema: receiptSchema,
    idempotencyKey: (input) => `charge:${input.order}`,
    async execute(input, ctx) {
      reach('request', ctx.idempotencyKey);
      const response = await fetch(`${url}/charges`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': ctx.idempotencyKey },
        body: JSON.stringify(input),
        signal: ctx.signal,
      });
      // The provider refused the request: nothing was charged.
      if (response.status >= 400 && response.status < 500)
        throw notExecuted(`the provider refused the charge (${response.status})`);
      if (!response.ok) throw new Error(`the provider answered ${response.status}`);
      const charge = (await response.json()) as { id: string; amount_cents: number };
      return { charge: charge.id, amount_cents: charge.amount_cents };
    },
    async reconcile({ idempotencyKey, signal }) {
      reach('reconcile', idempotencyKey);
      const response = await fetch(`${url}/charges?idempotency_key=${encodeURIComponent(idempotencyKey)}`, {
        signal,
      });
      if (response.status === 404) return { outcome: 'not_executed' };
      if (!response.ok) return { outcome: 'unknown' };
      const charge = (await response.json()) as { id: string; amount_cents: number };
      return { outcome: 'committed', output: { charge: charge.id, amount_cents: charge.amount_cents } };
    },
    async compensate(receipt, ctx) {
      reach('refund', ctx.idempotencyKey);
      const response = await fetch(`${url}/refunds`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': ctx.idempotencyKey },
        body: JSON.stringify({ charge: receipt.charge }),
        signal: ctx.signal,
      });
      if (!response.ok) throw new Error(`the provider answered ${response.status} to the refund`);
      const refund = (await response.json()) as { id: string; amount_cents: number };
      return { refund: refund.id, amount_cents: refund.amount_cents };
    },
    ...overrides,
  };
  return defineTool<typeof chargeInput, Receipt>(config);
}
