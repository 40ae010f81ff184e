import { createStore } from 'zustand/vanilla';
import { defineTool } from '../../src/index.ts';

export interface Shop {
  readonly balance_cents: number;
  readonly charges: readonly { readonly amount_cents: number; readonly currency: string }[];
}

export const chargeSchema = {
  type: 'object',
  properties: {
    amount_cents: { type: 'integer', minimum: 0 },
    currency: { type: 'string', enum: ['USD', 'EUR'] },
  },
  required: ['amount_cents', 'currency'],
  additionalProperties: false,
} as const;

export function createShop(balance_cents = 10_000) {
  return createStore<Shop>()(() => ({ balance_cents, charges: [] }));
}

/** The seed's `charge` tool, done right: values checked, async, committed in one update. */
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

export const args = (value: unknown) => JSON.stringify(value);

/** Counts `setState` calls on a store, and keeps the state before each. */
export function watchStore<S>(store: {
  subscribe: (listener: (state: S, previous: S) => void) => () => void;
}) {
  const updates: S[] = [];
  store.subscribe((state) => updates.push(state));
  return updates;
}
