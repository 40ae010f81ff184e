import { defineTool, type JsonSchemaObject, type ToolCallRecord, type ToolDefinition } from '@toolgate/core';
import { createStore, type StoreApi } from 'zustand/vanilla';
import { CATALOG, SKUS, formatCents, type Sku } from './shop-store.ts';

/** What the page shows beside the shop: only the page's own view, nothing the server keeps. */
export interface PageView {
  /** The product the model put in the spotlight, if any. */
  readonly spotlight: Sku | null;
}

export type PageViewStore = StoreApi<PageView>;

export function createPageViewStore(): PageViewStore {
  return createStore<PageView>()(() => ({ spotlight: null }));
}

const SHOW_PRODUCT = {
  type: 'object',
  properties: { sku: { type: 'string', enum: SKUS, description: 'The catalog SKU to show.' } },
  required: ['sku'],
  additionalProperties: false,
} as const satisfies JsonSchemaObject;

/**
 * `show_product` puts a product in the page's spotlight. It changes nothing but what this page
 * shows, so it runs in the browser's own gate: validated there, run there, committed to the
 * page's view store, and its result is sent back to the server for the model.
 */
export const showProduct = defineTool({
  name: 'show_product',
  description:
    'Show one product from the catalog to the visitor, on their screen. It changes nothing in the shop.',
  inputSchema: SHOW_PRODUCT,
  execute: ({ sku }) => ({
    sku,
    name: CATALOG[sku].name,
    price: formatCents(CATALOG[sku].price_cents),
    shown: true,
  }),
  commit: (_state: PageView, shown) => ({ spotlight: shown.sku }),
});

/** The tools that run in the browser. The server's loop hands their calls to the page. */
export const PAGE_TOOLS: readonly ToolDefinition<unknown, unknown, PageView>[] = [
  showProduct as ToolDefinition<unknown, unknown, PageView>,
];

export const PAGE_TOOL_NAMES: ReadonlySet<string> = new Set(PAGE_TOOLS.map((tool) => tool.name));

/**
 * The view as the page's committed calls left it, read from their records in order: what a page
 * loaded after them shows, without running any tool again. An output that names no product of the
 * catalog changes nothing.
 */
export function viewAfter(records: readonly ToolCallRecord[]): PageView {
  let view: PageView = { spotlight: null };
  for (const record of records) {
    if (record.status !== 'committed' || record.name !== showProduct.name) continue;
    const sku = (record.output as { sku?: unknown } | null | undefined)?.sku;
    if (SKUS.includes(sku as Sku)) view = { spotlight: sku as Sku };
  }
  return view;
}
