import type { ToolCallRecord, ToolDefinition } from '@toolgate/core';
import type { ServerGate } from '@toolgate/server';
import {
  createUIMessageStream,
  createUIMessageStreamResponse,
  type UIMessage,
  type UIMessageChunk,
  type UIMessageStreamWriter,
} from 'ai';
import type { ChatState } from './chat-state.ts';
import {
  dataChunk,
  type ToolgateDataChunk,
  type ToolgatePartChunk,
  type ToolgateRefusal,
  type ToolgateWriter,
} from './data-part.ts';
import { answerHistory } from './history.ts';
import { outcomeTextOf, toolErrorText } from './outcome-error.ts';
import { sessionView } from './session-view.ts';
import { buildToolSet, type ToolgateToolSet } from './tool-set.ts';

/**
 * What {@link toolgateChat} takes: the conversation, the authenticated user the model acts for,
 * and optionally the UI message stream writer to put each call's record in.
 *
 * @example
 * const options: ToolgateChatOptions = { session: body.id, principal: user.id };
 */
export interface ToolgateChatOptions {
  /** The conversation (useChat's chat id is a good one); its first call's principal owns it. */
  readonly session: string;
  /** The authenticated user, from your session cookie or token, never from the request body. */
  readonly principal: string;
  /**
   * Where to write each call's record as a `data-toolgate` part while the request runs: the
   * `writer` of `createUIMessageStream`. Without one, the parts wait for
   * `chat.toUIMessageStream(result)` (or `chat.toUIMessageStreamResponse(result)`), if you use it.
   */
  readonly writer?: ToolgateWriter;
}

/**
 * The streamText result `chat.toUIMessageStream` takes: anything with `toUIMessageStream`.
 *
 * @example
 * const result: UIMessageStreamSource = streamText({ model, tools: chat.tools, messages });
 */
export interface UIMessageStreamSource {
  toUIMessageStream(options?: { onError?: (error: unknown) => string }): ReadableStream<UIMessageChunk>;
}

/**
 * One chat request's view of the server gate: the tools for `streamText`, the history answered by
 * the ledger, and the UI stream with toolgate's data parts.
 *
 * @example
 * const chat: ToolgateChat<typeof serverGate.tools> = toolgateChat(serverGate, { session, principal });
 */
export interface ToolgateChat<
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each tool has its own input and output
  Tools extends readonly ToolDefinition<any, any, any>[] = readonly ToolDefinition<any, any, any>[],
> {
  /**
   * An AI SDK `ToolSet` of the gate's tools: each one's description and input schema for the model,
   * `needsApproval` asking the ledger (which proposes the call there), and `execute` answering what
   * the ledger ran: the output once committed, or a {@link ToolCallOutcomeError} with the reason.
   */
  readonly tools: ToolgateToolSet<Tools>;
  /**
   * Applies each tool part's approval response (`addToolApprovalResponse`) to the ledger, bound to
   * the hash of the input that part shows (another input is refused `stale`, and nothing runs),
   * then answers the messages with every tool part as the ledger has it: its input, its output or
   * the reason it has none. Parts of calls this session does not hold are left out. What the
   * client sent as inputs, outputs and approvals is never used as such. Rejects with a TypeError
   * when `messages` is not an array or carries approvals streamText signed (remove
   * `experimental_toolApprovalSecret` from it; nothing is applied), and with a `LedgerError` when
   * the ledger can't be reached.
   */
  readonly messages: <M extends UIMessage>(messages: readonly M[]) => Promise<M[]>;
  /**
   * `result.toUIMessageStream()` with toolgate's `data-toolgate` parts merged in, and tool errors
   * shown with toolgate's reason (other errors stay masked).
   */
  readonly toUIMessageStream: (result: UIMessageStreamSource) => ReadableStream<UIMessageChunk>;
  /** `toUIMessageStream` as a streaming `Response`, as `result.toUIMessageStreamResponse()` answers. */
  readonly toUIMessageStreamResponse: (result: UIMessageStreamSource, init?: ResponseInit) => Response;
}

