// @vitest-environment jsdom
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ToolCallStatus, toolgateSendAutomaticallyWhen } from '../src/react/index.ts';

afterEach(cleanup);

const waiting = {
  id: 'call_1',
  name: 'transfer',
  status: 'awaiting_approval',
  input: { to: 'acct_bob', amount_cents: 1250 },
  history: [
    { status: 'pending', at: 1 },
    { status: 'validated', at: 2 },
    { status: 'awaiting_approval', at: 3 },
  ],
};
const rejected = {
  id: 'call_1',
  name: 'transfer',
  status: 'rejected',
  reason: {
    code: 'invalid_arguments',
    message: 'invalid arguments',
    issues: [{ path: '/amount_cents', message: 'must be integer' }],
  },
  history: [
    { status: 'pending', at: 1 },
    { status: 'rejected', at: 2 },
  ],
};
const data = (record: unknown, refusal?: unknown) => ({
  type: 'data-toolgate',
  id: 'call_1',
  data: refusal === undefined ? { record } : { record, refusal },
});
const part = (state: string, approved?: boolean) => ({
  type: 'tool-transfer',
  toolCallId: 'call_1',
  state,
  approval: { id: 'approval_1', ...(approved === undefined ? {} : { approved }) },
});

function show(toolPart: ReturnType<typeof part>, parts: unknown[]) {
  const addToolApprovalResponse = vi.fn();
  const chat = { messages: [{ parts: [toolPart, ...parts] }], addToolApprovalResponse };
  const { container } = render(<ToolCallStatus pressDelayMs={0} part={toolPart} chat={chat} />);
  return { root: container.querySelector('[data-toolgate="call"]') as HTMLElement, addToolApprovalResponse };
}

describe('<ToolCallStatus> for a useChat tool part', () => {
  it("shows the ledger's status, and its Approve and Deny answer through addToolApprovalResponse", () => {
    const { root, addToolApprovalResponse } = show(part('approval-requested'), [data(waiting)]);
    expect(root.dataset['status']).toBe('awaiting_approval');
    fireEvent.click(screen.getByRole('button', { name: 'Approve' }));
    expect(addToolApprovalResponse).toHaveBeenLastCalledWith({ id: 'approval_1', approved: true });
    fireEvent.click(screen.getByRole('button', { name: 'Deny' }));
    expect(addToolApprovalResponse).toHaveBeenLastCalledWith({ id: 'approval_1', approved: false });
  });

  it('shows the answer on its way once useChat has it, with no buttons', () => {
    const { root } = show(part('approval-responded', true), [data(waiting)]);
    expect(root.dataset['request']).toBe('sending');
    expect(screen.queryByRole('button')).toBeNull();
  });

  it('shows a refused approval with its code and what the person can do now, never swallowed', () => {
    const { root } = show(part('approval-responded', true), [
      data(waiting, {
        action: 'approve',
        code: 'stale',
        message: 'the approval names other arguments than the call holds',
      }),
    ]);
    const refusal = root.querySelector('[data-toolgate="refusal"]') as HTMLElement;
    expect(refusal.dataset['code']).toBe('stale');
    expect(refusal.textContent).toBe(
      'Not approved: the input changed since you saw it. Review the input shown now, then decide again.',
    );
  });

  it('offers Approve and Deny again once the refused part is asked again, and shows a new press on its way', () => {
    const refusal = {
      action: 'approve',
      code: 'stale',
      message: 'other arguments',
      approvalId: 'approval_1',
    };
    const asked = { ...part('approval-requested'), approval: { id: 'approval_2' } };
    const { root, addToolApprovalResponse } = show(asked, [data(waiting, refusal)]);
    expect(root.querySelector('[data-toolgate="refusal"]')?.getAttribute('data-code')).toBe('stale');
    fireEvent.click(screen.getByRole('button', { name: 'Approve' }));
    expect(addToolApprovalResponse).toHaveBeenLastCalledWith({ id: 'approval_2', approved: true });
    cleanup();

    const pressed = { ...part('approval-responded'), approval: { id: 'approval_2', approved: true } };
    expect(show(pressed, [data(waiting, refusal)]).root.dataset['request']).toBe('sending');
  });

  it('shows each offending path of a rejected call, from the latest record of it in any message', () => {
    const toolPart = part('output-error');
    const chat = {
      messages: [{ parts: [toolPart, data(waiting)] }, { parts: [data(rejected)] }],
      addToolApprovalResponse: vi.fn(),
    };
    const { container } = render(<ToolCallStatus pressDelayMs={0} part={toolPart} chat={chat} />);
    const root = container.querySelector('[data-toolgate="call"]') as HTMLElement;
    expect(root.dataset['status']).toBe('rejected');
    expect(root.dataset['reason']).toBe('invalid_arguments');
    expect(root.querySelector('[data-toolgate="reason"] li')?.textContent).toBe(
      '/amount_cents must be integer',
    );
  });

  it('ignores data parts that carry no record, and shows nothing until one comes', () => {
    const { root } = show(part('input-available'), [
      { type: 'data-toolgate', id: 'call_1', data: { record: 'forged' } },
      { type: 'data-toolgate', id: 'call_1' },
    ]);
    expect(root.dataset['status']).toBeUndefined();
    expect(root.textContent).toBe('');
  });

  it("sends a new answer to a refused call on its own, as useChat sends a last step's answers, and nothing else", () => {
    const refusal = {
      action: 'approve',
      code: 'stale',
      message: 'other arguments',
      approvalId: 'approval_1',
    };
    const later = [{ type: 'step-start' }, { type: 'text', text: 'It still waits for you.' }];
    const message = (toolPart: unknown) =>
      [{ id: 'a_1', role: 'assistant', parts: [toolPart, data(waiting, refusal), ...later] }] as never;
    const pressed = { ...part('approval-responded'), approval: { id: 'approval_2', approved: true } };
    expect(toolgateSendAutomaticallyWhen({ messages: message(pressed) })).toBe(true);
    // The refused answer itself, and a part still asking, send nothing.
    const refused = { ...pressed, approval: { id: 'approval_1', approved: true } };
    expect(toolgateSendAutomaticallyWhen({ messages: message(refused) })).toBe(false);
    const asking = { ...part('approval-requested'), approval: { id: 'approval_2' } };
    expect(toolgateSendAutomaticallyWhen({ messages: message(asking) })).toBe(false);
  });
});
