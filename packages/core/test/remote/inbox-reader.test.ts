/**
 * Reading a principal's inbox feed into the mirror, message by message, without a network: which
 * calls are kept, which leave, and what is dropped and reported.
 */
import { expect, it, vi } from 'vitest';
import type { ToolCallRecord } from '../../src/record/record.ts';
import { createRemoteGate } from '../../src/remote.ts';
import { createInboxReader } from '../../src/remote/inbox-reader.ts';
import { createMirror } from '../../src/remote/mirror.ts';
import { wireRecord } from '@toolgate/test-utils';

const input = { iban: 'DE02', amount_cents: 2_000_000 };

/** A call waiting for two of `asked`, approved so far by `approvedBy`. */
function waiting(id: string, asked: string[], approvedBy: string[] = []): ToolCallRecord {
  const record = wireRecord(id, 'wire', input, 'awaiting_approval');
  const votes = approvedBy.map((principal) => ({ principal, at: 1 }));
  return { ...record, approval: { required: 2, left: 2 - votes.length, approvedBy: votes, asked } };
}

function readerOf() {
  const moved: string[] = [];
  const mirror = createMirror({
    onError: () => {},
    onMoved: (id) => void moved.push(id),
    onSettled: () => {},
  });
  const onError = vi.fn();
  const reader = createInboxReader({ mirror, onError });
  const snapshot = (seq: number, calls: ToolCallRecord[], principal?: string) =>
    reader.receive({ event: 'snapshot', id: String(seq), data: JSON.stringify({ seq, calls, principal }) });
  const move = (seq: number, record: ToolCallRecord, session = 'chat_1') =>
    reader.receive({
      event: 'move',
      id: String(seq),
      data: JSON.stringify({
        event: {
          seq,
          callId: record.id,
          session,
          from: 'awaiting_approval',
          to: record.status,
          actor: 'u',
          at: 5,
        },
        record,
      }),
    });
  const ids = () => [...mirror.calls.getState().records.keys()];
  const messages = () => onError.mock.calls.map(([error]) => (error as Error).message);
  return { reader, mirror, moved, snapshot, move, ids, messages };
}

it('keeps the calls waiting for the principal, from any session, and lets go of one they approved or that ended', () => {
  const { reader, snapshot, move, ids } = readerOf();
  snapshot(3, [waiting('q1', ['manager_1', 'finance_1'])], 'manager_1');
  expect(ids()).toEqual(['q1']);
  move(4, waiting('q2', ['manager_1']), 'chat_2');
  expect(ids()).toEqual(['q1', 'q2']);
  // manager_1 approved q1; finance_1 has yet to.
  move(5, waiting('q1', ['manager_1', 'finance_1'], ['manager_1']));
  expect(ids()).toEqual(['q2']);
  move(6, wireRecord('q2', 'wire', input, 'cancelled'), 'chat_2');
  expect(ids()).toEqual([]);
  // Sent again after a reconnect: already read.
  move(4, waiting('q2', ['manager_1']), 'chat_2');
  expect(ids()).toEqual([]);
  expect(reader.seq()).toBe(6);
});

it('leaves out a call that asks someone else, and drops a snapshot that names nobody', () => {
  const { snapshot, move, ids, messages } = readerOf();
  snapshot(3, [waiting('q1', ['finance_1'])]);
  expect(ids()).toEqual([]);
  expect(messages()).toEqual([
    'toolgate inbox: dropped a feed message (id 3): snapshot 3 does not name whose inbox it is.',
  ]);
  snapshot(3, [waiting('q1', ['finance_1'])], 'manager_1');
  move(4, waiting('q3', ['finance_1']));
  expect(ids()).toEqual([]);
});

it('refuses an inbox gate without the base URL of the handler', () => {
  expect(() => createRemoteGate({ inbox: true })).toThrow(
    /`baseUrl` must be where the server mounted toolgateHandler/,
  );
});

it('tells the gate of each call that leaves, and settles whoever waits for one that ended', async () => {
  const { mirror, moved, snapshot, move } = readerOf();
  snapshot(3, [waiting('q1', ['manager_1', 'finance_1']), waiting('q2', ['manager_1'])], 'manager_1');
  const ended = mirror.settled('q2');
  // A request about q1 ends when it leaves: were it asked again, it would not show as on its way.
  move(4, waiting('q1', ['manager_1', 'finance_1'], ['manager_1']));
  move(5, wireRecord('q2', 'wire', input, 'cancelled'));
  expect(moved).toEqual(['q1', 'q2', 'q2']);
  expect(await ended).toMatchObject({ id: 'q2', status: 'cancelled' });
});
