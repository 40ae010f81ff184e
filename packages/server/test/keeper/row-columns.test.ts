import { createPending, transition } from '@toolgate/core/kit';
import { inputHash, type ToolCallRecord } from '@toolgate/core';
import { describe, expect, it } from 'vitest';
import { hashInput, moveEvent, rowColumns } from '../../src/keeper/row-columns.ts';

const at = 1_767_225_600_000;
const lease = { instance: 'app-1', expiresAt: at + 30_000 };

function executing(): { pending: ToolCallRecord; validated: ToolCallRecord; running: ToolCallRecord } {
  const pending = createPending({
    id: 'call_1',
    name: 'transfer',
    source: 'normalised',
    generatedId: false,
    turn: undefined,
    at,
  });
  const validated = transition(
    pending,
    { type: 'validate', input: { amount_cents: 2000, to: 'alice@example.com' } },
    at + 1,
  ) as ToolCallRecord;
  const running = transition(validated, { type: 'execute' }, at + 2) as ToolCallRecord;
  return { pending, validated, running };
}

describe('the columns of a move', () => {
  it('hash the validated input as core’s inputHash does, so an approval binds to what the browser hashed', async () => {
    const input = { to: 'alice@example.com', amount_cents: 2000 };
    expect(hashInput(input)).toBe(await inputHash(input));
    expect(hashInput({ amount_cents: 2000, to: 'alice@example.com' })).toBe(hashInput(input));
  });

  it('claim the call on executing: this instance holds the lease and the fencing token goes up by one', () => {
    const { running } = executing();
    const columns = rowColumns(running, { fence: 4, input_hash: null }, lease);
    expect(columns).toMatchObject({
      status: 'executing',
      lease_owner: 'app-1',
      lease_expires_at: at + 30_000,
      fence: 5,
      output: null,
    });
    expect(columns.input).toBe('{"amount_cents":2000,"to":"alice@example.com"}');
    expect(columns.input_hash).toBe(hashInput({ amount_cents: 2000, to: 'alice@example.com' }));
  });

  it('let go of the lease on an ending, keep the fencing token, and store the output of a commit', () => {
    const { running } = executing();
    const committed = transition(
      running,
      { type: 'commit', output: { sent: 2000 } },
      at + 3,
    ) as ToolCallRecord;
    const columns = rowColumns(committed, { fence: 5, input_hash: 'kept' }, lease);
    expect(columns).toMatchObject({
      status: 'committed',
      lease_owner: null,
      lease_expires_at: null,
      fence: 5,
      output: '{"sent":2000}',
      reason: null,
    });
  });

  it('keep the input hash a pending record does not have', () => {
    const { pending } = executing();
    expect(rowColumns(pending, { fence: 0, input_hash: 'earlier' }, lease)).toMatchObject({
      input: null,
      input_hash: 'earlier',
    });
  });

  it('make the event of a move with the reason the record gives, and none for a first write', () => {
    const { pending, validated } = executing();
    const rejected = transition(
      pending,
      { type: 'reject', reason: { code: 'invalid_arguments', message: 'amount_cents must be an integer' } },
      at + 1,
    ) as ToolCallRecord;
    expect(moveEvent('chat_1', pending, rejected, 'user_42')).toMatchObject({
      callId: 'call_1',
      session: 'chat_1',
      from: 'pending',
      to: 'rejected',
      actor: 'user_42',
      at: at + 1,
      reason: { code: 'invalid_arguments' },
    });
    const first = moveEvent('chat_1', undefined, validated, 'user_42');
    expect(first).toMatchObject({ from: null, to: 'validated' });
    expect(first).not.toHaveProperty('reason');
    expect(JSON.parse(first.record as string)).toMatchObject({ id: 'call_1', status: 'validated' });
  });
});
