import {
  cancel,
  defineTool,
  type JsonSchemaObject,
  type ToolContext,
  type ToolDefinition,
} from '@toolgate/core';
import {
  CATALOG,
  SKUS,
  cartItems,
  cartTotal,
  formatCents,
  type CartLine,
  type Order,
  type ShopState,
  type Sku,
  type Transfer,
} from './shop-store.ts';
import { payByCard } from './card-payment.ts';

/** Transfers above this many cents are decided by the person's manager, never by the person asking. */
export const LARGE_TRANSFER_CENTS = 5000;

/**
 * How long a large transfer waits before its manager is reminded, before finance is asked too, and
 * before it expires: demo speed, so that each can be watched happen.
 */
export interface ApprovalTimes {
  readonly remindAfterMs: number;
  readonly escalateAfterMs: number;
  readonly approvalTtlMs: number;
}

export const DEMO_APPROVAL_TIMES: ApprovalTimes = {
  remindAfterMs: 20_000,
  escalateAfterMs: 40_000,
  approvalTtlMs: 5 * 60_000,
};

/** The manager of a person, and the finance desk their escalations go to (the playground's principals for both). */
export const managerOf = (principal: string): string => `${principal}:manager`;
export const financeOf = (principal: string): string => `${principal}:finance`;

/** How long the slow delivery search runs before it answers, unless someone cancels it first. */
export const DELIVERY_SEARCH_MS = 30_000;

/**
 * Where the shop's tools run and what they change. The server gives them its database: the shop
 * of the call's conversation, written in the call's own transaction for a `transactional` tool,
 * or in a transaction of its own (while the call still runs) for the others. The page runs none
 * of them: it only applies each committed call's `commit` to its copy of the shop.
 */
export interface ShopBackend {
  /** The shop the call acts on, as it stands now (read inside `ctx.transaction` when there is one). */
  readonly read: (ctx: Pick<ToolContext, 'call'> & { readonly transaction?: unknown }) => Promise<ShopState>;
  /**
   * Applies `change` to the call's shop and returns what it gave back. In `ctx.transaction` when
   * the tool is transactional; otherwise in a transaction of its own that refuses (throws) when
   * the call is no longer running, so a cancelled call never writes.
   */
  readonly write: <T>(
    ctx: ToolContext,
    change: (state: ShopState) => { readonly output: T; readonly next: Partial<ShopState> },
  ) => Promise<T>;
  /**
   * The pretend back end's latency, scaled by the conversation's pace unless `fixed` (a delay that
   * is the point of its tool); rejects when the call is aborted.
   */
  readonly pause: (ms: number, ctx: ToolContext, options?: { readonly fixed?: boolean }) => Promise<void>;
  /** How long the bank holds a transfer before it sends it (a fixed time, whatever the pace). */
  readonly transferHoldMs: number;
  /** Where the payment provider `pay_by_card` charges listens (the server's own, on loopback). */
  readonly paymentsUrl: string;
}

const PUBLIC_COUPONS: Readonly<Record<string, number>> = { TRAIL10: 10, WELCOME5: 5 };

// Input schemas live at module level: the server gate compiles each once.
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
    amount_cents: {
      type: 'integer',
      minimum: 1,
      description: 'The cart total in cents, e.g. 1250 for $12.50.',
    },
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
  properties: {
    postcode: { type: 'string', pattern: '^[0-9]{5}$', description: 'A five-digit US ZIP code.' },
  },
  required: ['postcode'],
  additionalProperties: false,
} as const satisfies JsonSchemaObject;

const TRANSFER_FUNDS = {
  type: 'object',
  properties: {
    to: {
      type: 'string',
      pattern: '^[^@\\s]+@[^@\\s]+\\.[a-z]{2,}$',
      description: 'The recipient email address.',
    },
    amount_cents: { type: 'integer', minimum: 1, maximum: 50_000, description: 'Amount in cents.' },
    memo: { type: 'string', maxLength: 140 },
  },
  required: ['to', 'amount_cents'],
  additionalProperties: false,
} as const satisfies JsonSchemaObject;

const LARGE_TRANSFER = {
  ...TRANSFER_FUNDS,
  properties: {
    ...TRANSFER_FUNDS.properties,
    amount_cents: {
      type: 'integer',
      minimum: LARGE_TRANSFER_CENTS + 1,
      maximum: 50_000,
      description: `Amount in cents, more than ${LARGE_TRANSFER_CENTS}.`,
    },
  },
} as const satisfies JsonSchemaObject;

const TRACK_ORDER = {
  type: 'object',
  properties: { order_id: { type: 'string', pattern: '^ord_[0-9]+$' } },
  required: ['order_id'],
  additionalProperties: false,
} as const satisfies JsonSchemaObject;

interface AddedLine {
  readonly sku: Sku;
  readonly quantity: number;
  readonly unit_cents: number;
  readonly name: string;
}

