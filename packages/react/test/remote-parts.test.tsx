// The parts of <ToolCallStatus> only a server gate's calls need are left out of an app whose gate
// decides on the spot, and shown once something a server gate's page uses asks for them.
import { render, screen } from '@testing-library/react';
import { expect, it } from 'vitest';
import { ToolCallStatus, ToolGateProvider, useApprovals } from '../src/index.ts';
import { createShop, openaiCall } from './shop.tsx';

it('a status shows approvers and edits only once the page asks for the remote parts (useApprovals does)', () => {
  const shop = createShop();
  // A record the server made (this gate does not know it, so the status shows it as it is).
  const record = {
    ...createShop().gate.propose(openaiCall('call_r', 'add_item', { sku: 'socks' })),
    approval: { required: 2, left: 1, approvedBy: [{ principal: 'ops' }] },
    edit: { by: 'ops', changes: [{ path: '/qty', from: 1, to: 2 }] },
  } as never;
  const Inbox = () => <p data-testid="inbox">{useApprovals().length}</p>;
  const view = (inbox: boolean) => (
    <ToolGateProvider gate={shop.gate}>
      {inbox && <Inbox />}
      <ToolCallStatus key={String(inbox)} pressDelayMs={0} call={record} />
    </ToolGateProvider>
  );
  const { rerender } = render(view(false));
  const local = screen.getByRole('status');
  expect(local).toHaveTextContent('add_item');
  expect(local.querySelector('[data-toolgate="approvals"]')).toBeNull();
  expect(local.querySelector('[data-toolgate="changes"]')).toBeNull();

  // A status drawn after the inbox asked for them (the inbox's own are drawn after it).
  rerender(view(true));
  const status = screen.getByRole('status');
  expect(status.querySelector('[data-toolgate="approvers"]')?.textContent).toBe(
    'Approved by ops · 1 more of 2 needed',
  );
  expect(status.querySelector('[data-toolgate="changes"]')?.textContent).toBe('Changed by ops:/qty 1 → 2');
});
