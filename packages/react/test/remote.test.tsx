// The React bindings over a remote gate: a page that mirrors a server gate through its event feed,
// with Approve/Deny/Cancel sent as requests. First against the real thing (a server gate over a
// SQLite ledger, its toolgateHandler served on loopback), then against a scripted loopback server
// for what a real one cannot be made to do on cue (hold an answer, show other arguments).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineTool } from '@toolgate/core';
import { createRemoteGate, type RemoteGate } from '@toolgate/core/remote';
import { createServerGate, sqliteLedger, toolgateHandler, type ServerGate } from '@toolgate/server';
import { act, render, screen, within } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import axe from 'axe-core';
import { useSyncExternalStore } from 'react';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createStore } from 'zustand/vanilla';
import { createFakeClock, type LoopbackServer, startLoopbackServer, when } from '@toolgate/test-utils';
import { bearer, serve } from '../../server/test/support/http.ts';
import {
  ToolCallStatus,
  ToolGateProvider,
  useToolCall,
  useToolCalls,
  showRemoteParts,
} from '../src/index.ts';
import { createShop, type ShopFixture } from './shop.tsx';

// The page mirrors a server gate made with createRemoteGate, so it shows the parts such calls need.
showRemoteParts();

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

async function mirror(
  script: (server: LoopbackServer) => void,
): Promise<{ server: LoopbackServer; gate: RemoteGate; shop: ShopFixture }> {
  const server = await startLoopbackServer();
  cleanup.push(() => server.close());
  script(server);
  const shop = createShop();
  const gate = createRemoteGate({
    url: server.url,
    session: server.session,
    tools: [shop.tools.charge],
    store: shop.store,
    clock: createFakeClock(),
  });
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
    await when(
      {
        getState: () => gate.requestOf(id),
        subscribe: (listener) => gate.subscribeCall(id, () => listener(gate.requestOf(id))),
      },
      check,
    );
  });

function List() {
  const calls = useToolCalls();
  return <p aria-label="calls">{calls.map((call) => `${call.id}:${call.status}`).join(' ')}</p>;
}

async function violations(container: Element): Promise<{ id: string; nodes: string[] }[]> {
  const results = await axe.run(container);
  return results.violations.map((violation) => ({
    id: violation.id,
    nodes: violation.nodes.map((node) => node.html),
  }));
}

/** The tool both halves import: the server runs it, the page commits its output to the app's store. */
const wallet = () => createStore<{ balance: number }>()(() => ({ balance: 10_000 }));
const charge = defineTool({
  name: 'charge',
  inputSchema: {
    type: 'object',
    properties: { amount_cents: { type: 'integer', minimum: 1 }, currency: { enum: ['USD', 'EUR'] } },
    required: ['amount_cents', 'currency'],
    additionalProperties: false,
  },
  needsApproval: (input) => input.amount_cents > 5000,
  execute: (input) => ({ charged: input.amount_cents }),
  commit: (state: { balance: number }, output) => ({ balance: state.balance - output.charged }),
});
const alice = { session: 's1', principal: 'alice' };

/**
 * A server gate over a SQLite file (alice owns session `s1`; `auditor` may see it but decide
 * nothing) served on loopback, and `principal`'s page mirroring `s1` once its feed is live.
 */
async function mirrorServer(principal: string, script: (server: ServerGate) => Promise<unknown>) {
  const directory = mkdtempSync(join(tmpdir(), 'toolgate-react-'));
  const ledger = await sqliteLedger({ path: join(directory, 'ledger.db') });
  const server = createServerGate({
    tools: [charge],
    ledger,
    recover: false,
    canSee: (who, session) => who === session.owner || who === 'auditor',
  });
  const served = await serve(toolgateHandler(server, { authenticate: bearer }));
  cleanup.push(
    () => rmSync(directory, { recursive: true, force: true }),
    () => ledger.close(),
    () => server.close(),
    () => served.close(),
  );
  await script(server);
  const store = wallet();
  let writes = 0;
  store.subscribe(() => void (writes += 1));
  const gate = createRemoteGate({
    url: `${served.origin}/api/toolgate`,
    session: 's1',
    tools: [charge],
    store,
    headers: { Authorization: `Bearer ${principal}` },
    clock: createFakeClock(),
  });
  cleanup.push(() => gate.close());
  await when(gate.connection, (state) => state.state === 'live');
  return { server, gate, store, writes: () => writes };
}

