import { cancel } from '@toolgate/core';
import { act, render, screen, within } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import {
  ToolCallStatus,
  ToolCallStatusActions,
  ToolCallStatusInput,
  ToolCallStatusLabel,
  ToolCallStatusReason,
  showRemoteParts,
} from '../src/index.ts';
import * as Status from '../src/tool-call-status-parts.ts';
import { createShop, openaiCall, quietly, renderWithGate, type ShopFixture } from './shop.tsx';

// Records a server gate made: <ToolCallStatus> shows the parts only such calls need.
showRemoteParts();

const initial = { balance: 10_000, items: [] };
const validCharge = { amount_cents: 1250, currency: 'USD' };

/** Renders one status and proposes the call through the gate, as a chat adapter would. */
function show(shop: ShopFixture, id: string, propose: () => unknown) {
  const view = renderWithGate(shop.gate, <ToolCallStatus pressDelayMs={0} id={id} />);
  act(() => {
    propose();
  });
  return { ...view, status: screen.getByRole('status') };
}

function proposeCharge(shop: ShopFixture, id = 'call_1', args: unknown = validCharge) {
  return show(shop, id, () => shop.gate.propose(openaiCall(id, 'charge', args)));
}

describe('<ToolCallStatus> shows each status', () => {
  it('pending: the call is streaming; no actions yet', () => {
    const shop = createShop();
    const { status } = show(shop, 'call_1', () =>
      shop.gate.stream.open({ id: 'call_1', name: 'charge', source: 'openai-chat' }),
    );
    expect(status).toHaveAttribute('data-status', 'pending');
    expect(status).toHaveTextContent('charge Preparing');
    expect(within(status).queryByRole('button')).toBeNull();
  });

  it('validated: the arguments are valid and the app is still deciding; no actions', async () => {
    const shop = createShop();
    const { status } = show(shop, 'call_2', () =>
      shop.gate.propose(openaiCall('call_2', 'lookup', { q: 'socks' })),
    );
    expect(status).toHaveAttribute('data-status', 'validated');
    expect(status).toHaveTextContent('lookup Checked');
    expect(within(status).queryByRole('button')).toBeNull();
    await act(() => shop.authorize('call_2', true));
    expect(status).toHaveAttribute('data-status', 'committed');
  });

  it('awaiting_approval: Approve and Deny, and the store is untouched', () => {
    const shop = createShop();
    const { status } = proposeCharge(shop);
    expect(status).toHaveAttribute('data-status', 'awaiting_approval');
    expect(status).toHaveTextContent('charge Needs approval');
    const buttons = within(status).getAllByRole('button');
    expect(buttons.map((b) => b.textContent)).toEqual(['Approve', 'Deny']);
    expect(buttons[0]).toHaveAccessibleDescription('charge Needs approval');
    expect(shop.runs.charge).toBe(0);
    expect(shop.store.getState()).toEqual(initial);
  });

  it('executing: Cancel only, and the store is still untouched', async () => {
    const shop = createShop();
    const { status } = proposeCharge(shop);
    await userEvent.setup().click(within(status).getByRole('button', { name: 'Approve' }));
    expect(status).toHaveAttribute('data-status', 'executing');
    expect(status).toHaveTextContent('charge Running');
    expect(
      within(status)
        .getAllByRole('button')
        .map((b) => b.textContent),
    ).toEqual(['Cancel']);
    expect(shop.writes).toBe(0);
  });

  it('never turns the Approve button into Cancel: a second press on it, as the call starts, cancels nothing', async () => {
    const shop = createShop();
    const { status } = proposeCharge(shop);
    const approve = within(status).getByRole('button', { name: 'Approve' });
    act(() => approve.click());
    expect(status).toHaveAttribute('data-status', 'executing');
    // A second click on the element the first one pressed, as a double-click or a second tab's click lands.
    act(() => approve.click());
    expect(status).toHaveAttribute('data-status', 'executing');
    expect(within(status).getByRole('button', { name: 'Cancel' })).not.toBe(approve);
    await act(() => shop.pay('call_1', { charged: 1250 }));
    expect(status).toHaveAttribute('data-status', 'committed');
  });

  it('committed: done, no actions, and the store changed exactly once', async () => {
    const shop = createShop();
    const { status } = proposeCharge(shop);
    await userEvent.setup().click(within(status).getByRole('button', { name: 'Approve' }));
    await act(() => shop.pay('call_1', { charged: 1250 }));
    expect(status).toHaveAttribute('data-status', 'committed');
    expect(status).toHaveTextContent('charge Done');
    expect(within(status).queryByRole('button')).toBeNull();
    expect(shop.store.getState().balance).toBe(8750);
    expect(shop.writes).toBe(1);
  });

  it('rejected: each offending argument path and what is wrong, nothing ran, the store is unchanged', () => {
    const shop = createShop();
    const { status } = proposeCharge(shop, 'call_1', { amount_cents: '12.50', currency: 'GBP' });
    expect(status).toHaveAttribute('data-status', 'rejected');
    expect(status).toHaveAttribute('data-reason', 'invalid_arguments');
    expect(status).toHaveTextContent('charge Rejected');
    const paths = within(status)
      .getAllByRole('listitem')
      .map((item) => item.querySelector('code')?.textContent);
    expect(paths).toEqual(['/amount_cents', '/currency']);
    expect(within(status).getAllByRole('listitem')[0]).toHaveTextContent(/\/amount_cents must be integer/);
    expect(within(status).queryByRole('button')).toBeNull();
    expect(shop.runs.charge).toBe(0);
    expect(shop.store.getState()).toEqual(initial);
    expect(shop.writes).toBe(0);
  });

  it('rejected without issues: the reason message (an unknown tool)', () => {
    const shop = createShop();
    const { status } = show(shop, 'call_9', () =>
      shop.gate.propose(openaiCall('call_9', 'delete_everything', {})),
    );
    expect(status).toHaveAttribute('data-status', 'rejected');
    expect(status).toHaveAttribute('data-reason', 'unknown_tool');
    expect(status).toHaveTextContent('no tool named "delete_everything" is registered');
    expect(shop.writes).toBe(0);
  });

  it('cancelled by a person who denied it: shown as Denied, never as done; the store is unchanged', async () => {
    const shop = createShop();
    const { status } = proposeCharge(shop);
    await userEvent.setup().click(within(status).getByRole('button', { name: 'Deny' }));
    expect(status).toHaveAttribute('data-status', 'cancelled');
    expect(status).toHaveAttribute('data-reason', 'approval_denied');
    expect(status).toHaveTextContent('charge Denied');
    expect(status).not.toHaveTextContent('Done');
    expect(status).toHaveTextContent('a person denied this call');
    expect(shop.runs.charge).toBe(0);
    expect(shop.store.getState()).toEqual(initial);
  });

  it('cancelled while running: the tool is aborted, its late result is dropped, the store is unchanged', async () => {
    const shop = createShop();
    const { status } = proposeCharge(shop);
    const user = userEvent.setup();
    await user.click(within(status).getByRole('button', { name: 'Approve' }));
    await user.click(within(status).getByRole('button', { name: 'Cancel' }));
    expect(status).toHaveAttribute('data-status', 'cancelled');
    expect(status).toHaveAttribute('data-reason', 'user_cancelled');
    expect(status).toHaveTextContent('charge Cancelled');
    expect(shop.signal?.aborted).toBe(true);
    await act(() => shop.pay('call_1', { charged: 1250 }));
    expect(status).toHaveAttribute('data-status', 'cancelled');
    expect(shop.store.getState()).toEqual(initial);
    expect(shop.writes).toBe(0);
  });

  it('cancelled by the tool itself: its reason, and the store is unchanged', async () => {
    const shop = createShop();
    const { status } = proposeCharge(shop);
    await userEvent.setup().click(within(status).getByRole('button', { name: 'Approve' }));
    await act(() => shop.pay('call_1', cancel('the card on file has expired')));
    expect(status).toHaveAttribute('data-status', 'cancelled');
    expect(status).toHaveAttribute('data-reason', 'tool_cancelled');
    expect(status).toHaveTextContent('the card on file has expired');
    expect(shop.store.getState()).toEqual(initial);
  });

  it('failed: the error, and the store is unchanged', async () => {
    const shop = createShop();
    const { status } = show(shop, 'call_3', () =>
      shop.gate.propose(openaiCall('call_3', 'refund', { reason: 'ledger offline' })),
    );
    expect(status).toHaveAttribute('data-status', 'failed');
    expect(status).toHaveAttribute('data-reason', 'tool_error');
    expect(status).toHaveTextContent('refund Failed');
    expect(status).toHaveTextContent('the tool threw: ledger offline');
    expect(shop.store.getState()).toEqual(initial);
    expect(shop.writes).toBe(0);
  });

  it('failed asynchronously: the rejection message, and the store is unchanged', async () => {
    const shop = createShop();
    const { status } = proposeCharge(shop);
    await userEvent.setup().click(within(status).getByRole('button', { name: 'Approve' }));
    await act(() => shop.decline('call_1', new Error('card declined')));
    expect(status).toHaveAttribute('data-status', 'failed');
    expect(status).toHaveTextContent('the tool failed: card declined');
    expect(shop.store.getState()).toEqual(initial);
  });
});

