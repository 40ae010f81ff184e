import type { StoreApi } from 'zustand/vanilla';
import { partialStateProblem } from '../call/partial-state.ts';
import type { ToolCallRecord } from '../record/record.ts';
import { messageOf } from '../record/text.ts';
import type { RemoteTools } from './remote-tools.ts';

/**
 * How a remote gate writes the app's store: a call the server committed is brought in through its
 * tool's `commit`, in one `setState`, at most once per call id. A call the page already had when it
 * loaded (`known`) is never brought in: the page loaded that state from the app's own API.
 *
 * @example
 * const liveCommit = createLiveCommit({ store, tools, onError });
 * liveCommit.known('call_1'); // committed before the page opened the feed
 * liveCommit.commit(record); // a committed move that arrived live
 */
export interface LiveCommit {
  /** Writes a committed call's output into the store through its tool's `commit`, unless this call already was (or is `known`). */
  readonly commit: (record: ToolCallRecord) => void;
  /** Marks a call as already in the store: it is never committed here. */
  readonly known: (id: string) => void;
}

/**
 * What a live commit needs.
 *
 * @example
 * const init: LiveCommitInit<Shop> = { store: shopStore, tools, onError: console.error };
 */
export interface LiveCommitInit<S> {
  readonly store: StoreApi<S> | undefined;
  readonly tools: Pick<RemoteTools, 'definition'>;
  /** Receives a commit that could not be brought in, and a store subscriber's error. */
  readonly onError: (error: unknown) => void;
}

/**
 * Creates the live commit of one remote gate.
 *
 * @example
 * const liveCommit = createLiveCommit({ store: undefined, tools, onError });
 */
export function createLiveCommit<S>(init: LiveCommitInit<S>): LiveCommit {
  const { store, tools, onError } = init;
  // Ids whose `committed` has reached the store, or never may: a call is committed into it at most once.
  const done = new Set<string>();

  function commit(record: ToolCallRecord): void {
    if (done.has(record.id)) return;
    done.add(record.id);
    // A compensation undoes a call: its tool's `commit` is for the call's own output, never a refund's.
    if (record.compensates !== undefined) return;
    const tool = tools.definition(record.name, record.id);
    if (tool?.commit === undefined || store === undefined) return;
    const refused = (why: string, cause?: unknown) =>
      onError(
        new Error(
          `toolgate remote: call "${record.id}" (${record.name}) committed on the server, but ${why}; the record stays committed as the server says, and the app's store was not changed.`,
          cause === undefined ? undefined : { cause },
        ),
      );
    let partial: unknown;
    try {
      partial = tool.commit(store.getState(), record.output, record.input);
    } catch (error) {
      refused(`its commit threw here: ${messageOf(error)}`, error);
      return;
    }
    const problem = partialStateProblem(partial);
    if (problem !== undefined) {
      refused(`its ${problem}`);
      return;
    }
    try {
      store.setState(partial as Partial<S>);
    } catch (error) {
      // The state changed before a subscriber threw: the commit happened, the listener is the app's bug.
      onError(error);
    }
  }

  return { commit, known: (id) => void done.add(id) };
}