interface Receipt {
  readonly order_id: string;
  readonly amount_cents: number;
  readonly currency: 'USD';
  readonly status: 'paid';
}

// Each commit is the one change its tool makes to a shop: the server applies it to the shop in its
// database when the tool runs, and the page applies it to its copy when the call commits.
const addLine = (state: ShopState, line: AddedLine): Partial<ShopState> => {
  const existing = state.cart.find((entry) => entry.sku === line.sku);
  return {
    cart: existing
      ? state.cart.map((entry): CartLine =>
          entry === existing ? { ...entry, quantity: entry.quantity + line.quantity } : entry,
        )
      : [...state.cart, { sku: line.sku, quantity: line.quantity, unit_cents: line.unit_cents }],
  };
};

const pay = (state: ShopState, receipt: Receipt): Partial<ShopState> => {
  if (receipt.amount_cents !== cartTotal(state.cart))
    throw new Error('the cart changed while the payment was running');
  const order: Order = {
    order_id: receipt.order_id,
    amount_cents: receipt.amount_cents,
    items: cartItems(state.cart),
  };
  return {
    balance_cents: state.balance_cents - receipt.amount_cents,
    cart: [],
    orders: [...state.orders, order],
  };
};

const send = (state: ShopState, sent: Transfer): Partial<ShopState> => ({
  balance_cents: state.balance_cents - sent.amount_cents,
  transfers: [...state.transfers, sent],
});

function checkoutRefusal(state: ShopState, amount: number): string | undefined {
  const total = cartTotal(state.cart);
  if (state.cart.length === 0) return 'the cart is empty';
  if (amount !== total) return `amount_cents ${amount} is not the cart total ${total}`;
  if (amount > state.balance_cents)
    return `the wallet holds ${formatCents(state.balance_cents)}, less than ${formatCents(amount)}`;
  return undefined;
}

/**
 * The shop's tools. The same objects are used on both sides: the server gate runs them over
 * `backend`; the page's mirror only calls `commit` when the server says a call committed.
 *
 * - `add_to_cart`, `checkout` and `apply_coupon` are `transactional`: their write to the shop and
 *   the call's `committed` record are one transaction, so a crash never leaves one without the other.
 * - `transfer_funds` needs a person's approval and is neither transactional nor idempotent: the bank
 *   holds it, then sends it. A server that stops while it runs ends it `failed` / `interrupted`,
 *   and never sends it again.
 * - `large_transfer` (over $50.00) is asked of the person's manager, and of finance too once
 *   nobody decided for a while; the person asking may not approve it (`selfApproval: 'forbid'`).
 * - `find_delivery_slot` is slow (cancel it) and `track_order` always fails.
 * - `pay_by_card` charges a card at the payment provider, by idempotency key (see `card-payment.ts`).
 */