describe('<ToolCallStatus> by keyboard', () => {
  it('Tab reaches Approve, Enter approves, and focus moves to the status, not onto the Cancel that replaced Approve', async () => {
    const shop = createShop();
    const { status } = proposeCharge(shop);
    const user = userEvent.setup();
    await user.tab();
    expect(within(status).getByRole('button', { name: 'Approve' })).toHaveFocus();
    await user.keyboard('{Enter}');
    expect(status).toHaveAttribute('data-status', 'executing');
    expect(status).toHaveFocus();
    // A second Enter, as a double press lands, presses nothing.
    await user.keyboard('{Enter}');
    expect(status).toHaveAttribute('data-status', 'executing');
    await user.tab();
    expect(within(status).getByRole('button', { name: 'Cancel' })).toHaveFocus();
    await user.keyboard(' ');
    expect(status).toHaveAttribute('data-status', 'cancelled');
    // The buttons are gone; focus stays on the call instead of falling to the page.
    expect(status).toHaveFocus();
    expect(shop.store.getState()).toEqual(initial);
  });

  it('Tab, Tab reaches Deny, Space denies', async () => {
    const shop = createShop();
    const { status } = proposeCharge(shop);
    const user = userEvent.setup();
    await user.tab();
    await user.tab();
    expect(within(status).getByRole('button', { name: 'Deny' })).toHaveFocus();
    await user.keyboard(' ');
    expect(status).toHaveAttribute('data-status', 'cancelled');
    expect(status).toHaveTextContent('Denied');
    expect(status).toHaveFocus();
    expect(shop.runs.charge).toBe(0);
  });

  it('approve by keyboard, then the charge commits', async () => {
    const shop = createShop();
    const { status } = proposeCharge(shop);
    const user = userEvent.setup();
    await user.tab();
    await user.keyboard('{Enter}');
    expect(status).toHaveFocus();
    await user.tab();
    expect(within(status).getByRole('button', { name: 'Cancel' })).toHaveFocus();
    await act(() => shop.pay('call_1', { charged: 1250 }));
    expect(status).toHaveAttribute('data-status', 'committed');
    // Cancel went away when the call committed: focus stays on the call, not on the page.
    expect(status).toHaveFocus();
    expect(shop.store.getState().balance).toBe(8750);
    expect(shop.writes).toBe(1);
  });

  it('leaves focus alone when the person has moved on', async () => {
    const shop = createShop();
    const view = renderWithGate(
      shop.gate,
      <>
        <ToolCallStatus pressDelayMs={0} id="call_1" />
        <input aria-label="Message" />
      </>,
    );
    act(() => {
      shop.gate.propose(openaiCall('call_1', 'charge', validCharge));
    });
    const user = userEvent.setup();
    await user.click(screen.getByRole('button', { name: 'Approve' }));
    await user.click(screen.getByRole('textbox', { name: 'Message' }));
    await act(() => shop.pay('call_1', { charged: 1250 }));
    expect(screen.getByRole('textbox', { name: 'Message' })).toHaveFocus();
    view.unmount();
  });
});

