/** How a remote gate writes the app's store: once per committed call, never for one the page loaded. */
import { describe, expect, it, vi } from 'vitest';
import { createStore } from 'zustand/vanilla';
import { defineTool, type ToolDefinition } from '../../src/index.ts';
import { createLiveCommit } from '../../src/remote/live-commit.ts';
import { wireRecord } from '@toolgate/test-utils';

interface Cart {
  readonly items: readonly string[];
}

function liveCommitOf(commit?: (state: Cart, output: string) => unknown) {
  const store = createStore<Cart>(() => ({ items: [] }));
  const tool = defineTool({
    name: 'add',
    inputSchema: { type: 'object' },
    execute: () => 'sku',
    ...(commit === undefined
      ? {}
      : { commit: (state: Cart, output: string) => commit(state, output) as Partial<Cart> }),
  }) as unknown as ToolDefinition;
  const onError = vi.fn();
  const writes = vi.fn();
  store.subscribe(writes);
  const liveCommit = createLiveCommit({
    store,
    tools: { definition: (name) => (name === 'add' ? tool : undefined) },
    onError,
  });
  const committed = (id: string, output = 'sku') => wireRecord(id, 'add', {}, 'committed', { output });
  const messages = () => onError.mock.calls.map(([error]) => (error as Error).message);
  return { liveCommit, store, writes, onError, committed, messages };
}

describe('remote live commit', () => {
  it("writes a committed call through its tool's commit in one setState, once per call id", () => {
    const { liveCommit, store, writes, committed } = liveCommitOf((state, output) => ({
      items: [...state.items, output],
    }));
    liveCommit.commit(committed('c1', 'mug'));
    liveCommit.commit(committed('c1', 'mug'));
    liveCommit.commit(committed('c2', 'pen'));
    expect(store.getState().items).toEqual(['mug', 'pen']);
    expect(writes).toHaveBeenCalledTimes(2);
  });

  it('never writes a call marked known (the page loaded it), nor one of a tool without commit or unknown here', () => {
    const { liveCommit, writes, committed } = liveCommitOf((state, output) => ({
      items: [...state.items, output],
    }));
    liveCommit.known('c1');
    liveCommit.commit(committed('c1'));
    liveCommit.commit(wireRecord('c2', 'elsewhere', {}, 'committed', { output: 'x' }));
    expect(writes).not.toHaveBeenCalled();
    const plain = liveCommitOf();
    plain.liveCommit.commit(plain.committed('c3'));
    expect(plain.writes).not.toHaveBeenCalled();
    expect(plain.onError).not.toHaveBeenCalled();
  });

  it('reports a commit that throws or answers something other than a plain object, and leaves the store as it was', () => {
    const answers: unknown[] = [[1], Promise.resolve({})];
    const { liveCommit, writes, committed, messages } = liveCommitOf(() => {
      if (answers.length === 0) throw new Error('read-only');
      return answers.shift();
    });
    liveCommit.commit(committed('c1'));
    liveCommit.commit(committed('c2'));
    liveCommit.commit(committed('c3'));
    expect(writes).not.toHaveBeenCalled();
    expect(messages()[0]).toMatch(
      /^toolgate remote: call "c1" \(add\) committed on the server, but its commit must return the partial next state as a plain object/,
    );
    expect(messages()[1]).toContain('not a Promise');
    expect(messages()[2]).toBe(
      'toolgate remote: call "c3" (add) committed on the server, but its commit threw here: read-only; the record stays committed as the server says, and the app\'s store was not changed.',
    );
  });

  it('keeps a write a store subscriber threw after, and reports the subscriber', () => {
    const { liveCommit, store, committed, onError } = liveCommitOf((state, output) => ({
      items: [...state.items, output],
    }));
    store.subscribe(() => {
      throw new Error('a broken subscriber');
    });
    liveCommit.commit(committed('c1'));
    expect(store.getState().items).toEqual(['sku']);
    expect((onError.mock.calls[0]?.[0] as Error).message).toBe('a broken subscriber');
  });
});
