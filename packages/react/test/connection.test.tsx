// A remote gate's connection in React: `useGateConnection()`, and what <ToolCallStatus> says while
// decisions cannot be sent (connecting, reconnecting, offline, disconnected) with the time the server
// was last heard from, on the gate's fake clock.
import { createRemoteGate, type RemoteGate, type RemoteGateOptions } from '@toolgate/core/remote';
import { act, render, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createFakeClock,
  type FakeClock,
  type LoopbackServer,
  startLoopbackServer,
  when,
} from '@toolgate/test-utils';
import { ToolCallStatus, ToolGateProvider, useGateConnection, showRemoteParts } from '../src/index.ts';
import { createShop, renderWithGate } from './shop.tsx';

// The page mirrors a server gate made with createRemoteGate, so it shows the parts such calls need.
showRemoteParts();

const input = { amount_cents: 1250, currency: 'USD' };

let cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

async function mirror(
  options: Partial<RemoteGateOptions<unknown>> = {},
): Promise<{ server: LoopbackServer; gate: RemoteGate; clock: FakeClock; events: EventTarget }> {
  const server = await startLoopbackServer();
  cleanup.push(() => server.close());
  server.call('c1', 'charge', input, 'awaiting_approval');
  const shop = createShop();
  const clock = createFakeClock();
  const events = new EventTarget();
  const gate = createRemoteGate({
    url: server.url,
    session: server.session,
    tools: [shop.tools.charge],
    store: shop.store,
    clock,
    events,
    retry: { random: () => 1 },
    onError: () => {},
    ...options,
  });
  cleanup.push(() => gate.close());
  return { server, gate, clock, events };
}

function Connection() {
  const { state, error, retryAt, lastEventAt } = useGateConnection();
  return (
    <p aria-label="connection">{[state, error?.code ?? '-', retryAt ?? '-', lastEventAt ?? '-'].join(' ')}</p>
  );
}

const waitFor = (
  gate: RemoteGate,
  check: (state: ReturnType<RemoteGate['connection']['getState']>) => boolean,
) => act(() => when(gate.connection, check).then(() => {}));

describe('useGateConnection', () => {
  it('is always live with a gate that decides on the spot', () => {
    renderWithGate(createShop().gate, <Connection />);
    expect(screen.getByLabelText('connection')).toHaveTextContent('live - - -');
  });

  it('follows a remote gate: connecting, live with the time of the last event, reconnecting, offline, live again', async () => {
    const { server, gate, clock } = await mirror();
    render(
      <ToolGateProvider gate={gate}>
        <Connection />
      </ToolGateProvider>,
    );
    const shown = screen.getByLabelText('connection');
    expect(shown).toHaveTextContent('connecting - - -');
    const opened = clock.now();
    await waitFor(gate, (s) => s.state === 'live');
    expect(shown).toHaveTextContent(`live - - ${opened}`);
    clock.advance(15_000);
    server.heartbeat();
    await waitFor(gate, (s) => s.lastEventAt === opened + 15_000);
    expect(shown).toHaveTextContent(`live - - ${opened + 15_000}`);
    for (let i = 0; i < 3; i++)
      server.answerFeed(503, { error: { code: 'unavailable', message: 'restarting' } });
    server.drop();
    await waitFor(gate, (s) => s.state === 'reconnecting');
    expect(shown).toHaveTextContent(`reconnecting network_error ${clock.now() + 500} ${opened + 15_000}`);
    // Three attempts fail, each after its backoff (0.5, 1 and 2 s).
    for (let attempt = 0; attempt < 3; attempt++) {
      const feeds = server.feeds().length;
      await act(async () => {
        const waiting = await when(
          gate.connection,
          (s) => s.retryAt !== undefined && s.retryAt > clock.now(),
        );
        clock.advance((waiting.retryAt ?? 0) - clock.now());
        await server.until(() => server.feeds().length === feeds + 1);
      });
    }
    await waitFor(gate, (s) => s.state === 'offline');
    expect(shown).toHaveTextContent(`offline unavailable ${clock.now() + 4000} ${opened + 15_000}`);
    clock.advance(4000);
    await waitFor(gate, (s) => s.state === 'live');
    expect(shown).toHaveTextContent(`live - - ${opened + 15_000}`);
  });
});

