// The React bindings over a remote gate: a page that mirrors a server gate through its event feed
// (a loopback server speaking the toolgate wire), with Approve/Deny/Cancel sent as requests.
import { createRemoteGate, type RemoteGate } from '@toolgate/core/remote';
import { act, render, screen, within } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import axe from 'axe-core';
import { useSyncExternalStore } from 'react';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createFakeClock } from '../../core/test/support/clock.ts';
import { startLoopbackServer, type LoopbackServer } from '../../core/test/support/remote-server.ts';
import { when } from '../../core/test/support/when.ts';
import { ToolCallStatus, ToolGateProvider, useToolCall, useToolCalls } from '../src/index.ts';
import { createShop, type ShopFixture } from './shop.tsx';

const input = { amount_cents: 1250, currency: 'USD' };

let cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

beforeAll(() => {
  // jsdom has no canvas: axe copes without one, but jsdom prints a warning each time it is asked.
  vi.spyOn(HTMLCanvasElement.prototype, 'getContext').mockImplementation(() => null);
});

async function mirror(script: (server: LoopbackServer) => void): Promise<{ server: LoopbackServer; gate: RemoteGate; shop: ShopFixture }> {
  const server = await startLoopbackServer();
  cleanup.push(() => server.close());
  script(server);
  const shop = createShop();
  const gate = createRemoteGate({ url: server.url, session: server.session, tools: [shop.tools.charge], store: shop.store, clock: createFakeClock() });
  cleanup.push(() => gate.close());
  await when(gate.connection, (state) => state.state === 'live');
  return { server, gate, shop };
}

/** Waits, inside `act`, until the gate shows what `check` wants. */
const settle = (gate: RemoteGate, check: () => boolean) =>
  act(async () => {
    await when(gate.calls, check);
  });
const requestSettles = (gate: RemoteGate, id: string, check: () => boolean) =>
  act(async () => {
    await when({ getState: () => gate.requestOf(id), subscribe: (listener) => gate.subscribeCall(id, () => listener(gate.requestOf(id))) }, check);
  });

function Card({ id, shop }: { id: string; shop: ShopFixture }) {
  const { call, request } = useToolCall(id, { tool: shop.tools.charge });
  if (call === undefined) return <p>waiting for {id}</p>;
  return (
    <p data-testid={`card-${id}`}>
      {call.name} {call.status} {call.status === 'committed' ? `charged ${call.output.charged}` : ''}
      {request?.state === 'sending' ? ` (${request.action}…)` : ''}
    </p>
  );
}

function List() {
  const calls = useToolCalls();
  return <p aria-label="calls">{calls.map((call) => `${call.id}:${call.status}`).join(' ')}</p>;
}

function Balance({ shop }: { shop: ShopFixture }) {
  // Straight from React (zustand's hook would bring its own React into the React 18 run).
  const balance = useSyncExternalStore(shop.store.subscribe, () => shop.store.getState().balance);
  return <p aria-label="balance">{balance}</p>;
}

async function violations(container: Element): Promise<{ id: string; nodes: string[] }[]> {
  const results = await axe.run(container);
  return results.violations.map((violation) => ({ id: violation.id, nodes: violation.nodes.map((node) => node.html) }));
}

