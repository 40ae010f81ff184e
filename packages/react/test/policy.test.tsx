// <ToolCallStatus> over a remote gate for a server gate's policy: a call that needs two approvers
// shows who approved and how many are left, and a person's edit is sent from a form the app renders.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineTool } from '@toolgate/core';
import { createRemoteGate, type RemoteGate } from '@toolgate/core/remote';
import { createServerGate, sqliteLedger, toolgateHandler, type ServerGate } from '@toolgate/server';
import { act, render, screen } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { afterEach, expect, it } from 'vitest';
import { createFakeClock, when } from '@toolgate/test-utils';
import { bearer, serve } from '../../server/test/support/http.ts';
import {
  ToolCallStatus,
  ToolCallStatusActions,
  ToolCallStatusApprovals,
  ToolCallStatusChanges,
  ToolCallStatusEdit,
  ToolCallStatusLabel,
  ToolCallStatusRefusal,
  ToolGateProvider,
  showRemoteParts,
} from '../src/index.ts';

// The page mirrors a server gate made with createRemoteGate, so it shows the parts such calls need.
showRemoteParts();

let cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

const wire = (approvals: number) =>
  defineTool({
    name: 'wire',
    inputSchema: {
      type: 'object',
      properties: { amount_cents: { type: 'integer', minimum: 1 } },
      required: ['amount_cents'],
      additionalProperties: false,
    },
    needsApproval: true,
    approvals,
    execute: (input) => ({ sent: input.amount_cents }),
  });

async function page(
  approvals: number,
  principal: string,
  tool = wire(approvals),
): Promise<{ server: ServerGate; gate: RemoteGate }> {
  const directory = mkdtempSync(join(tmpdir(), 'toolgate-policy-'));
  const ledger = await sqliteLedger({ path: join(directory, 'ledger.db') });
  const server = createServerGate({
    tools: [tool],
    ledger,
    recover: false,
    canSee: () => true,
    canApprove: (who) => who.startsWith('manager_'),
  });
  const served = await serve(toolgateHandler(server, { authenticate: bearer }));
  cleanup.push(
    () => rmSync(directory, { recursive: true, force: true }),
    () => ledger.close(),
    () => server.close(),
    () => served.close(),
  );
  await server.propose(
    { id: 'w1', name: 'wire', arguments: { amount_cents: 500_000 } },
    { session: 's1', principal: 'alice' },
  );
  const gate = createRemoteGate({
    url: `${served.origin}/api/toolgate`,
    session: 's1',
    tools: [tool],
    headers: { Authorization: `Bearer ${principal}` },
    clock: createFakeClock(),
  });
  cleanup.push(() => gate.close());
  await when(gate.connection, (state) => state.state === 'live');
  return { server, gate };
}

const settle = (gate: RemoteGate, check: () => boolean) =>
  act(async () => {
    await when(gate.calls, check);
  });

it('shows who has approved a call that needs two approvers and how many are left, live', async () => {
  const { server, gate } = await page(2, 'manager_1');
  render(
    <ToolGateProvider gate={gate}>
      <ToolCallStatus pressDelayMs={0} id="w1" />
    </ToolGateProvider>,
  );
  expect(screen.getByRole('status').querySelector('[data-toolgate="approvals"]')?.textContent).toBe(
    'No approvals yet · 2 more of 2 needed',
  );
  await userEvent.click(screen.getByRole('button', { name: 'Approve' }));
  await settle(gate, () => gate.get('w1')?.approval?.left === 1);
  const approvals = screen.getByRole('status').querySelector('[data-toolgate="approvals"]');
  expect(approvals?.getAttribute('data-left')).toBe('1');
  expect(approvals?.textContent).toBe('Approved by manager_1 · 1 more of 2 needed');
  expect(screen.getByRole('status').getAttribute('data-status')).toBe('awaiting_approval');
  // The page may approve again; the server says this approver already has.
  expect(screen.getByRole('button', { name: 'Approve' }).getAttribute('aria-disabled')).toBeNull();
  await userEvent.click(screen.getByRole('button', { name: 'Approve' }));
  await act(async () => {
    await when(
      {
        getState: () => gate.requestOf('w1'),
        subscribe: (listener) => gate.subscribeCall('w1', () => listener(gate.requestOf('w1'))),
      },
      (request) => request?.state === 'refused',
    );
  });
  expect(
    screen.getByRole('status').querySelector('[data-toolgate="refusal"]')?.getAttribute('data-code'),
  ).toBe('already_approved');

  const hash = (await import('@toolgate/core')).inputHash;
  expect(
    await server.approve('w1', { principal: 'manager_2', inputHash: await hash(gate.get('w1')?.input) }),
  ).toEqual({ ok: true, left: 0 });
  await settle(gate, () => gate.get('w1')?.status === 'committed');
  expect(screen.getByRole('status').getAttribute('data-status')).toBe('committed');
  expect(screen.getByRole('status').querySelector('[data-toolgate="approvals"]')?.textContent).toBe(
    'Approved by manager_1, manager_2',
  );
});

