import type { ToolGate } from '@toolgate/core';
import { act, render, screen } from '@testing-library/react';
import { StrictMode, useState } from 'react';
import { describe, expect, it } from 'vitest';
import { ToolGateProvider, useToolCall } from '../src/index.ts';
import { createShop, openaiCall } from './shop.tsx';

function Card({ proposal, options }: { proposal: object; options?: { id?: string } }) {
  const { call } = useToolCall(proposal, options);
  return <p data-testid="card">{call?.status ?? 'none'}</p>;
}

function App({
  gate,
  show = true,
  cards = 1,
  proposal,
  options,
}: {
  gate: ToolGate;
  show?: boolean;
  cards?: number;
  proposal: () => object;
  options?: { id?: string };
}) {
  return (
    <StrictMode>
      <ToolGateProvider gate={gate}>
        {show &&
          Array.from({ length: cards }, (_, i) => (
            <Card key={i} proposal={proposal()} {...(options && { options })} />
          ))}
      </ToolGateProvider>
    </StrictMode>
  );
}

describe('useToolCall proposes at most once per call id', () => {
  it('inside <StrictMode>, through mount → unmount → remount, the tool runs exactly once', () => {
    const shop = createShop();
    // A new object on every render, as a chat that maps its messages to parts would make.
    const proposal = () => openaiCall('call_1', 'add_item', { sku: 'socks' });
    const view = render(<App gate={shop.gate} proposal={proposal} />);
    expect(screen.getByTestId('card')).toHaveTextContent('committed');
    view.rerender(<App gate={shop.gate} proposal={proposal} show={false} />);
    expect(screen.queryByTestId('card')).toBeNull();
    view.rerender(<App gate={shop.gate} proposal={proposal} />);
    expect(screen.getByTestId('card')).toHaveTextContent('committed');
    view.rerender(<App gate={shop.gate} proposal={proposal} />);
    expect(shop.runs.add_item).toBe(1);
    expect(shop.store.getState().items).toEqual(['socks']);
    expect(shop.writes).toBe(1);
    expect(shop.gate.calls.getState().records.size).toBe(1);
  });

  it('a remounted async call keeps its status and does not start again', async () => {
    const shop = createShop();
    const proposal = () => openaiCall('call_1', 'charge', { amount_cents: 500, currency: 'EUR' });
    const view = render(<App gate={shop.gate} proposal={proposal} />);
    expect(screen.getByTestId('card')).toHaveTextContent('awaiting_approval');
    act(() => {
      shop.gate.approve('call_1');
    });
    view.rerender(<App gate={shop.gate} proposal={proposal} show={false} />);
    view.rerender(<App gate={shop.gate} proposal={proposal} />);
    // On a remount the record is there from the first render, before any effect.
    expect(screen.getByTestId('card')).toHaveTextContent('executing');
    await act(() => shop.pay('call_1', { charged: 500 }));
    expect(screen.getByTestId('card')).toHaveTextContent('committed');
    expect(shop.runs.charge).toBe(1);
    expect(shop.writes).toBe(1);
  });

  it('two components showing the same call run it once', () => {
    const shop = createShop();
    render(
      <App gate={shop.gate} cards={3} proposal={() => openaiCall('call_1', 'add_item', { sku: 'hat' })} />,
    );
    expect(screen.getAllByTestId('card').map((card) => card.textContent)).toEqual([
      'committed',
      'committed',
      'committed',
    ]);
    expect(shop.runs.add_item).toBe(1);
    expect(shop.writes).toBe(1);
  });

  it('every provider shape is proposed once: Anthropic, Responses, AI SDK', () => {
    const shop = createShop();
    const shapes = [
      { type: 'tool_use', id: 'toolu_1', name: 'add_item', input: { sku: 'a' } },
      { type: 'function_call', call_id: 'fc_1', name: 'add_item', arguments: '{"sku":"b"}' },
      { type: 'tool-call', toolCallId: 'ai_1', toolName: 'add_item', input: { sku: 'c' } },
    ];
    for (const shape of shapes) {
      const view = render(<App gate={shop.gate} proposal={() => ({ ...shape })} />);
      view.rerender(<App gate={shop.gate} proposal={() => ({ ...shape })} show={false} />);
      view.rerender(<App gate={shop.gate} proposal={() => ({ ...shape })} />);
      view.unmount();
    }
    expect(shop.runs.add_item).toBe(3);
    expect(shop.store.getState().items).toEqual(['a', 'b', 'c']);
  });

  it('a proposal without an id (Gemini) is proposed once under StrictMode double effects and re-renders', () => {
    const shop = createShop();
    const proposal = () => ({ functionCall: { name: 'add_item', args: { sku: 'scarf' } } });
    const view = render(<App gate={shop.gate} proposal={proposal} />);
    view.rerender(<App gate={shop.gate} proposal={proposal} />);
    expect(screen.getByTestId('card')).toHaveTextContent('committed');
    expect(shop.runs.add_item).toBe(1);
    const [record] = shop.gate.calls.getState().records.values();
    // The gate made the id up, so the answer to Gemini carries none.
    expect(record?.generatedId).toBe(true);
  });

  it('a component that moves on to another call without an id (Gemini) proposes the new one', () => {
    const shop = createShop();
    const gemini = (sku: string) => () => ({ functionCall: { name: 'add_item', args: { sku } } });
    const view = render(<App gate={shop.gate} proposal={gemini('a')} />);
    view.rerender(<App gate={shop.gate} proposal={gemini('a')} />);
    view.rerender(<App gate={shop.gate} proposal={gemini('b')} />);
    expect(screen.getByTestId('card')).toHaveTextContent('committed');
    expect(shop.runs.add_item).toBe(2);
    expect(shop.store.getState().items).toEqual(['a', 'b']);
  });

  it('a proposal without an id survives a remount when the app names it with options.id', () => {
    const shop = createShop();
    const proposal = () => ({ functionCall: { name: 'add_item', args: { sku: 'gloves' } } });
    const options = { id: 'message_7:0' };
    const view = render(<App gate={shop.gate} proposal={proposal} options={options} />);
    view.rerender(<App gate={shop.gate} proposal={proposal} options={options} show={false} />);
    view.rerender(<App gate={shop.gate} proposal={proposal} options={options} />);
    expect(screen.getByTestId('card')).toHaveTextContent('committed');
    expect(shop.runs.add_item).toBe(1);
    expect(shop.gate.get('message_7:0')?.status).toBe('committed');
  });

  it('a component that moves on to another call follows the new one', () => {
    const shop = createShop();
    function Switcher() {
      const [n, setN] = useState(1);
      const { call } = useToolCall(openaiCall(`call_${n}`, 'add_item', { sku: `sku_${n}` }));
      return (
        <button type="button" onClick={() => setN(n + 1)}>
          {call?.id}
        </button>
      );
    }
    render(
      <StrictMode>
        <ToolGateProvider gate={shop.gate}>
          <Switcher />
        </ToolGateProvider>
      </StrictMode>,
    );
    expect(screen.getByRole('button')).toHaveTextContent('call_1');
    act(() => screen.getByRole('button').click());
    expect(screen.getByRole('button')).toHaveTextContent('call_2');
    expect(shop.store.getState().items).toEqual(['sku_1', 'sku_2']);
    expect(shop.runs.add_item).toBe(2);
  });

  it('reading by id never proposes', () => {
    const shop = createShop();
    function Reader() {
      const { call } = useToolCall('call_1');
      return <p data-testid="card">{call?.status ?? 'none'}</p>;
    }
    render(
      <ToolGateProvider gate={shop.gate}>
        <Reader />
      </ToolGateProvider>,
    );
    expect(screen.getByTestId('card')).toHaveTextContent('none');
    act(() => {
      shop.gate.propose(openaiCall('call_1', 'add_item', { sku: 'belt' }));
    });
    expect(screen.getByTestId('card')).toHaveTextContent('committed');
    expect(shop.runs.add_item).toBe(1);
  });
});