describe('<ToolCallStatus> never renders model or tool text as HTML', () => {
  it('shows a tool error that contains markup as text', async () => {
    const shop = createShop();
    const { status } = show(shop, 'call_3', () =>
      shop.gate.propose(openaiCall('call_3', 'refund', { reason: '<img src=x onerror="alert(1)">' })),
    );
    expect(status).toHaveTextContent('<img src=x onerror="alert(1)">');
    expect(status.querySelector('img')).toBeNull();
  });

  it('shows a tool name that contains markup as text', () => {
    const shop = createShop();
    const { status } = show(shop, 'call_4', () => shop.gate.propose(openaiCall('call_4', '<b>x</b>', {})));
    expect(status).toHaveTextContent('<b>x</b> Rejected');
    expect(status.querySelector('b')).toBeNull();
  });
});

describe('<ToolCallStatus> renders only text', () => {
  // What React 19 and React 18 each take for an element.
  const elementOf = (kind: string) => ({
    $$typeof: Symbol.for(kind),
    type: 'img',
    key: null,
    ref: null,
    props: { src: 'x' },
    _owner: null,
    _store: {},
  });
  const element = elementOf('react.transitional.element');
  const legacyElement = elementOf('react.element');

  it('shows a cancel reason given as an object as text, through the gate', () => {
    const shop = createShop();
    const { status } = proposeCharge(shop);
    act(() => {
      shop.gate.cancel('call_1', { code: 42 } as unknown as string);
    });
    expect(status).toHaveAttribute('data-status', 'cancelled');
    expect(status).toHaveTextContent('{"code":42}');
  });

  it('shows a deny reason given as an element-like object as text, never as an element', () => {
    const shop = createShop();
    const { status } = proposeCharge(shop);
    act(() => {
      shop.gate.deny('call_1', element as unknown as string);
    });
    expect(status).toHaveAttribute('data-reason', 'approval_denied');
    expect(status.querySelector('img')).toBeNull();
  });

  it.each([
    ['an object message', { code: 'tool_error', message: { code: 42 } }],
    ['an element-like message', { code: 'tool_error', message: element }],
    ['a React 18 element-like message', { code: 'tool_error', message: legacyElement }],
    ['issues that are not a list', { code: 'output_invalid', message: 'bad', issues: { length: 1 } }],
    [
      'an issue that is not an object',
      { code: 'output_invalid', message: 'bad', issues: [null, { path: element, message: legacyElement }] },
    ],
  ])('does not throw or render an element for a record from elsewhere with %s', (_what, reason) => {
    const shop = createShop();
    const saved = {
      ...createShop().gate.propose(openaiCall('call_x', 'add_item', { sku: 'socks' })),
      status: 'failed',
      reason,
    } as never;
    renderWithGate(shop.gate, <ToolCallStatus pressDelayMs={0} call={saved} />);
    const status = screen.getByRole('status');
    expect(status).toHaveAttribute('data-status', 'failed');
    expect(status).toHaveTextContent('add_item Failed');
    expect(status.querySelector('img')).toBeNull();
    expect(status).not.toHaveTextContent('[object Object]');
  });

  it('shows no code, name or label that is not text', () => {
    const shop = createShop();
    const saved = {
      ...createShop().gate.propose(openaiCall('call_x', 'add_item', { sku: 'socks' })),
      name: element,
      status: 'failed',
      reason: { code: element, message: 'bad' },
    } as never;
    renderWithGate(
      shop.gate,
      <ToolCallStatus pressDelayMs={0} call={saved} labels={{ failed: element as unknown as string }} />,
    );
    const status = screen.getByRole('status');
    expect(status).not.toHaveAttribute('data-reason');
    expect(status).toHaveTextContent('Tool call Failed');
    expect(status.querySelector('img')).toBeNull();
  });
});

