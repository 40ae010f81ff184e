import type { SettledCall, ToolCallRecord } from '@toolgate/core';

/**
 * The conversation as the page shows it. The server's loop writes it; the page mirrors it from
 * the chat's event stream (a whole snapshot, then the entries that changed).
 */
export type TranscriptEntry =
  | { readonly kind: 'user'; readonly key: string; readonly text: string }
  | {
      readonly kind: 'assistant';
      readonly key: string;
      readonly text: string;
      /** The turn's calls, by the gate's id for them. */
      readonly callIds: readonly string[];
      /** Each call's arguments exactly as the model sent them, once the turn has streamed. */
      readonly sent?: Readonly<Record<string, string>>;
      /** The id the model gave each call, where it differs from the gate's. */
      readonly modelIds?: Readonly<Record<string, string>>;
      /** Each call's tool name, as soon as the model has named it. */
      readonly names?: Readonly<Record<string, string>>;
      /** While the turn streams: each open call's arguments so far, read as far as they go. */
      readonly previews?: Readonly<Record<string, string>>;
      /**
       * Calls that ended before they reached a gate the page mirrors (the visitor stopped the model
       * while it wrote them): their records, since neither the ledger nor the page's gate has them.
       */
      readonly ended?: Readonly<Record<string, ToolCallRecord>>;
      /**
       * The calls that run in the page, with their arguments: the page's own gate runs them. Once
       * the page has answered, `settled` is the record the model was answered with: a page that
       * loads the transcript shows it, and runs the call no more.
       */
      readonly pageCalls?: Readonly<Record<string, PageCallEntry>>;
      readonly streaming: boolean;
    }
  | {
      readonly kind: 'notice';
      readonly key: string;
      readonly tone: 'guard' | 'stop' | 'error';
      readonly text: string;
    };

/** A call handed to the page, as the transcript keeps it. */
export interface PageCallEntry {
  readonly name: string;
  readonly arguments: string;
  readonly settled?: SettledCall;
}

export type AssistantEntry = Extract<TranscriptEntry, { kind: 'assistant' }>;

export interface TranscriptState {
  readonly entries: readonly TranscriptEntry[];
  /** True from the visitor's message until the model's last turn of the exchange is in. */
  readonly busy: boolean;
}

/** How a chat's model is reached: the offline scripted model, or the visitor's own endpoint. */
export type ChatMode = 'scripted' | 'remote';

/** How the scripted model and the shop's pretend back end are paced. `instant` is for tests. */
export type Pace = 'realistic' | 'instant';

/** What the page loads for its conversation. */
export interface ChatView {
  readonly id: string;
  readonly pace: Pace;
  readonly mode: ChatMode;
  /** Which model answers, for the header. */
  readonly modelLabel: string;
  readonly transcript: TranscriptState;
}

/** The longest message the playground's server takes, in UTF-16 code units (JavaScript's `length`), after trimming. */
export const MESSAGE_LIMIT = 4000;
