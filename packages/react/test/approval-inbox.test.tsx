// The approver's inbox in React: useApprovals and <ApprovalInbox /> over a remote gate that follows
// the signed-in principal's inbox, against a real server gate (a SQLite file) served on loopback.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRemoteGate, type RemoteGate } from '@toolgate/core/remote';
import { sqliteLedger, toolgateHandler, type ServerGate } from '@toolgate/server';
import { act, render, screen, within } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { afterEach, expect, it } from 'vitest';
import { createFakeClock, type FakeClock, when } from '@toolgate/test-utils';
import { inboxGate } from '../../server/test/inbox/support.ts';
import { bearer, serve } from '../../server/test/support/http.ts';
import { ApprovalInbox, ToolGateProvider, useApprovals } from '../src/index.ts';

let cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

/** A server gate over a SQLite file on loopback, and `principal`'s page following their inbox once live. */
async function inboxOf(
  principal: string,
  script: (server: ServerGate, clock: FakeClock) => Promise<unknown> = async () => {},
) {
  const directory = mkdtempSync(join(tmpdir(), 'toolgate-inbox-'));
  const ledger = await sqliteLedger({ path: join(directory, 'ledger.db') });
  const { gate: server, clock } = inboxGate(ledger);
  const served = await serve(toolgateHandler(server, { authenticate: bearer }));
  cleanup.push(
    () => rmSync(directory, { recursive: true, force: true }),
    () => ledger.close(),
    () => server.close(),
    () => served.close(),
  );
  await script(server, clock);
  const gate = createRemoteGate({
    baseUrl: `${served.origin}/api/toolgate`,
    inbox: true,
    headers: { Authorization: `Bearer ${principal}` },
    clock: createFakeClock(),
  });
  cleanup.push(() => gate.close());
  await when(gate.connection, (state) => state.state === 'live');
  return { server, gate };
}

/** A wire transfer (manager_1 approves it, finance_1 too from 10 000 €); from 20 000 € one both must approve. */
const propose = (
  server: ServerGate,
  id: string,
  args: { iban: string; amount_cents: number },
  session: string,
  principal = 'alice',
) =>
  server.propose(
    { id, name: args.amount_cents >= 2_000_000 ? 'big_wire' : 'wire', arguments: args },
    { session, principal },
  );

/** Waits, inside `act`, until the page's gate holds what `check` wants. */
const settle = (gate: RemoteGate, check: () => boolean) =>
  act(async () => {
    await when(gate.calls, check);
  });

function Queue() {
  const calls = useApprovals();
  return <p aria-label="queue">{calls.map((call) => `${call.id}:${call.approval?.left}`).join(' ')}</p>;
}

it('says nothing waits, then shows a call that asks the principal with its input, and Approve runs it and empties the inbox', async () => {
  const { server, gate } = await inboxOf('manager_1');
  const { container } = render(
    <ToolGateProvider gate={gate}>
      <ApprovalInbox pressDelayMs={0} />
    </ToolGateProvider>,
  );
  expect(screen.getByText('Nothing is waiting for your approval.')).toBeInTheDocument();

  await act(() => propose(server, 'w1', { iban: 'DE02 1234', amount_cents: 50_000 }, 'chat_alice'));
  await settle(gate, () => gate.get('w1') !== undefined);
  const inbox = screen.getByRole('region', { name: 'Waiting for your approval' });
  const card = within(inbox).getByRole('status');
  expect(card).toHaveAttribute('data-status', 'awaiting_approval');
  expect(card).toHaveTextContent('DE02 1234');
  expect(card).toHaveTextContent('50000');
  expect(screen.queryByText('Nothing is waiting for your approval.')).not.toBeInTheDocument();

  await userEvent.setup().click(within(card).getByRole('button', { name: 'Approve' }));
  await settle(gate, () => gate.get('w1') === undefined);
  expect(await server.settled('w1')).toMatchObject({ status: 'committed', output: { sent: 50_000 } });
  expect(screen.getByText('Nothing is waiting for your approval.')).toBeInTheDocument();
  expect(container.querySelectorAll('[data-toolgate="call"]')).toHaveLength(0);
});

it('lists the calls of every session oldest first, and drops one the principal approved while others still must', async () => {
  const { server, gate } = await inboxOf('manager_1', async (s, clock) => {
    await propose(s, 'z_first', { iban: 'DE02', amount_cents: 50_000 }, 'chat_bob', 'bob');
    clock.advance(1_000);
    await propose(s, 'a_second', { iban: 'FR76', amount_cents: 2_000_000 }, 'chat_alice');
  });
  render(
    <ToolGateProvider gate={gate}>
      <Queue />
      <ApprovalInbox pressDelayMs={0} />
    </ToolGateProvider>,
  );
  expect(screen.getByLabelText('queue')).toHaveTextContent('z_first:1 a_second:2');
  const cards = screen.getAllByRole('status');
  expect(cards.map((card) => card.getAttribute('data-status'))).toEqual([
    'awaiting_approval',
    'awaiting_approval',
  ]);

  await userEvent.setup().click(within(cards[1] as HTMLElement).getByRole('button', { name: 'Approve' }));
  await settle(gate, () => gate.get('a_second') === undefined);
  expect(screen.getByLabelText('queue')).toHaveTextContent(/^z_first:1$/);
  // Still waiting, for finance now.
  expect(await server.get('a_second')).toMatchObject({
    status: 'awaiting_approval',
    approval: { left: 1, approvedBy: [{ principal: 'manager_1' }] },
  });
  expect((await server.awaiting('finance_1')).map((call) => call.id)).toEqual(['a_second']);

  await userEvent.setup().click(within(screen.getByRole('status')).getByRole('button', { name: 'Deny' }));
  await settle(gate, () => gate.get('z_first') === undefined);
  expect(await server.get('z_first')).toMatchObject({ status: 'cancelled' });
  expect(screen.getByLabelText('queue')).toHaveTextContent(/^$/);
});

it('shows nothing of calls that ask someone else, and takes its words from labels', async () => {
  const { server, gate } = await inboxOf('finance_1');
  render(
    <ToolGateProvider gate={gate}>
      <ApprovalInbox
        labels={{ inboxTitle: 'À décider', inboxEmpty: 'Rien à décider.', approve: 'Approuver' }}
      />
    </ToolGateProvider>,
  );
  await act(() => propose(server, 'small', { iban: 'DE02', amount_cents: 500 }, 'chat_alice'));
  await act(() => propose(server, 'big', { iban: 'DE02', amount_cents: 1_500_000 }, 'chat_alice'));
  await settle(gate, () => gate.get('big') !== undefined);
  expect(gate.get('small')).toBeUndefined();
  const inbox = screen.getByRole('region', { name: 'À décider' });
  expect(within(inbox).getAllByRole('status')).toHaveLength(1);
  expect(within(inbox).getByRole('button', { name: 'Approuver' })).toBeInTheDocument();

  await act(() => server.deny('big', { principal: 'manager_1' }));
  await settle(gate, () => gate.get('big') === undefined);
  expect(screen.getByText('Rien à décider.')).toBeInTheDocument();
});