export function createShopTools(
  backend: ShopBackend,
  times: ApprovalTimes = DEMO_APPROVAL_TIMES,
): ToolDefinition[] {
  const addToCart = defineTool({
    name: 'add_to_cart',
    description: `Add an item from the catalog to the cart. Catalog SKUs: ${SKUS.map((sku) => `${sku} (${CATALOG[sku].name}, ${formatCents(CATALOG[sku].price_cents)})`).join(', ')}.`,
    inputSchema: ADD_TO_CART,
    transactional: true,
    execute: ({ sku, quantity }, ctx) => {
      // The price comes from the shop's catalog, never from the model.
      const line: AddedLine = {
        sku,
        quantity,
        unit_cents: CATALOG[sku].price_cents,
        name: CATALOG[sku].name,
      };
      return backend.write(ctx, (state) => ({ output: line, next: addLine(state, line) }));
    },
    commit: addLine,
  });

  const checkout = defineTool({
    name: 'checkout',
    description:
      'Pay for everything in the cart from the wallet. amount_cents must equal the cart total, as an integer number of cents (1250 means $12.50).',
    inputSchema: CHECKOUT,
    transactional: true,
    authorize: async ({ amount_cents }, ctx) =>
      checkoutRefusal(await backend.read(ctx), amount_cents) ?? true,
    execute: ({ amount_cents, currency }, ctx) =>
      backend.write(ctx, (state) => {
        // Checked again inside the transaction: the cart may have changed since authorize ran.
        const refusal = checkoutRefusal(state, amount_cents);
        if (refusal !== undefined) throw new Error(refusal);
        const receipt: Receipt = {
          order_id: `ord_${1001 + state.orders.length}`,
          amount_cents,
          currency,
          status: 'paid',
        };
        return { output: receipt, next: pay(state, receipt) };
      }),
    commit: pay,
  });

  const applyCoupon = defineTool({
    name: 'apply_coupon',
    description: 'Apply a coupon code to the next checkout.',
    inputSchema: APPLY_COUPON,
    transactional: true,
    execute: ({ code }, ctx) => {
      if (code.startsWith('STAFF'))
        return cancel(`${code} is a staff coupon; store policy allows staff coupons only at the staff till`);
      const percent = PUBLIC_COUPONS[code];
      if (percent === undefined) return cancel(`there is no coupon called ${code}`);
      const coupon = { code, percent_off: percent };
      return backend.write(ctx, (state) => ({
        output: coupon,
        next: { coupons: [...state.coupons, coupon.code] },
      }));
    },
    commit: (state: ShopState, coupon) => ({ coupons: [...state.coupons, coupon.code] }),
  });

  const findDeliverySlot = defineTool({
    name: 'find_delivery_slot',
    description:
      'Search every courier for the earliest delivery slot to a US postcode. This can take a while.',
    inputSchema: FIND_DELIVERY_SLOT,
    timeoutMs: DELIVERY_SEARCH_MS * 2,
    execute: async ({ postcode }, ctx) => {
      await backend.pause(DELIVERY_SEARCH_MS, ctx, { fixed: true });
      const found = { postcode, slot: 'Tue 2 Dec, 08:00–10:00' };
      return backend.write(ctx, () => ({
        output: found,
        next: { delivery_slot: `${found.slot} to ${found.postcode}` },
      }));
    },
    commit: (_state: ShopState, found) => ({ delivery_slot: `${found.slot} to ${found.postcode}` }),
  });

  const sendMoney = async (
    { to, amount_cents }: { to: string; amount_cents: number },
    ctx: ToolContext,
  ): Promise<Transfer> => {
    // The bank holds the transfer for a while before it sends it; cancelling during the hold sends nothing.
    await backend.pause(backend.transferHoldMs, ctx, { fixed: true });
    return backend.write(ctx, (state) => {
      if (amount_cents > state.balance_cents)
        throw new Error(`the wallet holds only ${formatCents(state.balance_cents)}`);
      const sent: Transfer = { transfer_id: `tr_${501 + state.transfers.length}`, to, amount_cents };
      return { output: sent, next: send(state, sent) };
    });
  };

  // A wire leaves the country: the account holder and a manager must both approve the same amount.
  const wireFunds = defineTool({
    name: 'wire_funds',
    description:
      'Wire money abroad from the wallet, by email address. Two people (the account holder and a manager) must approve every wire.',
    inputSchema: TRANSFER_FUNDS,
    approvals: 2,
    authorize: async ({ amount_cents }, ctx) => {
      const state = await backend.read(ctx);
      return (
        amount_cents <= state.balance_cents || `the wallet holds only ${formatCents(state.balance_cents)}`
      );
    },
    execute: sendMoney,
    commit: send,
  });

  const transferFunds = defineTool({
    name: 'transfer_funds',
    description:
      'Send money from the wallet to another person by email address. A person must approve every transfer.',
    inputSchema: TRANSFER_FUNDS,
    needsApproval: true,
    authorize: async ({ amount_cents }, ctx) => {
      if (amount_cents > LARGE_TRANSFER_CENTS)
        return `a transfer over ${formatCents(LARGE_TRANSFER_CENTS)} needs the manager's approval: use large_transfer`;
      const state = await backend.read(ctx);
      return (
        amount_cents <= state.balance_cents || `the wallet holds only ${formatCents(state.balance_cents)}`
      );
    },
    execute: sendMoney,
    commit: send,
  });

  // Four eyes on a large transfer: the manager is asked, never the person who asked for it.
  const largeTransfer = defineTool({
    name: 'large_transfer',
    description: `Send more than ${formatCents(LARGE_TRANSFER_CENTS)} from the wallet to another person by email address. The person's manager must approve it; the person asking may not.`,
    inputSchema: LARGE_TRANSFER,
    approvers: ({ principal }) => [managerOf(principal)],
    remindAfterMs: times.remindAfterMs,
    escalate: [{ afterMs: times.escalateAfterMs, approvers: ({ principal }) => [financeOf(principal)] }],
    approvalTtlMs: times.approvalTtlMs,
    authorize: async ({ amount_cents }, ctx) => {
      const state = await backend.read(ctx);
      return (
        amount_cents <= state.balance_cents || `the wallet holds only ${formatCents(state.balance_cents)}`
      );
    },
    execute: sendMoney,
    commit: send,
  });

  const trackOrder = defineTool({
    name: 'track_order',
    description: 'Ask the carrier where an order is.',
    inputSchema: TRACK_ORDER,
    execute: async ({ order_id }, ctx): Promise<{ order_id: string; location: string }> => {
      await backend.pause(400, ctx);
      // The pretend carrier is always down: this tool shows what a failing back end looks like.
      throw new Error(`the carrier API answered 503 Service Unavailable for ${order_id}`);
    },
  });

  return [
    addToCart,
    checkout,
    applyCoupon,
    findDeliverySlot,
    transferFunds,
    largeTransfer,
    wireFunds,
    trackOrder,
    payByCard(backend.paymentsUrl),
  ];
}