describe('<ToolCallStatus> words', () => {
  const saved = (id: string, fields: object) =>
    ({ ...createShop().gate.propose(openaiCall(id, 'add_item', { sku: 'socks' })), ...fields }) as never;
  const labels = {
    unnamedTool: 'Outil',
    somePerson: 'quelqu’un',
    evidencePerson: 'réglé par {by}',
    wholeArguments: '(tous les arguments)',
    approvedBy: 'Approuvé par {names}',
    noApprovals: 'Aucune approbation',
    approvalsLeft: 'encore {left} sur {required}',
    overBudget: 'Hors budget : {message}',
    changedBy: 'Modifié par {by} :',
    wholeInput: '(saisie)',
    noValue: '(rien)',
  };

  it('shows every word through labels, a name or message with {braces} as it is', () => {
    const shop = createShop();
    renderWithGate(
      shop.gate,
      <>
        <ToolCallStatus
          pressDelayMs={0}
          data-testid="settled"
          labels={labels}
          call={saved('call_x', {
            evidence: { source: 'person' },
            approval: {
              required: 2,
              left: 1,
              approvedBy: [{ principal: 'ops_{names}' }],
              overBudget: { message: 'over {required} a day' },
            },
            edit: { changes: [{ path: '', from: undefined, to: 3 }] },
          })}
        />
        <ToolCallStatus
          pressDelayMs={0}
          data-testid="unnamed"
          labels={labels}
          call={saved('call_y', {
            name: undefined,
            status: 'rejected',
            reason: {
              code: 'invalid_arguments',
              message: 'bad',
              issues: [{ path: '', message: 'not an object' }],
            },
          })}
        />
        <ToolCallStatus
          pressDelayMs={0}
          data-testid="nobody"
          labels={labels}
          call={saved('call_z', { approval: { required: 3, left: 3, approvedBy: [] } })}
        />
      </>,
    );
    const settled = screen.getByTestId('settled');
    const part = (status: HTMLElement, name: string) => status.querySelector(`[data-toolgate="${name}"]`);
    expect(part(settled, 'label')).toHaveTextContent('add_item Done (réglé par quelqu’un)');
    expect(part(settled, 'approvers')?.textContent).toBe('Approuvé par ops_{names} · encore 1 sur 2');
    expect(part(settled, 'over-budget')?.textContent).toBe('Hors budget : over {required} a day');
    expect(part(settled, 'changes')?.textContent).toBe('Modifié par quelqu’un :(saisie) (rien) → 3');
    const unnamed = screen.getByTestId('unnamed');
    expect(part(unnamed, 'label')).toHaveTextContent('Outil Rejected');
    expect(part(unnamed, 'reason')?.textContent).toBe('(tous les arguments) not an object');
    expect(part(screen.getByTestId('nobody'), 'approvers')?.textContent).toBe(
      'Aucune approbation · encore 3 sur 3',
    );
  });
});

