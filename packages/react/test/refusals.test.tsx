// Every way a decision can fail, shown in <ToolCallStatus> itself: what happened, in a sentence a
// person can act on, with the code in data-code. Against a scripted loopback server that refuses on
// cue, a fetch that finds no server, and a feed that is down.
import { createRemoteGate, type RemoteGate } from '@toolgate/core/remote';
import { act, render, screen, within } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { afterEach, describe, expect, it } from 'vitest';
import { createFakeClock, type LoopbackServer, startLoopbackServer, when } from '@toolgate/test-utils';
import { ToolCallStatus, ToolGateProvider, type ToolCallStatusLabels } from '../src/index.ts';
import { createShop } from './shop.tsx';

// The page mirrors a server gate made with createRemoteGate and nothing else: the provider loads
// the parts such calls need before it shows any of them.

const input = { amount_cents: 1250, currency: 'USD' };

let cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

/** A live remote gate on a scripted server with one call awaiting approval, and its status on screen. */
async function showCall(labels?: Partial<ToolCallStatusLabels>): Promise<{
  server: LoopbackServer;
  gate: RemoteGate;
  status: HTMLElement;
  noServer: (on: boolean) => void;
}> {
  const server = await startLoopbackServer();
  cleanup.push(() => server.close());
  server.call('c1', 'charge', input, 'awaiting_approval');
  const shop = createShop();
  let unreachable = false;
  // POSTs find no server while `unreachable`; the feed is left as it is.
  const fetch = (url: RequestInfo | URL, init?: RequestInit) =>
    unreachable && init?.method === 'POST'
      ? Promise.reject(new TypeError('Failed to fetch'))
      : globalThis.fetch(url, init);
  const gate = createRemoteGate({
    url: server.url,
    session: server.session,
    tools: [shop.tools.charge],
    store: shop.store,
    clock: createFakeClock(),
    fetch,
    onError: () => {},
  });
  cleanup.push(() => gate.close());
  await when(gate.connection, (state) => state.state === 'live');
  render(
    <ToolGateProvider gate={gate}>
      <main>
        <ToolCallStatus pressDelayMs={0} id="c1" {...(labels === undefined ? {} : { labels })} />
      </main>
    </ToolGateProvider>,
  );
  return { server, gate, status: await screen.findByRole('status'), noServer: (on) => (unreachable = on) };
}

const refused = (gate: RemoteGate) =>
  act(() =>
    when(
      {
        getState: () => gate.requestOf('c1'),
        subscribe: (listener) => gate.subscribeCall('c1', () => listener(gate.requestOf('c1'))),
      },
      (request) => request?.state === 'refused',
    ).then(() => {}),
  );

const refusalOf = (status: HTMLElement) => status.querySelector('[data-toolgate="refusal"]');

