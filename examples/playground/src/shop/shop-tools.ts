import { cancel, defineTool, type JsonSchemaObject, type ToolDefinition } from '@toolgate/core';
import { CATALOG, SKUS, cartItems, cartTotal, formatCents, type ShopState } from './shop-store.ts';
import { pause, type ToolTiming } from './tool-timing.ts';

/** How long the slow delivery search runs before it answers, unless someone cancels it first. */
export const DELIVERY_SEARCH_MS = 30_000;

const PUBLIC_COUPONS: Readonly<Record<string, number>> = { TRAIL10: 10, WELCOME5: 5 };

// Input schemas live at module level: every conversation's gate gets the same objects, so their
// compiled validators are reused (see schema-cache.ts).
const ADD_TO_CART = {
  type: 'object',
  properties: {
    sku: { type: 'string', enum: SKUS, description: 'The catalog SKU.' },
    quantity: { type: 'integer', minimum: 1, maximum: 10, description: 'How many, 1 to 10.' },
  },
  required: ['sku', 'quantity'],
  additionalProperties: false,
} as const satisfies JsonSchemaObject;

const CHECKOUT = {
  type: 'object',
  properties: {
    amount_cents: { type: 'integer', minimum: 1, description: 'The cart total in cents, e.g. 1250 for $12.50.' },
    currency: { type: 'string', enum: ['USD'] },
  },
  required: ['amount_cents', 'currency'],
  additionalProperties: false,
} as const satisfies JsonSchemaObject;

const APPLY_COUPON = {
  type: 'object',
  properties: { code: { type: 'string', pattern: '^[A-Z0-9]{3,16}$', description: 'The code, upper case.' } },
  required: ['code'],
  additionalProperties: false,
} as const satisfies JsonSchemaObject;

const FIND_DELIVERY_SLOT = {
  type: 'object',
  properties: { postcode: { type: 'string', pattern: '^[0-9]{5}$', description: 'A five-digit US ZIP code.' } },
  required: ['postcode'],
  additionalProperties: false,
} as const satisfies JsonSchemaObject;

const TRANSFER_FUNDS = {
  type: 'object',
  properties: {
    to: { type: 'string', pattern: '^[^@\\s]+@[^@\\s]+\\.[a-z]{2,}$', description: 'The recipient email address.' },
    amount_cents: { type: 'integer', minimum: 1, maximum: 50_000, description: 'Amount in cents.' },
    memo: { type: 'string', maxLength: 140 },
  },
  required: ['to', 'amount_cents'],
  additionalProperties: false,
} as const satisfies JsonSchemaObject;

const TRACK_ORDER = {
  type: 'object',
  properties: { order_id: { type: 'string', pattern: '^ord_[0-9]+$' } },
  required: ['order_id'],
  additionalProperties: false,
} as const satisfies JsonSchemaObject;

/**
 * The shop's tools. Each `execute` talks to a pretend back end; each `commit` is the only code
 * that writes the shop's state, and the gate runs it only after a verified result.
 */
