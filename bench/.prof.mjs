import { createStore } from 'zustand/vanilla';
import { createToolGate, defineTool } from '../packages/core/dist/index.js';
import { createPartialJson } from '../packages/core/dist/kit.js';
import { readOpenAIChatStream } from '../packages/core/dist/openai.js';
const items = [];
for (let i = 0, length = 0; length < 200000; i++) {
  const item = {
    sku: `SKU-${1000 + i}`,
    name: `Item ${i}, a plain description`,
    qty: 1 + (i % 4),
    price_cents: 1299 + i,
    tags: ['home', 'sale'],
  };
  items.push(item);
  length += JSON.stringify(item).length + 1;
}
const text = JSON.stringify({ customer_id: 'cus_8f2k', currency: 'USD', items });
const tool = defineTool({ name: 'submit', inputSchema: { type: 'object' }, execute: () => null });
const step = 10;
const stream = [
  {
    id: 'c',
    choices: [
      {
        index: 0,
        delta: { tool_calls: [{ index: 0, id: 'call_b', function: { name: 'submit', arguments: '' } }] },
        finish_reason: null,
      },
    ],
  },
];
for (let i = 0; i < text.length; i += step)
  stream.push({
    id: 'c',
    choices: [
      {
        index: 0,
        delta: { tool_calls: [{ index: 0, function: { arguments: text.slice(i, i + step) } }] },
        finish_reason: null,
      },
    ],
  });
for (let r = 0; r < 10; r++) {
  const gate = createToolGate({ tools: [tool], store: createStore(() => ({})) });
  const reader = readOpenAIChatStream(gate, { previewIntervalMs: 50 });
  let t = performance.now();
  for (const c of stream) reader.push(c);
  const a = performance.now() - t;
  const j = createPartialJson();
  t = performance.now();
  for (let i = 0; i < text.length; i += step) j.push(text.slice(i, i + step));
  const b = performance.now() - t;
  reader.abort();
  console.log(a.toFixed(2), b.toFixed(2));
}
