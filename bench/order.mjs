// The workload the benches share: an order tool's schema and realistic arguments of a given size.

const lineItem = {
  type: 'object',
  properties: {
    sku: { type: 'string', pattern: '^SKU-[0-9]+$' },
    name: { type: 'string', maxLength: 200 },
    qty: { type: 'integer', minimum: 1 },
    price_cents: { type: 'integer', minimum: 0 },
    tags: { type: 'array', items: { type: 'string' } },
  },
  required: ['sku', 'qty', 'price_cents'],
  additionalProperties: false,
};

export const orderSchema = {
  $id: 'order',
  type: 'object',
  properties: {
    customer_id: { type: 'string' },
    currency: { enum: ['USD', 'EUR'] },
    note: { type: 'string' },
    items: { type: 'array', items: lineItem, maxItems: 10_000 },
  },
  required: ['customer_id', 'currency', 'items'],
  additionalProperties: false,
};

/** A realistic order of about `size` characters: line items, as a shopping tool would send. */
export function order(size) {
  const items = [];
  for (let i = 0; JSON.stringify({ customer_id: 'cus_8f2k', currency: 'USD', items }).length < size; i++) {
    items.push({
      sku: `SKU-${1000 + i}`,
      name: `Item ${i}, a plain description`,
      qty: 1 + (i % 4),
      price_cents: 1299 + i,
      tags: ['home', 'sale'],
    });
  }
  return JSON.stringify({ customer_id: 'cus_8f2k', currency: 'USD', items });
}
