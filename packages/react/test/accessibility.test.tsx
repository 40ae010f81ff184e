import type { ToolGate } from '@toolgate/core';
import { act } from '@testing-library/react';
import axe from 'axe-core';
import type { ReactNode } from 'react';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { ToolCallStatus, ToolCallStatusActions, ToolCallStatusReason } from '../src/index.ts';
import { createShop, openaiCall, renderWithGate, type ShopFixture } from './shop.tsx';

/** The rules axe breaks, with the markup that broke each; empty when the page is clean. */
async function violations(container: Element): Promise<{ id: string; nodes: string[] }[]> {
  const results = await axe.run(container);
  return results.violations.map((violation) => ({
    id: violation.id,
    nodes: violation.nodes.map((node) => node.html),
  }));
}

// A page landmark around the status, as an app has; axe checks the status itself, not a bare page.
function page(gate: ToolGate, children: ReactNode) {
  return renderWithGate(gate, <main>{children}</main>);
}

const charge = (id: string, args: unknown = { amount_cents: 1250, currency: 'USD' }) =>
  openaiCall(id, 'charge', args);

const statuses: [string, (shop: ShopFixture) => Promise<void> | void][] = [
  ['pending', (shop) => void shop.gate.stream.open({ id: 'call_1', name: 'charge', source: 'openai-chat' })],
  ['validated', (shop) => void shop.gate.propose(openaiCall('call_1', 'lookup', { q: 'socks' }))],
  ['awaiting_approval', (shop) => void shop.gate.propose(charge('call_1'))],
  [
    'executing',
    (shop) => {
      shop.gate.propose(charge('call_1'));
      shop.gate.approve('call_1');
    },
  ],
  [
    'committed',
    async (shop) => {
      shop.gate.propose(charge('call_1'));
      shop.gate.approve('call_1');
      await shop.pay('call_1', { charged: 1250 });
    },
  ],
  [
    'cancelled',
    (shop) => {
      shop.gate.propose(charge('call_1'));
      shop.gate.deny('call_1');
    },
  ],
  ['rejected', (shop) => void shop.gate.propose(charge('call_1', { amount_cents: -5, currency: 'GBP' }))],
  ['failed', (shop) => void shop.gate.propose(openaiCall('call_1', 'refund', { reason: 'ledger offline' }))],
];

describe('accessibility (axe)', () => {
  beforeAll(() => {
    // jsdom has no canvas: axe copes without one, but jsdom prints a warning each time it is asked.
    vi.spyOn(HTMLCanvasElement.prototype, 'getContext').mockImplementation(() => null);
  });

  it.each(statuses)('%s: no violations', async (status, reach) => {
    const shop = createShop();
    const { container } = page(shop.gate, <ToolCallStatus pressDelayMs={0} id="call_1" />);
    await act(async () => {
      await reach(shop);
    });
    expect(container.querySelector('[data-toolgate="call"]')).toHaveAttribute('data-status', status);
    expect(await violations(container)).toEqual([]);
  });

  it('a call that does not exist yet: no violations', async () => {
    const shop = createShop();
    const { container } = page(shop.gate, <ToolCallStatus pressDelayMs={0} id="later" />);
    expect(await violations(container)).toEqual([]);
  });

  it('a transcript of many calls, with parts composed without the label: no violations', async () => {
    const shop = createShop();
    for (let i = 0; i < 5; i += 1) shop.gate.propose(charge(`call_${i}`));
    shop.gate.propose(charge('bad', { amount_cents: '12.50', currency: 'USD' }));
    const { container } = page(
      shop.gate,
      <>
        {['call_0', 'call_1', 'call_2', 'call_3', 'call_4', 'bad'].map((id) => (
          <ToolCallStatus pressDelayMs={0} key={id} id={id} />
        ))}
        <ToolCallStatus pressDelayMs={0} id="call_0">
          <ToolCallStatusReason />
          <ToolCallStatusActions />
        </ToolCallStatus>
      </>,
    );
    expect(await violations(container)).toEqual([]);
  });
});