describe('<ToolCallStatus> shows each refusal with a way forward', () => {
  const cases: { code: string; status: number; server: string; action: 'Approve' | 'Deny'; shows: string }[] =
    [
      {
        code: 'stale',
        status: 409,
        server:
          'the approval names other arguments than the call holds; reload the call and approve what it shows',
        action: 'Approve',
        shows:
          'Not approved: the input changed since you saw it. Review the input shown now, then decide again.',
      },
      {
        code: 'expired',
        status: 409,
        server: 'the approval expired; the call was cancelled',
        action: 'Approve',
        shows:
          'Not approved: the time to decide ran out, and the call was cancelled. Ask for it again if it is still needed.',
      },
      {
        code: 'forbidden',
        status: 403,
        server: 'this principal may not decide this call',
        action: 'Deny',
        shows: 'Not denied: you may not decide this call. Someone who may has to do it.',
      },
      {
        code: 'not_awaiting',
        status: 409,
        server: 'the call is executing, not waiting for approval',
        action: 'Approve',
        shows:
          'Not approved: the call no longer waits for a decision: it was decided elsewhere, or it is running. Its status shows where it is.',
      },
      {
        code: 'settled',
        status: 409,
        server: 'the call has already ended',
        action: 'Deny',
        shows:
          'Not denied: the call has already ended, so there is nothing left to decide. Its status shows how it ended.',
      },
      {
        code: 'already_approved',
        status: 409,
        server: 'this approver has already approved this input; the call waits for the others',
        action: 'Approve',
        shows: 'Not approved: you have already approved this input. The call waits for the other approvers.',
      },
    ];

  for (const { code, status: httpStatus, server: message, action, shows } of cases) {
    it(`${code}: "${shows}"`, async () => {
      const { server, gate, status } = await showCall();
      server.refuseNextPost(httpStatus, code, message);
      await userEvent.setup().click(within(status).getByRole('button', { name: action }));
      await refused(gate);
      const refusal = refusalOf(status);
      expect(refusal).toHaveTextContent(shows, { normalizeWhitespace: true });
      expect(refusal).toHaveAttribute('data-code', code);
      expect(status).toContainElement(refusal as HTMLElement);
      expect(status).toHaveAttribute('data-request', 'refused');
      // The call still waits here, so the person can act again.
      expect(within(status).getByRole('button', { name: 'Approve' })).not.toHaveAttribute('aria-disabled');
    });
  }

  it("invalid_edit: the server's reason inside the sentence", async () => {
    const { server, gate, status } = await showCall();
    server.refuseNextPost(409, 'invalid_edit', 'the maximum is $500.');
    await userEvent.setup().click(within(status).getByRole('button', { name: 'Approve' }));
    await refused(gate);
    expect(refusalOf(status)).toHaveTextContent(
      'Not approved: your change was refused: the maximum is $500. The call still waits for a decision.',
    );
  });

  it('network_error: no answer from the server; it says the decision may not have arrived and what to do once the connection is back', async () => {
    const { gate, status, noServer } = await showCall();
    noServer(true);
    await userEvent.setup().click(within(status).getByRole('button', { name: 'Approve' }));
    await refused(gate);
    const refusal = refusalOf(status);
    expect(refusal).toHaveAttribute('data-code', 'network_error');
    expect(refusal).toHaveTextContent(
      'Not approved: no answer came from the server, so it may not have arrived. Once the connection is back, decide again if the call still waits.',
    );
  });

  it('offline: a decision made while the feed is down is not sent, and says so until the person decides again', async () => {
    const { server, gate, status } = await showCall();
    server.drop();
    await act(() => when(gate.connection, (state) => state.state !== 'live').then(() => {}));
    // The buttons wait; a decision made some other way (an app's own button) is refused here.
    act(() => void gate.deny('c1'));
    const refusal = refusalOf(status);
    expect(refusal).toHaveAttribute('data-code', 'offline');
    expect(refusal).toHaveTextContent(
      'Not denied: it was not sent: the server was out of reach. Decide again once the connection is back.',
    );
    expect(server.requests.some((request) => request.method === 'POST')).toBe(false);
  });

  it("a code without a sentence shows the server's own words", async () => {
    const { server, gate, status } = await showCall();
    server.refuseNextPost(418, 'teapot', 'this server only brews tea');
    await userEvent.setup().click(within(status).getByRole('button', { name: 'Approve' }));
    await refused(gate);
    expect(refusalOf(status)).toHaveTextContent('Not approved: this server only brews tea');
    expect(refusalOf(status)).toHaveAttribute('data-code', 'teapot');
  });

  it("the sentences are labels: one code reworded, {message} for the server's words, the others kept", async () => {
    const labels = {
      approveRefused: 'Refusé',
      refusals: { stale: 'la saisie a changé ({message}) : relisez-la.' },
    };
    const { server, gate, status } = await showCall(labels);
    server.refuseNextPost(409, 'stale', 'other arguments.');
    await userEvent.setup().click(within(status).getByRole('button', { name: 'Approve' }));
    await refused(gate);
    expect(refusalOf(status)).toHaveTextContent('Refusé: la saisie a changé (other arguments) : relisez-la.');
    server.refuseNextPost(409, 'expired', 'late');
    await userEvent.setup().click(within(status).getByRole('button', { name: 'Approve' }));
    await act(() =>
      when(
        {
          getState: () => gate.requestOf('c1'),
          subscribe: (listener) => gate.subscribeCall('c1', () => listener(gate.requestOf('c1'))),
        },
        (request) => request?.state === 'refused' && request.error.code === 'expired',
      ).then(() => {}),
    );
    expect(refusalOf(status)).toHaveTextContent('Refusé: the time to decide ran out');
  });
});
