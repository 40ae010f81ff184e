import type { ToolCallRecord } from '@toolgate/core';
import { act, render, renderHook, screen } from '@testing-library/react';
import type { ReactNode } from 'react';
import { describe, expect, it } from 'vitest';
import { ToolGateProvider, useToolCall, useToolCallIds, useToolCalls, useToolGate } from '../src/index.ts';
import { createShop, openaiCall, quietly, type ShopFixture } from './shop.tsx';

const wrapper = (shop: ShopFixture) =>
  function Wrapper({ children }: { children: ReactNode }) {
    return <ToolGateProvider gate={shop.gate}>{children}</ToolGateProvider>;
  };

const charge = (id: string) => openaiCall(id, 'charge', { amount_cents: 100, currency: 'USD' });

describe('useToolCalls', () => {
  it("lists one assistant turn's calls, in the order they were proposed, as they change", () => {
    const shop = createShop();
    shop.gate.propose(charge('a1'), { turn: 'turn_a' });
    shop.gate.propose(charge('b1'), { turn: 'turn_b' });
    shop.gate.propose(openaiCall('a2', 'add_item', { sku: 'socks' }), { turn: 'turn_a' });
    const { result } = renderHook(() => useToolCalls((call) => call.turn === 'turn_a'), {
      wrapper: wrapper(shop),
    });
    expect(result.current.map((call) => [call.id, call.status])).toEqual([
      ['a1', 'awaiting_approval'],
      ['a2', 'committed'],
    ]);
    act(() => {
      shop.gate.deny('a1');
    });
    expect(result.current.map((call) => [call.id, call.status])).toEqual([
      ['a1', 'cancelled'],
      ['a2', 'committed'],
    ]);
  });

  it('lists the calls awaiting approval, and keeps the same array while none of them changes', () => {
    const shop = createShop();
    shop.gate.propose(charge('c1'));
    shop.gate.propose(charge('c2'));
    const { result } = renderHook(() => useToolCalls((call) => call.status === 'awaiting_approval'), {
      wrapper: wrapper(shop),
    });
    const first = result.current;
    expect(first.map((call) => call.id)).toEqual(['c1', 'c2']);
    act(() => {
      shop.gate.propose(openaiCall('x', 'add_item', { sku: 'hat' }));
    });
    expect(result.current).toBe(first);
    act(() => {
      shop.gate.approve('c1');
    });
    expect(result.current.map((call) => call.id)).toEqual(['c2']);
  });

  it('without a filter, lists every call', () => {
    const shop = createShop();
    shop.gate.propose(charge('c1'));
    shop.gate.propose(openaiCall('c2', 'nope', {}));
    const { result } = renderHook(() => useToolCalls(), { wrapper: wrapper(shop) });
    expect(result.current.map((call: ToolCallRecord) => call.status)).toEqual([
      'awaiting_approval',
      'rejected',
    ]);
  });
});

describe('useToolCallIds', () => {
  it('changes only when a call joins or leaves the list', () => {
    const shop = createShop();
    shop.gate.propose(charge('c1'));
    const { result } = renderHook(() => useToolCallIds(), { wrapper: wrapper(shop) });
    const first = result.current;
    expect(first).toEqual(['c1']);
    act(() => {
      shop.gate.approve('c1');
    });
    expect(result.current).toBe(first);
    act(() => {
      shop.gate.propose(charge('c2'));
    });
    expect(result.current).toEqual(['c1', 'c2']);
  });

  it('lists only the ids that pass the filter', () => {
    const shop = createShop();
    const { result } = renderHook(() => useToolCallIds((call) => call.name === 'add_item'), {
      wrapper: wrapper(shop),
    });
    act(() => {
      shop.gate.propose(openaiCall('i1', 'add_item', { sku: 'a' }));
      shop.gate.propose(charge('c1'));
    });
    expect(result.current).toEqual(['i1']);
  });
});

