/**
 * Reading a session's feed into the mirror, message by message, without a network: what is kept,
 * what is dropped and reported, what reaches the audit log and the app's store.
 */
import { describe, expect, it, vi } from 'vitest';
import type { ToolCallRecord, ToolCallStatus } from '../../src/record/record.ts';
import { createAuditLog } from '../../src/gate/audit.ts';
import { createFeedReader } from '../../src/remote/feed-reader.ts';
import { createMirror } from '../../src/remote/mirror.ts';
import { wireRecord } from '@toolgate/test-utils';

const input = { amount_cents: 1250, currency: 'USD' };

function readerOf(session = 'chat_1') {
  const mirror = createMirror({ onError: () => {}, onMoved: () => {}, onSettled: () => {} });
  const committed: string[] = [];
  const known: string[] = [];
  const onError = vi.fn();
  const audit = createAuditLog(Infinity, onError);
  const liveCommit = {
    commit: (record: ToolCallRecord) => void committed.push(record.id),
    known: (id: string) => void known.push(id),
  };
  const reader = createFeedReader({ session, mirror, liveCommit, audit, onError });
  const updates: (readonly string[])[] = [];
  mirror.calls.subscribe((state) => updates.push(state.changed));
  const snapshot = (seq: number, calls: ToolCallRecord[]) =>
    reader.receive({ event: 'snapshot', id: String(seq), data: JSON.stringify({ seq, calls }) });
  const move = (seq: number, record: ToolCallRecord, from: ToolCallStatus | null, extra: object = {}) =>
    reader.receive({
      event: 'move',
      id: String(seq),
      data: JSON.stringify({
        event: {
          seq,
          callId: record.id,
          session: 'chat_1',
          from,
          to: record.status,
          actor: 'u',
          at: 5,
          ...extra,
        },
        record,
      }),
    });
  const messages = () => onError.mock.calls.map(([error]) => (error as Error).message);
  return { reader, mirror, audit, committed, known, updates, snapshot, move, messages };
}