describe('<ToolCallStatus> while a remote gate is not live', () => {
  it('says it is connecting before the first snapshot, with no time yet', async () => {
    const { server, gate } = await mirror();
    // The server's record, as a page that rendered it before its feed opened.
    const record = server.record('c1');
    if (record === undefined) throw new Error('the scripted server has no call c1');
    const view = render(
      <ToolGateProvider gate={gate}>
        <ToolCallStatus pressDelayMs={0} call={record} />
      </ToolGateProvider>,
    );
    const note = view.container.querySelector('[data-toolgate="connection"]');
    expect(note).toHaveAttribute('data-state', 'connecting');
    expect(note).toHaveTextContent('Connecting to the server…');
    expect(note?.querySelector('time')).toBeNull();
    expect(within(screen.getByRole('status')).getByRole('button', { name: 'Approve' })).toHaveAttribute(
      'aria-disabled',
      'true',
    );
    await waitFor(gate, (s) => s.state === 'live');
    expect(view.container.querySelector('[data-toolgate="connection"]')).toBeNull();
  });

  it('reconnecting, then offline, each with the time the server was last heard from; the buttons wait for live', async () => {
    const { server, gate, clock, events } = await mirror();
    await when(gate.connection, (s) => s.state === 'live');
    const view = render(
      <ToolGateProvider gate={gate}>
        <ToolCallStatus pressDelayMs={0} id="c1" />
      </ToolGateProvider>,
    );
    const status = screen.getByRole('status');
    const opened = clock.now();
    clock.advance(9_000);
    server.drop();
    await waitFor(gate, (s) => s.state === 'reconnecting');
    let note = view.container.querySelector('[data-toolgate="connection"]');
    expect(note).toHaveAttribute('data-state', 'reconnecting');
    expect(note).toHaveTextContent('The server is out of reach; reconnecting… Last update:');
    // The time of the last event, not of the break: the page's view is as old as that.
    expect(note?.querySelector('time')).toHaveAttribute('dateTime', new Date(opened).toISOString());
    expect(within(status).getByRole('button', { name: 'Approve' })).toHaveAttribute('aria-disabled', 'true');
    act(() => void events.dispatchEvent(new Event('offline')));
    note = view.container.querySelector('[data-toolgate="connection"]');
    expect(note).toHaveAttribute('data-state', 'offline');
    expect(note).toHaveTextContent(
      'Offline: the server cannot be reached. You can decide once the connection is back; it is retried on its own. Last update:',
    );
    expect(note?.querySelector('time')).toHaveAttribute('dateTime', new Date(opened).toISOString());
    expect(within(status).getByRole('button', { name: 'Deny' })).toHaveAttribute('aria-disabled', 'true');
    act(() => void events.dispatchEvent(new Event('online')));
    await waitFor(gate, (s) => s.state === 'live');
    expect(view.container.querySelector('[data-toolgate="connection"]')).toBeNull();
    expect(within(status).getByRole('button', { name: 'Approve' })).not.toHaveAttribute('aria-disabled');
  });

  it('disconnected for good (401): says so, and how to go on; the words are labels', async () => {
    const { server, gate, clock } = await mirror();
    await when(gate.connection, (s) => s.state === 'live');
    server.answerFeed(401, { error: { code: 'unauthenticated', message: 'sign in' } });
    const view = render(
      <ToolGateProvider gate={gate}>
        <ToolCallStatus pressDelayMs={0} id="c1" />
        <ToolCallStatus
          pressDelayMs={0}
          id="c1"
          labels={{ disconnected: 'Déconnecté.', lastEvent: 'Dernière nouvelle :' }}
        />
      </ToolGateProvider>,
    );
    server.drop();
    await waitFor(gate, (s) => s.state === 'reconnecting');
    act(() => clock.advance(500));
    await waitFor(gate, (s) => s.state === 'closed');
    const [note, translated] = [...view.container.querySelectorAll('[data-toolgate="connection"]')];
    expect(note).toHaveAttribute('data-state', 'closed');
    expect(note).toHaveTextContent(
      'Disconnected from the server. Reload the page to connect again. Last update:',
    );
    expect(translated).toHaveTextContent('Déconnecté. Dernière nouvelle :');
  });
});
