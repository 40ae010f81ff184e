// A new Vite + React app that follows the README's quick start and says nothing about light or
// dark anywhere: one call waiting for the person, shown by <ToolCallStatus> with the default look.
import { createToolGate, defineTool } from '@toolgate/core';
import { ToolCallStatus, ToolGateProvider, useToolCall } from '@toolgate/react';
import '@toolgate/react/styles.css';
import { createElement as h, StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { createStore } from 'zustand/vanilla';

const cart = createStore()(() => ({ items: [] }));

const addToCart = defineTool({
  name: 'add_to_cart',
  description: 'Add a product to the cart',
  inputSchema: {
    type: 'object',
    properties: { sku: { type: 'string' }, quantity: { type: 'integer', minimum: 1 } },
    required: ['sku', 'quantity'],
    additionalProperties: false,
  },
  needsApproval: true,
  execute: async (input) => input,
  commit: (state, added) => ({ items: [...state.items, added] }),
});

const gate = createToolGate({ tools: [addToCart], store: cart });

const part = {
  id: 'call_1',
  type: 'function',
  function: { name: 'add_to_cart', arguments: '{"sku":"tea","quantity":4}' },
};

function ToolCall() {
  useToolCall(part);
  return h(ToolCallStatus, { id: part.id });
}

createRoot(document.getElementById('root')).render(
  h(StrictMode, null, h(ToolGateProvider, { gate }, h('h1', null, 'Vite + React'), h(ToolCall))),
);
