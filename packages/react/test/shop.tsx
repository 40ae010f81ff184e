// A small shop for the tests: an app store, tools that touch it only through `commit`, and a way
// to settle the async ones from the test.
import { createToolGate, defineTool, type Cancel, type ToolGate } from '@toolgate/core';
import { render, type RenderResult } from '@testing-library/react';
import { chargeSchema, deferred } from '@toolgate/test-utils';
import type { ReactNode } from 'react';
import { vi } from 'vitest';
import { createStore } from 'zustand/vanilla';
import { ToolGateProvider } from '../src/index.ts';

export interface Shop {
  readonly balance: number;
  readonly items: readonly string[];
}

export function createShop() {
  const store = createStore<Shop>()(() => ({ balance: 10_000, items: [] }));
  let writes = 0;
  store.subscribe(() => {
    writes += 1;
  });
  const runs = { charge: 0, add_item: 0, refund: 0, lookup: 0 };
  /** What the next `charge` resolves to; settle it from the test. */
  let payment = deferred<{ charged: number } | Cancel>();
  let lastSignal: AbortSignal | undefined;
  /** What `lookup`'s authorize answers; settle it from the test. */
  let access = deferred<boolean>();

  const charge = defineTool({
    name: 'charge',
    inputSchema: chargeSchema,
    needsApproval: true,
    execute: (_input, { signal }) => {
      runs.charge += 1;
      lastSignal = signal;
      return payment.promise;
    },
    commit: (state: Shop, output) => ({ balance: state.balance - output.charged }),
  });
  const addItem = defineTool({
    name: 'add_item',
    inputSchema: { type: 'object', properties: { sku: { type: 'string' } }, required: ['sku'] },
    execute: ({ sku }) => {
      runs.add_item += 1;
      return { sku };
    },
    commit: (state: Shop, output) => ({ items: [...state.items, output.sku] }),
  });
  const refund = defineTool({
    name: 'refund',
    inputSchema: { type: 'object', properties: { reason: { type: 'string' } }, required: ['reason'] },
    execute: ({ reason }): { refunded: number } => {
      runs.refund += 1;
      throw new Error(reason);
    },
    commit: (state: Shop, output) => ({ balance: state.balance + output.refunded }),
  });
  const lookup = defineTool({
    name: 'lookup',
    inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
    // Held in `validated` until the test lets authorize answer.
    authorize: () => access.promise,
    execute: ({ q }) => {
      runs.lookup += 1;
      return { q };
    },
  });

  const gate = createToolGate({ tools: [charge, addItem, refund, lookup], store });
  return {
    gate,
    store,
    runs,
    tools: { charge, addItem, refund, lookup },
    get writes() {
      return writes;
    },
    get signal() {
      return lastSignal;
    },
    /** Settles the running charge and waits until the call has moved. */
    async pay(id: string, output: { charged: number } | Cancel) {
      payment.resolve(output);
      const settled = await gate.settled(id);
      payment = deferred();
      return settled;
    },
    async decline(id: string, error: unknown) {
      payment.reject(error);
      const settled = await gate.settled(id);
      payment = deferred();
      return settled;
    },
    async authorize(id: string, answer: boolean) {
      access.resolve(answer);
      await access.promise;
      access = deferred();
      return gate.get(id);
    },
  };
}

export type ShopFixture = ReturnType<typeof createShop>;

/** An OpenAI Chat `tool_calls[]` entry, the shape a chat app most often holds. */
export function openaiCall(id: string, name: string, args: unknown) {
  return {
    id,
    type: 'function' as const,
    function: { name, arguments: typeof args === 'string' ? args : JSON.stringify(args) },
  };
}

export function renderWithGate(gate: ToolGate, ui: ReactNode): RenderResult {
  return render(<ToolGateProvider gate={gate}>{ui}</ToolGateProvider>);
}

/**
 * Runs something expected to throw during render without the noise React and jsdom print for it
 * (React 18 reports the error to `window` before rethrowing it).
 */
export function quietly<T>(run: () => T): T {
  const silence = (event: ErrorEvent) => event.preventDefault();
  const consoleError = vi.spyOn(console, 'error').mockImplementation(() => undefined);
  window.addEventListener('error', silence);
  try {
    return run();
  } finally {
    window.removeEventListener('error', silence);
    consoleError.mockRestore();
  }
}