describe('<ToolCallStatus> props and parts', () => {
  it('takes the record itself and still follows the live call', async () => {
    const shop = createShop();
    const record = shop.gate.propose(openaiCall('call_1', 'charge', validCharge));
    renderWithGate(shop.gate, <ToolCallStatus pressDelayMs={0} call={record} />);
    const status = screen.getByRole('status');
    expect(status).toHaveAttribute('data-status', 'awaiting_approval');
    act(() => {
      shop.gate.approve('call_1');
    });
    expect(status).toHaveAttribute('data-status', 'executing');
  });

  it('shows a record from elsewhere (a saved transcript) that this gate does not know', () => {
    const shop = createShop();
    const saved = createShop().gate.propose(openaiCall('call_x', 'add_item', { sku: 'socks' }));
    renderWithGate(shop.gate, <ToolCallStatus pressDelayMs={0} call={saved} />);
    expect(screen.getByRole('status')).toHaveAttribute('data-status', 'committed');
    expect(screen.getByRole('status')).toHaveTextContent('add_item Done');
  });

  it('renders an empty live region, ready to announce, before the call exists', () => {
    const shop = createShop();
    renderWithGate(shop.gate, <ToolCallStatus pressDelayMs={0} id="later" />);
    const status = screen.getByRole('status');
    expect(status).not.toHaveAttribute('data-status');
    expect(status).toBeEmptyDOMElement();
  });

  it('spreads props, forwards its ref, and takes other words', () => {
    const shop = createShop();
    shop.gate.propose(openaiCall('call_1', 'charge', validCharge));
    let element: HTMLDivElement | null = null;
    renderWithGate(
      shop.gate,
      <ToolCallStatus
        pressDelayMs={0}
        id="call_1"
        className="call"
        data-testid="charge"
        labels={{ awaiting_approval: 'Waiting for you', approve: 'Allow' }}
        ref={(node) => {
          element = node;
        }}
      />,
    );
    const status = screen.getByTestId('charge');
    expect(element).toBe(status);
    expect(status).toHaveClass('call');
    expect(status).toHaveTextContent('charge Waiting for you');
    expect(within(status).getByRole('button', { name: 'Allow' })).toBeInTheDocument();
    expect(within(status).getByRole('button', { name: 'Deny' })).toBeInTheDocument();
  });

  it('composes the parts as one namespace, under their short names, and names each in the dev tools', async () => {
    const shop = createShop();
    renderWithGate(
      shop.gate,
      <Status.Root pressDelayMs={0} id="call_1">
        <Status.Label />
        <Status.Input />
        <Status.Actions />
      </Status.Root>,
    );
    act(() => {
      shop.gate.propose(openaiCall('call_1', 'charge', validCharge));
    });
    const status = screen.getByRole('status');
    expect(status).toHaveTextContent('charge Needs approval');
    await userEvent.setup().click(within(status).getByRole('button', { name: 'Approve' }));
    expect(status).toHaveAttribute('data-status', 'executing');
    expect([Status.Root, Status.Label, Status.Actions, Status.Undo].map((part) => part.displayName)).toEqual([
      'ToolCallStatus',
      'ToolCallStatusLabel',
      'ToolCallStatusActions',
      'ToolCallStatusUndo',
    ]);
  });

  it('composes the parts', async () => {
    const shop = createShop();
    renderWithGate(
      shop.gate,
      <ToolCallStatus pressDelayMs={0} id="call_1">
        <ToolCallStatusActions data-testid="actions" />
        <ToolCallStatusLabel>Pay the bill</ToolCallStatusLabel>
        <ToolCallStatusInput>
          {(input) =>
            `${(input as { amount_cents: number }).amount_cents / 100} ${(input as { currency: string }).currency}`
          }
        </ToolCallStatusInput>
        <ToolCallStatusReason data-testid="reason" />
      </ToolCallStatus>,
    );
    act(() => {
      shop.gate.propose(openaiCall('call_1', 'charge', validCharge));
    });
    const status = screen.getByRole('status');
    expect(status).toHaveTextContent(/^ApproveDenyPay the bill12.5 USD$/);
    await userEvent.setup().click(screen.getByRole('button', { name: 'Deny' }));
    expect(screen.getByTestId('reason')).toHaveAttribute('data-code', 'approval_denied');
    expect(screen.queryByTestId('actions')).toBeNull();
  });

  it('throws a clear error for a part outside <ToolCallStatus>', () => {
    const shop = createShop();
    expect(() => quietly(() => renderWithGate(shop.gate, <ToolCallStatusLabel />))).toThrow(
      '`<ToolCallStatusLabel>` must be used within `<ToolCallStatus>`.',
    );
  });

  it('throws a clear error outside <ToolGateProvider>', () => {
    expect(() => quietly(() => render(<ToolCallStatus pressDelayMs={0} id="call_1" />))).toThrow(
      '`ToolCallStatus` must be used within `<ToolGateProvider gate={gate}>`',
    );
  });
});

