import type { StoreApi } from 'zustand/vanilla';
import type { CallEvent } from '../call/machine.ts';
import type { Evidence, ToolCallRecord, ToolCallStatus } from '../record/record.ts';
import { partialStateProblem } from '../call/partial-state.ts';
import { messageOf } from '../record/text.ts';
import { emptyListOf } from './empty-list.ts';
import type { ToolDefinition } from '../tool/tool.ts';

/**
 * The one step that writes the app's store: a verified output goes in with one `setState`, then
 * the call moves to `committed`, so the call is `committed` exactly when its change is in the store.
 *
 * @example
 * const storeCommit = createStoreCommit({ store, move, status: (id) => book.get(id)?.status, onError });
 * storeCommit.commit(call.id, tool, call.input, output);
 */
export interface StoreCommit {
  /** Writes the output (when the tool has a `commit` and the gate a store) and moves the call to `committed`, or to `failed`. */
  readonly commit: (
    id: string,
    tool: ToolDefinition,
    input: unknown,
    output: unknown,
    evidence?: Omit<Evidence, 'at'>,
  ) => ToolCallRecord | undefined;
  /** Whether this call's change is being written to the store now (a cancel must be refused). */
  readonly committing: (id: string) => boolean;
}

/**
 * What the store commit needs of its gate.
 *
 * @example
 * const init: StoreCommitInit<Shop> = { store: shopStore, move, status, onError };
 */
export interface StoreCommitInit<S> {
  readonly store: StoreApi<S> | undefined;
  /** Makes one move of the call and keeps it; `undefined` when the move is not allowed. */
  readonly move: (id: string, event: CallEvent) => ToolCallRecord | undefined;
  /** The call's status now, read again after app code ran. */
  readonly status: (id: string) => ToolCallStatus | undefined;
  /** Receives a store subscriber's error once the write itself went in. */
  readonly onError: (error: unknown) => void;
}

/**
 * Creates the store commit of one gate.
 *
 * @example
 * const storeCommit = createStoreCommit({ store: undefined, move, status, onError: console.error });
 */
export function createStoreCommit<S>(init: StoreCommitInit<S>): StoreCommit {
  const { store, move, status, onError } = init;
  // A stack, not one id: a store subscriber may approve another call whose sync tool commits
  // inside this write (and an array, as a Set would grow and shrink its table on every call).
  const committing = emptyListOf('');
  const fail = (id: string, message: string) =>
    move(id, { type: 'fail', reason: { code: 'commit_error', message } });

  function commit(
    id: string,
    tool: ToolDefinition,
    input: unknown,
    output: unknown,
    evidence?: Omit<Evidence, 'at'>,
  ): ToolCallRecord | undefined {
    const committed: CallEvent =
      evidence === undefined ? { type: 'commit', output } : { type: 'commit', output, evidence };
    if (tool.commit === undefined || store === undefined) return move(id, committed);
    let partial: unknown;
    try {
      partial = tool.commit(store.getState(), output, input);
    } catch (error) {
      return fail(id, `commit threw: ${messageOf(error)}`);
    }
    const problem = partialStateProblem(partial);
    if (problem !== undefined) return fail(id, problem);
    // `commit` is app code: it may have cancelled the call itself.
    if (status(id) !== 'executing') return undefined;
    // From here the store is written: a cancel of this call is refused until the call is
    // `committed`, so the record can never say `cancelled` about a change the store holds.
    committing.push(id);
    try {
      const before = store.getState();
      try {
        store.setState(partial as Partial<S>);
      } catch (error) {
        // A store's state is a new object after each write (Zustand's is): the same object means
        // the write never happened (a refusing store, a getter on the partial that threw), and the
        // call did not commit. A new one means a subscriber threw after it: that is the app's bug.
        if (store.getState() === before) return fail(id, `the store refused the write: ${messageOf(error)}`);
        onError(error);
      }
      return move(id, committed);
    } finally {
      committing.pop();
    }
  }

  return { commit, committing: (id) => committing.includes(id) };
}