it('names each approver in the words the app gives, and the principal where it gives none', async () => {
  const { server, gate } = await page(3, 'manager_1');
  const people: Record<string, string> = { manager_1: 'you', manager_2: 'Dana (finance)' };
  render(
    <ToolGateProvider gate={gate}>
      <ToolCallStatus pressDelayMs={0} id="w1">
        <ToolCallStatusLabel />
        <ToolCallStatusApprovals
          nameOf={(principal) => {
            if (principal === 'manager_3') throw new Error('not in the directory');
            return people[principal] as string;
          }}
        />
      </ToolCallStatus>
    </ToolGateProvider>,
  );
  const hash = await (await import('@toolgate/core')).inputHash(gate.get('w1')?.input);
  for (const principal of ['manager_2', 'manager_1', 'manager_3'])
    await server.approve('w1', { principal, inputHash: hash });
  await settle(gate, () => gate.get('w1')?.status === 'committed');
  // A name the app cannot give (its function threw) reads as the principal, never as nothing.
  expect(screen.getByRole('status').querySelector('[data-toolgate="approvals"]')?.textContent).toBe(
    'Approved by Dana (finance), you, manager_3',
  );
});

it('says who of the people a tool asks has yet to decide, while the call waits, and nothing once it ran', async () => {
  const asked = defineTool({
    name: 'wire',
    inputSchema: {
      type: 'object',
      properties: { amount_cents: { type: 'integer', minimum: 1 } },
      required: ['amount_cents'],
      additionalProperties: false,
    },
    approvals: 2,
    approvers: () => ['manager_1', 'manager_2', 'manager_3'],
    execute: (input) => ({ sent: input.amount_cents }),
  });
  const { server, gate } = await page(2, 'alice', asked);
  const people: Record<string, string> = { manager_1: 'your manager', manager_2: 'Dana', manager_3: 'Lee' };
  render(
    <ToolGateProvider gate={gate}>
      <ToolCallStatus pressDelayMs={0} id="w1">
        <ToolCallStatusApprovals nameOf={(principal) => people[principal] ?? principal} />
      </ToolCallStatus>
    </ToolGateProvider>,
  );
  const part = () => screen.getByRole('status').querySelector('[data-toolgate="approvals"]');
  expect(part()?.querySelector('[data-toolgate="asked"]')?.textContent).toBe(
    'Waiting for your manager, Dana, Lee',
  );
  const hash = await (await import('@toolgate/core')).inputHash(gate.get('w1')?.input);
  expect(await server.approve('w1', { principal: 'manager_2', inputHash: hash })).toEqual({
    ok: true,
    left: 1,
  });
  await settle(gate, () => gate.get('w1')?.approval?.left === 1);
  expect(part()?.textContent).toBe('Approved by Dana · 1 more of 2 needed' + 'Waiting for your manager, Lee');
  await server.approve('w1', { principal: 'manager_1', inputHash: hash });
  await settle(gate, () => gate.get('w1')?.status === 'committed');
  expect(part()?.textContent).toBe('Approved by Dana, your manager');
});

function EditForm() {
  return (
    <ToolCallStatusEdit>
      {({ input, approve }) => (
        <form
          aria-label="edit"
          onSubmit={(event) => {
            event.preventDefault();
            approve({
              ...(input as object),
              amount_cents: Number(new FormData(event.currentTarget).get('amount')),
            });
          }}
        >
          <label>
            Amount{' '}
            <input name="amount" defaultValue={String((input as { amount_cents: number }).amount_cents)} />
          </label>
          <button type="submit">Approve this amount</button>
        </form>
      )}
    </ToolCallStatusEdit>
  );
}

it('sends the edit from a form the app renders: a bad one is refused and the call waits; a good one runs and shows what changed', async () => {
  const { server, gate } = await page(1, 'manager_1');
  render(
    <ToolGateProvider gate={gate}>
      <ToolCallStatus pressDelayMs={0} id="w1">
        <ToolCallStatusLabel />
        <ToolCallStatusChanges />
        <ToolCallStatusApprovals />
        <ToolCallStatusRefusal />
        <EditForm />
        <ToolCallStatusActions />
      </ToolCallStatus>
    </ToolGateProvider>,
  );
  const amount = screen.getByRole('textbox', { name: 'Amount' });
  await userEvent.clear(amount);
  await userEvent.type(amount, '0');
  await userEvent.click(screen.getByRole('button', { name: 'Approve this amount' }));
  await act(async () => {
    await when(
      {
        getState: () => gate.requestOf('w1'),
        subscribe: (listener) => gate.subscribeCall('w1', () => listener(gate.requestOf('w1'))),
      },
      (request) => request?.state === 'refused',
    );
  });
  const refusal = screen.getByRole('status').querySelector('[data-toolgate="refusal"]');
  expect(refusal?.getAttribute('data-code')).toBe('invalid_edit');
  expect(refusal?.textContent).toContain('/amount_cents');
  expect((await server.get('w1'))?.status).toBe('awaiting_approval');

  await userEvent.clear(screen.getByRole('textbox', { name: 'Amount' }));
  await userEvent.type(screen.getByRole('textbox', { name: 'Amount' }), '400000');
  await userEvent.click(screen.getByRole('button', { name: 'Approve this amount' }));
  await settle(gate, () => gate.get('w1')?.status === 'committed');
  expect(gate.get('w1')).toMatchObject({ input: { amount_cents: 400_000 }, output: { sent: 400_000 } });
  expect(screen.getByRole('status').querySelector('[data-toolgate="changes"]')?.textContent).toBe(
    'Changed by manager_1:/amount_cents 500000 → 400000',
  );
  expect(screen.queryByRole('form', { name: 'edit' })).toBeNull();
});