describe('<ToolCallStatus>: Approve binds what is shown', () => {
  it('shows the input of the very record Approve sends, by default, as JSON', () => {
    const shop = createShop();
    const { status } = proposeCharge(shop);
    const shown = status.querySelector('[data-toolgate="input"]');
    expect(shown?.textContent).toBe(JSON.stringify(shop.gate.get('call_1')?.input, null, 2));
    expect(shown).toHaveAttribute('aria-live', 'off');
  });

  it("hands your own view the record's input object itself", () => {
    const shop = createShop();
    const seen: unknown[] = [];
    renderWithGate(
      shop.gate,
      <ToolCallStatus pressDelayMs={0} id="call_1">
        <ToolCallStatusInput>
          {(input) => (seen.push(input), `Pay ${(input as { amount_cents: number }).amount_cents} cents`)}
        </ToolCallStatusInput>
        <ToolCallStatusActions />
      </ToolCallStatus>,
    );
    act(() => {
      shop.gate.propose(openaiCall('call_1', 'charge', validCharge));
    });
    expect(screen.getByRole('status')).toHaveTextContent('Pay 1250 cents');
    expect(seen.at(-1)).toBe(shop.gate.get('call_1')?.input);
    expect(screen.getByRole('button', { name: 'Approve' })).not.toHaveAttribute('aria-disabled');
  });

  it('keeps Approve and Deny disabled, and pressing them does nothing, when no <ToolCallStatusInput> shows the input', async () => {
    const shop = createShop();
    renderWithGate(
      shop.gate,
      <>
        <pre>{JSON.stringify({ amount_cents: 1, currency: 'USD' })}</pre>
        <ToolCallStatus pressDelayMs={0} id="call_1">
          <ToolCallStatusLabel />
          <ToolCallStatusActions />
        </ToolCallStatus>
      </>,
    );
    act(() => {
      shop.gate.propose(openaiCall('call_1', 'charge', validCharge));
    });
    const approve = screen.getByRole('button', { name: 'Approve' });
    expect(approve).toHaveAttribute('aria-disabled', 'true');
    expect(screen.getByRole('button', { name: 'Deny' })).toHaveAttribute('aria-disabled', 'true');
    await userEvent.setup().click(approve);
    expect(screen.getByRole('status')).toHaveAttribute('data-status', 'awaiting_approval');
    expect(shop.runs.charge).toBe(0);
  });

  it('ignores a press in the first 500 ms after a button appears or changes (Enter and Space arrive as the same click)', () => {
    vi.useFakeTimers();
    try {
      const shop = createShop();
      renderWithGate(shop.gate, <ToolCallStatus id="call_1" />);
      act(() => {
        shop.gate.propose(openaiCall('call_1', 'charge', validCharge));
      });
      const call = screen.getByRole('status');
      const approve = within(call).getByRole('button', { name: 'Approve' });
      expect(approve).toHaveAttribute('aria-disabled', 'true');
      act(() => approve.click());
      act(() => {
        vi.advanceTimersByTime(499);
      });
      act(() => approve.click());
      expect(call).toHaveAttribute('data-status', 'awaiting_approval');
      act(() => {
        vi.advanceTimersByTime(1);
      });
      expect(approve).not.toHaveAttribute('aria-disabled');
      act(() => approve.click());
      expect(call).toHaveAttribute('data-status', 'executing');
      // Cancel took Approve's place: for 500 ms it ignores a press too, and focus is not on it.
      const cancelButton = within(call).getByRole('button', { name: 'Cancel' });
      expect(cancelButton).not.toHaveFocus();
      act(() => cancelButton.click());
      expect(call).toHaveAttribute('data-status', 'executing');
      act(() => {
        vi.advanceTimersByTime(500);
      });
      act(() => cancelButton.click());
      expect(call).toHaveAttribute('data-status', 'cancelled');
      expect(shop.store.getState()).toEqual(initial);
    } finally {
      vi.useRealTimers();
    }
  });
});
