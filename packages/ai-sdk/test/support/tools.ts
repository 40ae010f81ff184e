import { defineTool } from '@toolgate/core';

/** What the tools did, in order: a test asserts on it to see how many times each really ran. */
export interface Effects {
  readonly transfers: { to: string; amount_cents: number }[];
  readonly lookups: string[];
}

export function createTools(effects: Effects) {
  const transfer = defineTool({
    name: 'transfer',
    description: 'Send money to another account. A person approves each transfer.',
    inputSchema: {
      type: 'object',
      properties: { to: { type: 'string', minLength: 1 }, amount_cents: { type: 'integer', minimum: 1 } },
      required: ['to', 'amount_cents'],
      additionalProperties: false,
    },
    needsApproval: true,
    execute: ({ to, amount_cents }) => {
      effects.transfers.push({ to, amount_cents });
      return { sent_cents: amount_cents, to, receipt: `rcpt_${effects.transfers.length}` };
    },
  });
  const balance = defineTool({
    name: 'get_balance',
    description: 'The balance of an account, in cents.',
    inputSchema: {
      type: 'object',
      properties: { account: { type: 'string' } },
      required: ['account'],
      additionalProperties: false,
    },
    execute: ({ account }) => {
      effects.lookups.push(account);
      return { account, cents: 912_345 };
    },
  });
  return [transfer, balance] as const;
}

export const newEffects = (): Effects => ({ transfers: [], lookups: [] });