/**
 * Puts a server gate under an AI SDK chat: `streamText` keeps its loop, `useChat` and its own
 * approval buttons keep working, and every call is proposed, approved, run (once) and recorded by
 * the ledger. Make one per request, with the principal your authentication says.
 *
 * @example
 * const chat = toolgateChat(serverGate, { session: body.id, principal: user.id });
 * const result = streamText({
 *   model,
 *   tools: chat.tools,
 *   messages: await convertToModelMessages(await chat.messages(body.messages)),
 *   stopWhen: stepCountIs(5),
 * });
 * return chat.toUIMessageStreamResponse(result);
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each tool has its own input and output
export function toolgateChat<const Tools extends readonly ToolDefinition<any, any, any>[]>(
  serverGate: ServerGate<Tools>,
  options: ToolgateChatOptions,
): ToolgateChat<Tools> {
  const { session, principal, writer } = checked(options);
  const queued: (ToolgateDataChunk | ToolgatePartChunk)[] = [];
  let sink: ToolgateWriter | undefined = writer;
  const write = (chunk: ToolgateDataChunk | ToolgatePartChunk): void => {
    if (sink === undefined) queued.push(chunk);
    else sink.write(chunk);
  };
  const state: ChatState = {
    gate: serverGate,
    session,
    principal,
    view: sessionView(serverGate, session, principal),
    known: new Map(),
    approved: new Set(),
    history: undefined,
    emit(record: ToolCallRecord, refusal?: ToolgateRefusal) {
      write(dataChunk(record, refusal));
    },
    askAgain(id: string) {
      write({ type: 'tool-approval-request', toolCallId: id, approvalId: `toolgate-${crypto.randomUUID()}` });
    },
    showOutcome(record: ToolCallRecord) {
      write(outcomeChunk(record));
    },
  };

  function toUIMessageStream(result: UIMessageStreamSource): ReadableStream<UIMessageChunk> {
    if (typeof result?.toUIMessageStream !== 'function') {
      throw new TypeError(
        'chat.toUIMessageStream: pass the result of streamText (it has toUIMessageStream()).',
      );
    }
    return createUIMessageStream({
      onError: toolErrorText,
      // The last message, when it is the assistant's, is the one this response continues.
      ...(state.history === undefined ? {} : { originalMessages: state.history as UIMessage[] }),
      execute({ writer: stream }: { writer: UIMessageStreamWriter }) {
        const previous = sink;
        sink = { write: (chunk) => (previous?.write(chunk), stream.write(chunk)) };
        for (const chunk of queued.splice(0)) stream.write(chunk);
        stream.merge(result.toUIMessageStream({ onError: toolErrorText }));
      },
    });
  }

  return {
    tools: buildToolSet(state) as ToolgateToolSet<Tools>,
    messages: async <M extends UIMessage>(messages: readonly M[]) =>
      (await answerHistory(state, messages)) as M[],
    toUIMessageStream,
    toUIMessageStreamResponse: (result, init) =>
      createUIMessageStreamResponse({ stream: toUIMessageStream(result), ...init }),
  };
}

function checked(options: ToolgateChatOptions): ToolgateChatOptions {
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(
      'toolgateChat: pass { session, principal }: the conversation and the authenticated user the model acts for.',
    );
  }
  if (typeof options.session !== 'string' || options.session === '')
    throw new TypeError('toolgateChat: `session` must be a non-empty string (the conversation id).');
  if (typeof options.principal !== 'string' || options.principal === '') {
    throw new TypeError(
      'toolgateChat: `principal` must be a non-empty string (the authenticated user the model acts for).',
    );
  }
  if (options.writer !== undefined && typeof options.writer?.write !== 'function') {
    throw new TypeError(
      'toolgateChat: `writer` must be a UI message stream writer (the `writer` createUIMessageStream gives `execute`).',
    );
  }
  return options;
}

/** The chunk that shows an ended call's outcome in its useChat tool part. */
function outcomeChunk(record: ToolCallRecord): ToolgatePartChunk {
  if (record.status === 'committed')
    return { type: 'tool-output-available', toolCallId: record.id, output: record.output };
  if (record.status === 'cancelled' && record.reason.code === 'approval_denied')
    return { type: 'tool-output-denied', toolCallId: record.id };
  return { type: 'tool-output-error', toolCallId: record.id, errorText: outcomeTextOf(record) };
}
