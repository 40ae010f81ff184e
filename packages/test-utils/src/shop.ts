import { createStore } from 'zustand/vanilla';
import { defineTool } from '@toolgate/core';

export interface Shop {
  readonly balance_cents: number;
  readonly charges: readonly { readonly amount_cents: number; readonly currency: string }[];
}

/**
 * The charge tool's arguments, shared by every package's tests: an amount in cents and a currency.
 *
 * @example
 * defineTool({ name: 'charge', inputSchema: chargeSchema, execute: (input) => input.amount_cents });
 */
export const chargeSchema = {
  type: 'object',
  properties: {
    amount_cents: { type: 'integer', minimum: 0 },
    currency: { type: 'string', enum: ['USD', 'EUR'] },
  },
  required: ['amount_cents', 'currency'],
  additionalProperties: false,
} as const;

/**
 * The shop's app store: a balance and the charges made, changed only by a tool's `commit`.
 *
 * @example
 * const store = createShop();
 * const gate = createToolGate({ tools: [chargeTool()], store });
 */
export function createShop(balance_cents = 10_000) {
  return createStore<Shop>()(() => ({ balance_cents, charges: [] }));
}

/**
 * The shop's `charge` tool: values checked, async, committed to the store in one update.
 *
 * @example
 * const declined = chargeTool(() => cancel('card declined'));
 */
export function chargeTool(execute?: (input: { amount_cents: number; currency: 'USD' | 'EUR' }) => unknown) {
  return defineTool({
    name: 'charge',
    description: 'Charge the wallet',
    inputSchema: chargeSchema,
    execute: async (input) => {
      const custom = execute?.(input);
      if (custom !== undefined) return custom as { amount_cents: number; currency: string };
      return { amount_cents: input.amount_cents, currency: input.currency };
    },
    commit: (state: Shop, output) => ({
      balance_cents: state.balance_cents - output.amount_cents,
      charges: [...state.charges, output],
    }),
  });
}

/** Arguments as a model sends them: a JSON string. @example args({ amount_cents: 500, currency: 'USD' }) */
export const args = (value: unknown) => JSON.stringify(value);

/**
 * Counts `setState` calls on a store, keeping the state after each.
 *
 * @example
 * const updates = watchStore(store);
 * expect(updates).toHaveLength(1);
 */
export function watchStore<S>(store: {
  subscribe: (listener: (state: S, previous: S) => void) => () => void;
}) {
  const updates: S[] = [];
  store.subscribe((state) => updates.push(state));
  return updates;
}
