import { createStore, type StoreApi } from 'zustand/vanilla';

/** What the shop sells. Prices are integers in cents, as every amount in this app. */
export const CATALOG = {
  mug: { name: 'Enamel camp mug', price_cents: 1250 },
  tee: { name: 'Trail tee', price_cents: 2400 },
  socks: { name: 'Wool hiking socks', price_cents: 900 },
  cap: { name: 'Field cap', price_cents: 1800 },
  bottle: { name: 'Steel bottle', price_cents: 2200 },
  beanie: { name: 'Rib beanie', price_cents: 1500 },
  map: { name: 'Trail map', price_cents: 600 },
  patch: { name: 'Embroidered patch', price_cents: 350 },
} as const;

export type Sku = keyof typeof CATALOG;
export const SKUS = Object.keys(CATALOG) as Sku[];

export interface CartLine {
  readonly sku: Sku;
  readonly quantity: number;
  readonly unit_cents: number;
}

export interface Order {
  readonly order_id: string;
  readonly amount_cents: number;
  readonly items: number;
}

export interface Transfer {
  readonly transfer_id: string;
  readonly to: string;
  readonly amount_cents: number;
}

/** The app's own state: the only thing a tool call can change, and only by committing. */
export interface ShopState {
  readonly balance_cents: number;
  readonly cart: readonly CartLine[];
  readonly orders: readonly Order[];
  readonly transfers: readonly Transfer[];
  readonly coupons: readonly string[];
  readonly delivery_slot: string | null;
}

export const INITIAL_SHOP: ShopState = {
  balance_cents: 10_000,
  cart: [{ sku: 'mug', quantity: 1, unit_cents: CATALOG.mug.price_cents }],
  orders: [],
  transfers: [],
  coupons: [],
  delivery_slot: null,
};

export type ShopStore = StoreApi<ShopState>;

/** A fresh shop, as a visitor finds it when a conversation starts. */
export function createShopStore(initial: ShopState = INITIAL_SHOP): ShopStore {
  return createStore<ShopState>()(() => initial);
}

export function cartTotal(cart: readonly CartLine[]): number {
  return cart.reduce((sum, line) => sum + line.quantity * line.unit_cents, 0);
}

export function cartItems(cart: readonly CartLine[]): number {
  return cart.reduce((sum, line) => sum + line.quantity, 0);
}

const dollars = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' });

/** `1250` → `"$12.50"`. */
export function formatCents(cents: number): string {
  return dollars.format(cents / 100);
}