function Wallet({ store }: { store: ReturnType<typeof wallet> }) {
  // Straight from React (zustand's hook would bring its own React into the React 18 run).
  const balance = useSyncExternalStore(store.subscribe, () => store.getState().balance);
  return <p aria-label="balance">{balance}</p>;
}

function Charge({ id }: { id: string }) {
  const { call } = useToolCall(id, { tool: charge });
  if (call === undefined) return <p>waiting for {id}</p>;
  return (
    <p data-testid={`card-${id}`}>
      {call.name} {call.status} {call.status === 'committed' ? `charged ${call.output.charged}` : ''}
    </p>
  );
}

describe('React over a remote gate (a real server gate)', () => {
  it("useToolCall, useToolCalls and <ToolCallStatus> show the server's calls; Approve runs the call there and the store changes once", async () => {
    const { server, gate, store, writes } = await mirrorServer('alice', async (s) => {
      await s.run({ id: 'c0', name: 'charge', arguments: { amount_cents: 100, currency: 'USD' } }, alice);
      await s.propose(
        { id: 'c1', name: 'charge', arguments: { amount_cents: 9000, currency: 'EUR' } },
        alice,
      );
    });
    render(
      <ToolGateProvider gate={gate}>
        <main>
          <Charge id="c1" />
          <Charge id="c2" />
          <List />
          <ToolCallStatus pressDelayMs={0} id="c1" />
          <Wallet store={store} />
        </main>
      </ToolGateProvider>,
    );
    // c0 committed before the page opened: it is shown, and the page's store is left as the page loaded it.
    expect(screen.getByLabelText('calls')).toHaveTextContent('c0:committed c1:awaiting_approval');
    expect(screen.getByTestId('card-c1')).toHaveTextContent('charge awaiting_approval');
    expect(screen.getByText('waiting for c2')).toBeInTheDocument();
    const status = screen.getByRole('status');
    expect(status).toHaveAttribute('data-status', 'awaiting_approval');
    expect(screen.getByLabelText('balance')).toHaveTextContent('10000');

    await userEvent.setup().click(within(status).getByRole('button', { name: 'Approve' }));
    await settle(gate, () => gate.get('c1')?.status === 'committed');
    expect(status).toHaveAttribute('data-status', 'committed');
    expect(status).toHaveTextContent('charge Done');
    expect(screen.getByTestId('card-c1')).toHaveTextContent('charge committed charged 9000');
    expect(screen.getByLabelText('balance')).toHaveTextContent('1000');
    expect(await server.get('c1')).toMatchObject({ status: 'committed', output: { charged: 9000 } });

    await act(() =>
      server.run({ id: 'c2', name: 'charge', arguments: { amount_cents: 250, currency: 'USD' } }, alice),
    );
    await settle(gate, () => gate.get('c2')?.status === 'committed');
    expect(screen.getByTestId('card-c2')).toHaveTextContent('charge committed charged 250');
    expect(screen.getByLabelText('calls')).toHaveTextContent('c0:committed c1:committed c2:committed');
    expect(screen.getByLabelText('balance')).toHaveTextContent('750');
    expect(writes()).toBe(2);
  });

  it('a refused approve (403 from the server) is shown in <ToolCallStatus> with what to do, and the call keeps waiting', async () => {
    const { server, gate, writes } = await mirrorServer('auditor', (s) =>
      s.propose({ id: 'c1', name: 'charge', arguments: { amount_cents: 9000, currency: 'EUR' } }, alice),
    );
    const { container } = render(
      <ToolGateProvider gate={gate}>
        <main>
          <ToolCallStatus pressDelayMs={0} id="c1" />
        </main>
      </ToolGateProvider>,
    );
    const status = screen.getByRole('status');
    await userEvent.setup().click(within(status).getByRole('button', { name: 'Approve' }));
    await requestSettles(gate, 'c1', () => gate.requestOf('c1')?.state === 'refused');
    expect(status).toHaveAttribute('data-request', 'refused');
    expect(status).toHaveAttribute('data-status', 'awaiting_approval');
    const refusal = container.querySelector('[data-toolgate="refusal"]');
    expect(refusal).toHaveTextContent(
      'Not approved: you may not decide this call. Someone who may has to do it.',
    );
    expect(refusal).toHaveAttribute('data-code', 'forbidden');
    expect(status).toContainElement(refusal as HTMLElement);
    expect(within(status).getByRole('button', { name: 'Approve' })).not.toHaveAttribute('aria-disabled');
    expect((await server.get('c1'))?.status).toBe('awaiting_approval');
    expect(writes()).toBe(0);
    expect(await violations(container)).toEqual([]);
  });
});