describe('remote feed reader', () => {
  it('takes the first snapshot as the page found things: a committed call is known, never committed into the store', () => {
    const { reader, mirror, committed, known, updates, snapshot } = readerOf();
    expect(reader.seq()).toBeUndefined();
    snapshot(4, [
      wireRecord('c1', 'charge', input, 'committed', { output: input }),
      wireRecord('c2', 'charge', input, 'awaiting_approval'),
    ]);
    expect(reader.seq()).toBe(4);
    expect(known).toEqual(['c1']);
    expect(committed).toEqual([]);
    expect(mirror.get('c2')?.status).toBe('awaiting_approval');
    expect(updates).toEqual([['c1', 'c2']]);
  });

  it('a later snapshot (a server that could not resume) replaces the calls, commits those that committed meanwhile, and an older one is ignored', () => {
    const { reader, mirror, committed, updates, snapshot } = readerOf();
    snapshot(4, [
      wireRecord('c1', 'charge', input, 'executing'),
      wireRecord('gone', 'charge', input, 'awaiting_approval'),
    ]);
    snapshot(9, [wireRecord('c1', 'charge', input, 'committed', { output: input })]);
    expect(committed).toEqual(['c1']);
    expect(mirror.get('gone')).toBeUndefined();
    expect(updates.at(-1)).toEqual(['c1', 'gone']);
    snapshot(7, [wireRecord('c1', 'charge', input, 'executing')]);
    expect(reader.seq()).toBe(9);
    expect(mirror.get('c1')?.status).toBe('committed');
  });

  it('applies each move once, in order: one sent again after a reconnect changes nothing and is not audited twice', () => {
    const { reader, mirror, audit, committed, snapshot, move } = readerOf();
    snapshot(1, [wireRecord('c1', 'charge', input, 'executing')]);
    const done = wireRecord('c1', 'charge', input, 'committed', { output: input });
    move(2, done, 'executing');
    move(2, done, 'executing');
    move(1, wireRecord('c1', 'charge', input, 'executing'), 'awaiting_approval');
    expect(committed).toEqual(['c1']);
    expect(mirror.get('c1')?.status).toBe('committed');
    expect(audit.export()).toEqual([
      { callId: 'c1', name: 'charge', from: 'executing', to: 'committed', at: 5 },
    ]);
    expect(reader.seq()).toBe(2);
  });

  it('a refusal is audited and leaves the call as it was; an approval of several or an edit changes the record only', () => {
    const { mirror, audit, snapshot, move } = readerOf();
    const waiting = wireRecord('c1', 'charge', input, 'awaiting_approval');
    snapshot(1, [waiting]);
    move(
      2,
      { ...waiting, input: { amount_cents: 1, currency: 'USD' } } as ToolCallRecord,
      'awaiting_approval',
      { reason: { code: 'stale', message: 'no' } },
    );
    expect(mirror.get('c1')).toEqual(waiting);
    const edited = { ...waiting, input: { amount_cents: 1000, currency: 'USD' } } as ToolCallRecord;
    move(3, edited, 'awaiting_approval', {
      reason: { code: 'edited', message: 'a person changed the input' },
    });
    expect(mirror.get('c1')?.input).toEqual({ amount_cents: 1000, currency: 'USD' });
    expect(audit.export().map((event) => event.reason?.code)).toEqual(['stale', 'edited']);
  });

  it('an escalation shows the principals it asked; a reminder or a notice leaves the call as it was', () => {
    const { mirror, audit, snapshot, move } = readerOf();
    const waiting = {
      ...wireRecord('c1', 'charge', input, 'awaiting_approval'),
      approval: { required: 1, approvedBy: [], left: 1, asked: ['manager_1'] },
    } as ToolCallRecord;
    snapshot(1, [waiting]);
    const escalated = {
      ...waiting,
      approval: { required: 1, approvedBy: [], left: 1, asked: ['manager_1', 'director_1'] },
    } as ToolCallRecord;
    move(2, escalated, 'awaiting_approval', {
      actor: 'toolgate:timers',
      reason: { code: 'escalated', message: 'asked "director_1" too' },
    });
    expect(mirror.get('c1')?.approval?.asked).toEqual(['manager_1', 'director_1']);
    move(3, waiting, 'awaiting_approval', {
      actor: 'toolgate:timers',
      reason: { code: 'reminded', message: 'reminded "manager_1"' },
    });
    move(4, waiting, 'awaiting_approval', {
      actor: 'toolgate:webhook',
      reason: { code: 'notice_delivered', message: 'notice delivered' },
    });
    expect(mirror.get('c1')?.approval?.asked).toEqual(['manager_1', 'director_1']);
    expect(audit.export().map((event) => event.reason?.code)).toEqual([
      'escalated',
      'reminded',
      'notice_delivered',
    ]);
  });

  it('drops and reports what it cannot trust, and reads the next good message', () => {
    const { reader, mirror, audit, committed, snapshot, move, messages } = readerOf();
    snapshot(1, [
      wireRecord('c1', 'charge', input, 'cancelled'),
      wireRecord('c2', 'charge', input, 'executing'),
    ]);
    move(2, wireRecord('c1', 'charge', input, 'committed', { output: input }), 'cancelled');
    reader.receive({
      event: 'move',
      id: '3',
      data: JSON.stringify({
        event: {
          seq: 3,
          callId: 'c2',
          session: 'chat_2',
          from: 'executing',
          to: 'failed',
          actor: 'u',
          at: 5,
        },
        record: wireRecord('c2', 'charge', input, 'failed'),
      }),
    });
    reader.receive({
      event: 'move',
      id: '9',
      data: JSON.stringify({
        event: {
          seq: 4,
          callId: 'c2',
          session: 'chat_1',
          from: 'executing',
          to: 'failed',
          actor: 'u',
          at: 5,
        },
        record: wireRecord('c2', 'charge', input, 'failed'),
      }),
    });
    reader.receive({ event: 'move', id: '5', data: '{oops' });
    reader.receive({ event: 'heartbeat-of-another-kind', id: '6', data: '{oops' });
    expect(messages()).toEqual([
      'toolgate remote: dropped event 2: call "c1" is cancelled, and a settled call never moves again.',
      'toolgate remote: dropped event 3: it is about session "chat_2", not "chat_1".',
      'toolgate remote: dropped a feed message (id 9): its id "9" is not its sequence number 4.',
      'toolgate remote: dropped a feed message (id 5): its move data is not JSON.',
    ]);
    expect(mirror.get('c1')?.status).toBe('cancelled');
    expect(committed).toEqual([]);
    expect(audit.size()).toBe(0);
    move(2, wireRecord('c2', 'charge', input, 'committed', { output: input }), 'executing');
    expect(mirror.get('c2')?.status).toBe('committed');
    expect(committed).toEqual(['c2']);
  });
});
