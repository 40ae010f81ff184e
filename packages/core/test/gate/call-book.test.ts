/** The browser gate's records: batching, retention, and the order subscribers are told in. */
import { describe, expect, it, vi } from 'vitest';
import { createAuditLog } from '../../src/gate/audit.ts';
import { createCallBook } from '../../src/gate/call-book.ts';
import { createDelivery } from '../../src/gate/listeners.ts';
import { createPending, transition, type CallEvent } from '../../src/call/machine.ts';
import type { SettledCall, ToolCallRecord } from '../../src/record/record.ts';

function bookOf(retain = Infinity) {
  const delivery = createDelivery();
  const onError = vi.fn();
  const audit = createAuditLog(Infinity, onError, delivery);
  const settled: SettledCall[] = [];
  const book = createCallBook({ retain, audit, delivery, onError, onSettled: (call) => settled.push(call) });
  const open = (id: string): ToolCallRecord => {
    const record = createPending({
      id,
      name: 'charge',
      source: 'normalised',
      generatedId: false,
      turn: undefined,
      at: 1,
    });
    book.write(record, undefined);
    return record;
  };
  const move = (id: string, event: CallEvent): ToolCallRecord => {
    const current = book.get(id);
    const next = current && transition(current, event, 2);
    if (next === undefined) throw new Error(`cannot ${event.type} ${id}`);
    book.write(next, current);
    return next;
  };
  const commit = (id: string) => {
    move(id, { type: 'validate', input: { amount: 1 } });
    move(id, { type: 'execute' });
    return move(id, { type: 'commit', output: 'ok' });
  };
  return { book, audit, settled, open, move, commit, onError };
}

describe('call book', () => {
  it('tells subscribers once per batch, naming each call that moved once, while the audit log gets every move', () => {
    const { book, audit, open, commit } = bookOf();
    const updates: (readonly string[])[] = [];
    book.calls.subscribe((state) => updates.push(state.changed));
    book.batch(() => {
      open('a');
      commit('a');
      open('b');
    });
    expect(updates).toEqual([['a', 'b']]);
    expect(audit.export().map((event) => `${event.callId}:${event.to}`)).toEqual([
      'a:pending',
      'a:validated',
      'a:executing',
      'a:committed',
      'b:pending',
    ]);
  });

  it('publishes each write at once outside a batch, and nested batches publish when the outer one ends', () => {
    const { book, open, move } = bookOf();
    const versions: number[] = [];
    book.calls.subscribe((state) => versions.push(state.version));
    open('a');
    book.batch(() => {
      book.batch(() => move('a', { type: 'validate', input: {} }));
      expect(versions).toEqual([1]);
      move('a', { type: 'execute' });
    });
    expect(versions).toEqual([1, 2]);
    expect(book.get('a')?.status).toBe('executing');
  });

  it('audits a preview of a pending call as no transition', () => {
    const { book, audit, open, move } = bookOf();
    open('a');
    move('a', { type: 'preview', preview: { amount: 1 } });
    expect(audit.export()).toHaveLength(1);
    expect(book.get('a')?.preview).toEqual({ amount: 1 });
  });

  it('keeps only `retain` settled calls in full: an older one answers a stub without input or output, and is never lost', () => {
    const { book, open, commit } = bookOf(1);
    open('a');
    open('b');
    commit('a');
    expect(book.get('a')?.status).toBe('committed');
    const updates: (readonly string[])[] = [];
    book.calls.subscribe((state) => updates.push(state.changed));
    commit('b');
    expect(book.get('a')).toBeUndefined();
    expect(book.lookup('a')).toMatchObject({
      id: 'a',
      status: 'committed',
      input: undefined,
      output: undefined,
      evicted: true,
    });
    expect(Object.isFrozen(book.lookup('a'))).toBe(true);
    expect([...book.calls.getState().records.keys()]).toEqual(['b']);
    expect(updates.at(-1)).toEqual(['a', 'b']);
  });

  it('tells `onSettled` of a terminal call once, after its record is kept, and outside a batch after subscribers saw it', () => {
    const { book, settled, open, commit } = bookOf();
    const settledWhenSeen: number[] = [];
    book.calls.subscribe((state) => {
      if (state.records.get('a')?.status === 'committed') settledWhenSeen.push(settled.length);
    });
    open('a');
    commit('a');
    expect(settledWhenSeen).toEqual([0]);
    expect(settled.map((call) => [call.id, call.status])).toEqual([['a', 'committed']]);
    expect(book.get('a')).toBe(settled[0]);
  });

  it('tells a per-call subscriber only of its own call', () => {
    const { book, open, move } = bookOf();
    const told = vi.fn();
    book.subscribeCall('b', told);
    open('a');
    move('a', { type: 'validate', input: {} });
    expect(told).not.toHaveBeenCalled();
    open('b');
    expect(told).toHaveBeenCalledTimes(1);
  });
});
