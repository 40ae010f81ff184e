/** The one write to the app's store: what it refuses, and what the call says after it. */
import { describe, expect, it, vi } from 'vitest';
import { createStore } from 'zustand/vanilla';
import { createStoreCommit } from '../../src/gate/store-commit.ts';
import type { CallEvent } from '../../src/call/machine.ts';
import type { ToolCallRecord, ToolCallStatus } from '../../src/record/record.ts';
import { defineTool, type ToolDefinition } from '../../src/index.ts';

interface Cart {
  readonly items: readonly string[];
}

function commitOf(
  commit: (state: Cart, output: string) => unknown,
  store = createStore<Cart>(() => ({ items: [] })),
) {
  const moves: CallEvent[] = [];
  let status: ToolCallStatus = 'executing';
  const onError = vi.fn();
  const move = (id: string, event: CallEvent) => {
    moves.push(event);
    status = event.type === 'commit' ? 'committed' : 'failed';
    return { id, status } as ToolCallRecord;
  };
  const storeCommit = createStoreCommit({ store, move, status: () => status, onError });
  const tool = defineTool({
    name: 'add',
    inputSchema: { type: 'object' },
    execute: () => 'sku',
    commit: (state: Cart, output: string) => commit(state, output) as Partial<Cart>,
  }) as unknown as ToolDefinition;
  return { storeCommit, store, moves, tool, onError, setStatus: (next: ToolCallStatus) => (status = next) };
}

describe('store commit', () => {
  it('writes the partial state with one setState, then commits the call with its output', () => {
    const { storeCommit, store, moves, tool } = commitOf((state, output) => ({
      items: [...state.items, output],
    }));
    const writes = vi.fn();
    store.subscribe(writes);
    expect(storeCommit.commit('a', tool, {}, 'sku')?.status).toBe('committed');
    expect(store.getState().items).toEqual(['sku']);
    expect(writes).toHaveBeenCalledTimes(1);
    expect(moves).toEqual([{ type: 'commit', output: 'sku' }]);
  });

  it('commits without a store write when the tool has no commit', () => {
    const { storeCommit, moves } = commitOf(() => ({}));
    const plain = defineTool({
      name: 'look',
      inputSchema: { type: 'object' },
      execute: () => 1,
    }) as unknown as ToolDefinition;
    storeCommit.commit('a', plain, {}, 1);
    expect(moves).toEqual([{ type: 'commit', output: 1 }]);
  });

  it.each([
    ['an array', () => [1], 'not an array'],
    ['a Map', () => new Map(), 'not a Map'],
    ['a number', () => 3, 'not a number'],
    ['null', () => null, 'not null'],
    [
      'a throw',
      () => {
        throw new Error('no stock');
      },
      'commit threw: no stock',
    ],
  ])(
    'fails the call with commit_error when commit answers %s, and leaves the store as it was',
    (_what, answer, message) => {
      const { storeCommit, store, moves, tool } = commitOf(answer);
      const before = store.getState();
      expect(storeCommit.commit('a', tool, {}, 'sku')?.status).toBe('failed');
      expect(store.getState()).toBe(before);
      expect(moves).toHaveLength(1);
      expect(moves[0]).toMatchObject({ type: 'fail', reason: { code: 'commit_error' } });
      expect((moves[0] as { reason: { message: string } }).reason.message).toContain(message);
    },
  );

  it('fails the call when the store refuses the write', () => {
    const store = createStore<Cart>(() => ({ items: [] }));
    store.setState = () => {
      throw new Error('read-only');
    };
    const { storeCommit, moves, tool } = commitOf(() => ({ items: ['x'] }), store);
    storeCommit.commit('a', tool, {}, 'sku');
    expect(moves).toEqual([
      { type: 'fail', reason: { code: 'commit_error', message: 'the store refused the write: read-only' } },
    ]);
  });

  it('commits, and reports the error, when a store subscriber throws after the write went in', () => {
    const { storeCommit, store, moves, tool, onError } = commitOf(() => ({ items: ['x'] }));
    store.subscribe(() => {
      throw new Error('render broke');
    });
    storeCommit.commit('a', tool, {}, 'sku');
    expect(store.getState().items).toEqual(['x']);
    expect(moves).toEqual([{ type: 'commit', output: 'sku' }]);
    expect(onError).toHaveBeenCalledWith(expect.objectContaining({ message: 'render broke' }));
  });

  it('writes nothing when commit itself moved the call on', () => {
    const context = { setStatus: (_: ToolCallStatus) => {} };
    const { storeCommit, store, moves, tool, setStatus } = commitOf(() => {
      context.setStatus('cancelled');
      return { items: ['x'] };
    });
    context.setStatus = setStatus;
    expect(storeCommit.commit('a', tool, {}, 'sku')).toBeUndefined();
    expect(store.getState().items).toEqual([]);
    expect(moves).toEqual([]);
  });

  it('says the call is committing while the store is written, and not before or after', () => {
    const { storeCommit, store, tool } = commitOf(() => ({ items: ['x'] }));
    const during: boolean[] = [];
    store.subscribe(() => during.push(storeCommit.committing('a')));
    expect(storeCommit.committing('a')).toBe(false);
    storeCommit.commit('a', tool, {}, 'sku');
    expect(during).toEqual([true]);
    expect(storeCommit.committing('a')).toBe(false);
  });
});