describe('useToolCall', () => {
  it('approve, deny and cancel keep their identity across renders and answer false when nothing can move', () => {
    const shop = createShop();
    shop.gate.propose(charge('c1'));
    const { result, rerender } = renderHook(() => useToolCall('c1'), { wrapper: wrapper(shop) });
    const { approve, deny, cancel } = result.current;
    rerender();
    expect(result.current.approve).toBe(approve);
    expect(result.current.deny).toBe(deny);
    expect(result.current.cancel).toBe(cancel);
    let answer = false;
    act(() => {
      answer = deny('not today');
    });
    expect(answer).toBe(true);
    expect(result.current.call?.status).toBe('cancelled');
    expect(result.current.call?.reason?.message).toBe('not today');
    expect(approve()).toBe(false);
    expect(cancel()).toBe(false);
  });

  it('cancel(reason) stops a running call with that reason', () => {
    const shop = createShop();
    shop.gate.propose(charge('c1'));
    const { result } = renderHook(() => useToolCall('c1'), { wrapper: wrapper(shop) });
    act(() => {
      result.current.approve();
    });
    expect(result.current.call?.status).toBe('executing');
    act(() => {
      result.current.cancel('changed my mind');
    });
    expect(result.current.call).toMatchObject({
      status: 'cancelled',
      reason: { code: 'user_cancelled', message: 'changed my mind' },
    });
    expect(shop.store.getState().balance).toBe(10_000);
  });

  it('with { tool }, shows a call of that tool and nothing for a call of another', () => {
    const shop = createShop();
    shop.gate.propose(charge('c1'));
    const { result: same } = renderHook(() => useToolCall('c1', { tool: shop.tools.charge }), {
      wrapper: wrapper(shop),
    });
    const { result: other } = renderHook(() => useToolCall('c1', { tool: shop.tools.addItem }), {
      wrapper: wrapper(shop),
    });
    expect(same.current.call?.status === 'awaiting_approval' && same.current.call.input.amount_cents).toBe(
      100,
    );
    expect(other.current.call).toBeUndefined();
  });

  it('without an id or proposal, there is no call and the controls do nothing', () => {
    const shop = createShop();
    const { result } = renderHook(() => useToolCall(undefined), { wrapper: wrapper(shop) });
    expect(result.current.call).toBeUndefined();
    expect(result.current.approve()).toBe(false);
    expect(shop.gate.calls.getState().records.size).toBe(0);
  });

  it('a proposal the gate cannot read is shown as rejected, never thrown', () => {
    const shop = createShop();
    const hostile = Object.defineProperty({}, 'name', {
      enumerable: true,
      get() {
        throw new Error('boom');
      },
    });
    const { result } = renderHook(() => useToolCall(hostile), { wrapper: wrapper(shop) });
    expect(result.current.call?.status).toBe('rejected');
    expect(result.current.call?.reason?.code).toBe('invalid_shape');
  });
});

describe('outside <ToolGateProvider>', () => {
  it.each<[string, () => unknown]>([
    ['useToolGate', () => useToolGate()],
    ['useToolCall', () => useToolCall('c1')],
    ['useToolCalls', () => useToolCalls()],
    ['useToolCallIds', () => useToolCallIds()],
  ])('%s throws an error that says what to do', (name, hook) => {
    expect(() => quietly(() => renderHook(hook))).toThrow(
      `\`${name}\` must be used within \`<ToolGateProvider gate={gate}>\``,
    );
  });

  it('useToolGate returns the gate inside it', () => {
    const shop = createShop();
    function Name() {
      return (
        <p>
          {useToolGate()
            .tools.map((tool) => tool.name)
            .join(', ')}
        </p>
      );
    }
    render(
      <ToolGateProvider gate={shop.gate}>
        <Name />
      </ToolGateProvider>,
    );
    expect(screen.getByText('charge, add_item, refund, lookup')).toBeInTheDocument();
  });
});