describe('React over a remote gate', () => {
  it('useToolCall, useToolCalls and <ToolCallStatus> render the mirrored records, and the store changes on a live commit', async () => {
    const { server, gate, shop } = await mirror((s) => {
      s.call('c1', 'charge', input, 'executing');
      s.call('c0', 'charge', input, 'cancelled');
    });
    render(
      <ToolGateProvider gate={gate}>
        <main>
          <Card id="c1" shop={shop} />
          <Card id="c2" shop={shop} />
          <List />
          <ToolCallStatus id="c1" />
          <Balance shop={shop} />
        </main>
      </ToolGateProvider>,
    );
    expect(screen.getByTestId('card-c1')).toHaveTextContent('charge executing');
    expect(screen.getByText('waiting for c2')).toBeInTheDocument();
    expect(screen.getByRole('status')).toHaveAttribute('data-status', 'executing');
    expect(screen.getByLabelText('calls')).toHaveTextContent('c1:executing c0:cancelled');

    server.moveTo('c1', 'committed', { output: { charged: 1250 } });
    server.call('c2', 'charge', input, 'awaiting_approval');
    await settle(gate, () => gate.get('c2') !== undefined);
    expect(screen.getByTestId('card-c1')).toHaveTextContent('charge committed charged 1250');
    expect(screen.getByTestId('card-c2')).toHaveTextContent('charge awaiting_approval');
    expect(screen.getByRole('status')).toHaveTextContent('charge Done');
    expect(screen.getByLabelText('calls')).toHaveTextContent('c1:committed c0:cancelled c2:awaiting_approval');
    expect(screen.getByLabelText('balance')).toHaveTextContent('8750');
    expect(shop.writes).toBe(1);
  });

  it('Approve shows the request on its way (busy, disabled for the keyboard too) until the server\'s move arrives', async () => {
    const { server, gate } = await mirror((s) => s.call('c1', 'charge', input, 'awaiting_approval'));
    const { container } = render(
      <ToolGateProvider gate={gate}>
        <main>
          <ToolCallStatus id="c1" />
        </main>
      </ToolGateProvider>,
    );
    const status = screen.getByRole('status');
    const release = server.hold();
    const user = userEvent.setup();
    await user.click(within(status).getByRole('button', { name: 'Approve' }));
    const approving = within(status).getByRole('button', { name: 'Approving…' });
    expect(approving).toHaveAttribute('aria-busy', 'true');
    expect(approving).toHaveAttribute('aria-disabled', 'true');
    expect(approving).toHaveFocus();
    expect(within(status).getByRole('button', { name: 'Deny' })).toHaveAttribute('aria-disabled', 'true');
    expect(status).toHaveAttribute('data-request', 'sending');
    expect(await violations(container)).toEqual([]);
    // A second press sends nothing.
    await user.click(approving);
    await user.click(within(status).getByRole('button', { name: 'Deny' }));
    await act(() => server.until(() => server.requests.some((request) => request.method === 'POST')));
    release();
    await requestSettles(gate, 'c1', () => gate.requestOf('c1') === undefined);
    expect(status).toHaveAttribute('data-status', 'executing');
    expect(status).not.toHaveAttribute('data-request');
    expect(within(status).getByRole('button', { name: 'Cancel' })).not.toHaveAttribute('aria-disabled');
    expect(server.requests.filter((request) => request.method === 'POST').map((request) => request.path)).toEqual(['/api/toolgate/calls/c1/approve']);
  });

  it('a refused approval (409 stale) is shown with the server\'s words, inside the live region, and Approve works again', async () => {
    const { server, gate } = await mirror((s) => s.call('c1', 'charge', input, 'awaiting_approval'));
    const { container } = render(
      <ToolGateProvider gate={gate}>
        <main>
          <ToolCallStatus id="c1" />
        </main>
      </ToolGateProvider>,
    );
    const status = screen.getByRole('status');
    // The server's call holds other arguments than the ones this page shows.
    Object.assign(server.record('c1')?.input as object, { amount_cents: 990_000 });
    await userEvent.setup().click(within(status).getByRole('button', { name: 'Approve' }));
    await requestSettles(gate, 'c1', () => gate.requestOf('c1')?.state === 'refused');
    expect(status).toHaveAttribute('data-request', 'refused');
    expect(status).toHaveAttribute('data-status', 'awaiting_approval');
    const refusal = container.querySelector('[data-toolgate="refusal"]');
    expect(refusal).toHaveTextContent('Not approved: the arguments you approved are not the ones this call has');
    expect(refusal).toHaveAttribute('data-code', 'stale');
    expect(status).toContainElement(refusal as HTMLElement);
    const approve = within(status).getByRole('button', { name: 'Approve' });
    expect(approve).not.toHaveAttribute('aria-disabled');
    expect(await violations(container)).toEqual([]);
  });

  it('the refusal and busy words are labels, so they can be translated', async () => {
    const { server, gate } = await mirror((s) => s.call('c1', 'charge', input, 'awaiting_approval'));
    const labels = { approve: 'Autoriser', approving: 'Autorisation…', approveRefused: 'Refusé' };
    render(
      <ToolGateProvider gate={gate}>
        <ToolCallStatus id="c1" labels={labels} />
      </ToolGateProvider>,
    );
    server.refuseNextPost(403, 'forbidden', 'seul le propriétaire peut autoriser');
    const release = server.hold();
    await userEvent.setup().click(screen.getByRole('button', { name: 'Autoriser' }));
    expect(screen.getByRole('button', { name: 'Autorisation…' })).toHaveAttribute('aria-busy', 'true');
    release();
    await requestSettles(gate, 'c1', () => gate.requestOf('c1')?.state === 'refused');
    expect(screen.getByRole('status')).toHaveTextContent('Refusé: seul le propriétaire peut autoriser');
  });
});