export function createShopTools(timing: ToolTiming): ToolDefinition[] {
  const wait = (ms: number, signal?: AbortSignal) => pause(ms * timing.scale, signal);
  let nextOrder = 1001;
  let nextTransfer = 501;
  let lookups = 0;

  const addToCart = defineTool({
    name: 'add_to_cart',
    description: `Add an item from the catalog to the cart. Catalog SKUs: ${SKUS.map((sku) => `${sku} (${CATALOG[sku].name}, ${formatCents(CATALOG[sku].price_cents)})`).join(', ')}.`,
    inputSchema: ADD_TO_CART,
    execute: async ({ sku, quantity }, { signal }) => {
      // The price comes from the back end, never from the model.
      await wait(120 + ((lookups++ * 37) % 160), signal);
      const item = CATALOG[sku];
      return { sku, quantity, unit_cents: item.price_cents, name: item.name };
    },
    commit: (state: ShopState, line) => {
      const existing = state.cart.find((entry) => entry.sku === line.sku);
      return {
        cart: existing
          ? state.cart.map((entry) => (entry === existing ? { ...entry, quantity: entry.quantity + line.quantity } : entry))
          : [...state.cart, { sku: line.sku, quantity: line.quantity, unit_cents: line.unit_cents }],
      };
    },
  });

  const checkout = defineTool({
    name: 'checkout',
    description:
      'Pay for everything in the cart from the wallet. amount_cents must equal the cart total, as an integer number of cents (1250 means $12.50).',
    inputSchema: CHECKOUT,
    authorize: ({ amount_cents }, { state }: { state: ShopState }) => {
      const total = cartTotal(state.cart);
      if (state.cart.length === 0) return 'the cart is empty';
      if (amount_cents !== total) return `amount_cents ${amount_cents} is not the cart total ${total}`;
      if (amount_cents > state.balance_cents) return `the wallet holds ${formatCents(state.balance_cents)}, less than ${formatCents(amount_cents)}`;
      return true;
    },
    execute: async ({ amount_cents, currency }, { signal }) => {
      await wait(600, signal);
      return { order_id: `ord_${nextOrder++}`, amount_cents, currency, status: 'paid' as const };
    },
    commit: (state: ShopState, receipt) => {
      if (receipt.amount_cents !== cartTotal(state.cart)) throw new Error('the cart changed while the payment was running');
      return {
        balance_cents: state.balance_cents - receipt.amount_cents,
        cart: [],
        orders: [...state.orders, { order_id: receipt.order_id, amount_cents: receipt.amount_cents, items: cartItems(state.cart) }],
      };
    },
  });

  const applyCoupon = defineTool({
    name: 'apply_coupon',
    description: 'Apply a coupon code to the next checkout.',
    inputSchema: APPLY_COUPON,
    execute: async ({ code }, { signal }) => {
      await wait(250, signal);
      if (code.startsWith('STAFF')) return cancel(`${code} is a staff coupon; store policy allows staff coupons only at the staff till`);
      const percent = PUBLIC_COUPONS[code];
      if (percent === undefined) return cancel(`there is no coupon called ${code}`);
      return { code, percent_off: percent };
    },
    commit: (state: ShopState, coupon) => ({ coupons: [...state.coupons, coupon.code] }),
  });

  const findDeliverySlot = defineTool({
    name: 'find_delivery_slot',
    description: 'Search every courier for the earliest delivery slot to a US postcode. This can take a while.',
    inputSchema: FIND_DELIVERY_SLOT,
    timeoutMs: DELIVERY_SEARCH_MS * 2,
    execute: async ({ postcode }, { signal }) => {
      await pause(DELIVERY_SEARCH_MS, signal);
      return { postcode, slot: 'Tue 2 Dec, 08:00–10:00' };
    },
    commit: (_state: ShopState, found) => ({ delivery_slot: `${found.slot} to ${found.postcode}` }),
  });

  const transferFunds = defineTool({
    name: 'transfer_funds',
    description: 'Send money from the wallet to another person by email address. A person must approve every transfer.',
    inputSchema: TRANSFER_FUNDS,
    needsApproval: true,
    authorize: ({ amount_cents }, { state }: { state: ShopState }) =>
      amount_cents <= state.balance_cents || `the wallet holds only ${formatCents(state.balance_cents)}`,
    execute: async ({ to, amount_cents }, { signal }) => {
      await wait(500, signal);
      return { transfer_id: `tr_${nextTransfer++}`, to, amount_cents };
    },
    commit: (state: ShopState, sent) => ({
      balance_cents: state.balance_cents - sent.amount_cents,
      transfers: [...state.transfers, sent],
    }),
  });

  const trackOrder = defineTool({
    name: 'track_order',
    description: 'Ask the carrier where an order is.',
    inputSchema: TRACK_ORDER,
    execute: async ({ order_id }, { signal }): Promise<{ order_id: string; location: string }> => {
      await wait(400, signal);
      // The pretend carrier is always down: this tool shows what a failing back end looks like.
      throw new Error(`the carrier API answered 503 Service Unavailable for ${order_id}`);
    },
  });

  return [addToCart, checkout, applyCoupon, findDeliverySlot, transferFunds, trackOrder];
}
