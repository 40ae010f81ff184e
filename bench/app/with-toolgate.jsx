// The same app with the quick start of @toolgate/react's README: a tool with a JSON Schema, a
// gate, a call proposed from a provider's tool-call part, its status, and a Zustand store.
import { createToolGate, defineTool } from '@toolgate/core';
import { ToolCallStatus, ToolGateProvider, useToolCall, useToolCalls } from '@toolgate/react';
import '@toolgate/react/styles.css';
import { StrictMode, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { useStore } from 'zustand';
import { createStore } from 'zustand/vanilla';

const cart = createStore()(() => ({ items: [] }));

const addToCart = defineTool({
  name: 'add_to_cart',
  description: 'Add a product to the cart',
  inputSchema: {
    type: 'object',
    properties: {
      sku: { type: 'string', minLength: 1 },
      quantity: { type: 'integer', minimum: 1, maximum: 20 },
    },
    required: ['sku', 'quantity'],
    additionalProperties: false,
  },
  needsApproval: (input) => input.quantity > 3,
  async execute(input, { signal }) {
    const response = await fetch(`/api/stock/${encodeURIComponent(input.sku)}`, { signal });
    if (!response.ok) throw new Error(`the stock service answered ${response.status}`);
    return input;
  },
  commit: (state, added) => ({ items: [...state.items, added] }),
});

const gate = createToolGate({ tools: [addToCart], store: cart });

function ToolCall({ part }) {
  useToolCall(part);
  return <ToolCallStatus id={part.id} />;
}

function CartSummary() {
  const items = useStore(cart, (state) => state.items);
  const waiting = useToolCalls((call) => call.status === 'awaiting_approval').length;
  return (
    <p>
      {items.length} in the cart, {waiting} waiting for you
    </p>
  );
}

function App() {
  const [count, setCount] = useState(0);
  const part = {
    id: 'call_1',
    type: 'function',
    function: { name: 'add_to_cart', arguments: '{"sku":"tea","quantity":2}' },
  };
  return (
    <ToolGateProvider gate={gate}>
      <h1>Vite + React</h1>
      <div className="card">
        <button onClick={() => setCount((count) => count + 1)}>count is {count}</button>
        <p>
          Edit <code>src/App.jsx</code> and save to test HMR
        </p>
      </div>
      <ToolCall part={part} />
      <CartSummary />
    </ToolGateProvider>
  );
}

createRoot(document.getElementById('root')).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