describe('React over a remote gate (a scripted loopback server)', () => {
  it('while the feed is down, Approve and Deny are disabled and say the server is out of reach; back live, they work again', async () => {
    const { server, gate } = await mirror((s) => s.call('c1', 'charge', input, 'awaiting_approval'));
    render(
      <ToolGateProvider gate={gate}>
        <ToolCallStatus pressDelayMs={0} id="c1" />
      </ToolGateProvider>,
    );
    const status = screen.getByRole('status');
    server.drop();
    await act(() => when(gate.connection, (state) => state.state === 'reconnecting'));
    const approve = within(status).getByRole('button', { name: 'Approve' });
    expect(approve).toHaveAttribute('aria-disabled', 'true');
    expect(within(status).getByRole('button', { name: 'Deny' })).toHaveAttribute('aria-disabled', 'true');
    expect(status).toHaveTextContent('The server is out of reach; reconnecting…');
    await userEvent.setup().click(approve);
    expect(server.requests.some((request) => request.method === 'POST')).toBe(false);
    gate.approve('c1');
    expect(gate.requestOf('c1')).toMatchObject({ state: 'refused', error: { code: 'offline' } });
    await act(() => when(gate.connection, (state) => state.state === 'live'));
    expect(approve).not.toHaveAttribute('aria-disabled');
    expect(status.querySelector('[data-toolgate="connection"]')).toBeNull();
    // The decision made while it was away stays refused, saying what to do now that it is back.
    expect(status.querySelector('[data-toolgate="refusal"]')).toHaveTextContent(
      'Not approved: it was not sent: the server was out of reach. Decide again once the connection is back.',
    );
  });

  it("Approve shows the request on its way (busy, disabled for the keyboard too) until the server's move arrives", async () => {
    const { server, gate } = await mirror((s) => s.call('c1', 'charge', input, 'awaiting_approval'));
    const { container } = render(
      <ToolGateProvider gate={gate}>
        <main>
          <ToolCallStatus pressDelayMs={0} id="c1" />
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
    expect(
      server.requests.filter((request) => request.method === 'POST').map((request) => request.path),
    ).toEqual(['/api/toolgate/calls/c1/approve']);
  });

  it('a refused approval (409 stale) is shown with what to do, inside the live region, and Approve works again', async () => {
    const { server, gate } = await mirror((s) => s.call('c1', 'charge', input, 'awaiting_approval'));
    const { container } = render(
      <ToolGateProvider gate={gate}>
        <main>
          <ToolCallStatus pressDelayMs={0} id="c1" />
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
    expect(refusal).toHaveTextContent(
      'Not approved: the input changed since you saw it. Review the input shown now, then decide again.',
    );
    expect(refusal).toHaveAttribute('data-code', 'stale');
    expect(status).toContainElement(refusal as HTMLElement);
    const approve = within(status).getByRole('button', { name: 'Approve' });
    expect(approve).not.toHaveAttribute('aria-disabled');
    expect(await violations(container)).toEqual([]);
  });

  it('the refusal and busy words are labels, so they can be translated', async () => {
    const { server, gate } = await mirror((s) => s.call('c1', 'charge', input, 'awaiting_approval'));
    const labels = {
      approve: 'Autoriser',
      approving: 'Autorisation…',
      approveRefused: 'Refusé',
      refusals: { forbidden: '{message}' },
    };
    render(
      <ToolGateProvider gate={gate}>
        <ToolCallStatus pressDelayMs={0} id="c1" labels={labels} />
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
