import { createContinuationGuard, openaiChatReply, openaiChatTools, readOpenAIChatStream, type SettledTurn, type ToolGate } from '@toolgate/core';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { createStore, type StoreApi } from 'zustand/vanilla';
import type { ConnectedModel } from './model-connection.ts';

export type TranscriptEntry =
  | { readonly kind: 'user'; readonly key: string; readonly text: string }
  | {
      readonly kind: 'assistant';
      readonly key: string;
      readonly text: string;
      readonly callIds: readonly string[];
      /** Each call's arguments exactly as the model sent them, once the turn has streamed. */
      readonly sent?: Readonly<Record<string, string>>;
      readonly streaming: boolean;
    }
  | { readonly kind: 'notice'; readonly key: string; readonly tone: 'guard' | 'stop' | 'error'; readonly text: string };

export interface TranscriptState {
  readonly entries: readonly TranscriptEntry[];
  /** True from the visitor's message until the model's last turn of the exchange is in. */
  readonly busy: boolean;
}

export interface ChatSession {
  readonly transcript: StoreApi<TranscriptState>;
  /** Sends the visitor's message and runs the exchange: model turn, calls, replies, next turn… */
  readonly send: (text: string) => Promise<void>;
  /** Stops the exchange: the model stream is aborted and every call still open is cancelled. */
  readonly stop: () => void;
}

export const SYSTEM_PROMPT = [
  'You are the shopping assistant of Trailhead Supply, a small outdoor shop.',
  "Use the tools to act on the visitor's cart and wallet; call several at once when they are independent.",
  'Every amount is an integer number of cents: 1250 means $12.50.',
  'When a tool result says a call was rejected, cancelled or failed, read why, then correct the call or explain; never say something happened unless its tool result says so.',
].join(' ');

/**
 * One conversation with a model, framework-free. Each assistant turn is streamed through the
 * `openai` SDK; its tool calls go into the gate as they stream (the stream reader), the turn's
 * settled calls are answered with one tool message each, and the model is asked again until it
 * answers without calls or the continuation guard pauses the loop.
 */
export function createChatSession(gate: ToolGate, connected: ConnectedModel): ChatSession {
  const transcript = createStore<TranscriptState>()(() => ({ entries: [], busy: false }));
  const messages: ChatCompletionMessageParam[] = [{ role: 'system', content: SYSTEM_PROMPT }];
  // Strict mode where a tool's schema allows it; the gate checks every value either way.
  const tools = openaiChatTools(gate.tools);
  const guard = createContinuationGuard();
  let keys = 0;
  let running: AbortController | undefined;
  // A reply the guard held back; it goes to the model, with the guard's notice, before the visitor's next message.
  let heldReply: { readonly turn: SettledTurn; readonly notice: string } | undefined;

  const append = (entry: TranscriptEntry) => transcript.setState((state) => ({ entries: [...state.entries, entry] }));
  const update = (key: string, change: Partial<Extract<TranscriptEntry, { kind: 'assistant' }>>) =>
    transcript.setState((state) => ({
      entries: state.entries.map((entry) => (entry.key === key && entry.kind === 'assistant' ? { ...entry, ...change } : entry)),
    }));

  /** One assistant turn and its calls. Resolves `true` when the model should be asked again. */
  async function assistantTurn(signal: AbortSignal): Promise<boolean> {
    const key = `a${++keys}`;
    append({ kind: 'assistant', key, text: '', callIds: [], streaming: true });
    const reader = readOpenAIChatStream(gate, { signal, previewIntervalMs: 100 });
    // Stopping also cancels the calls already handed to the gate: a running tool sees its signal abort.
    const cancelOpen = () => {
      for (const call of reader.calls()) gate.cancel(call.id, 'the visitor stopped the conversation');
    };
    signal.addEventListener('abort', cancelOpen, { once: true });
    // Text and new calls reach the transcript once per frame, however fast the chunks come.
    let text = '';
    let frame: number | undefined;
    const flush = () => {
      frame = undefined;
      update(key, { text, callIds: reader.calls().map((call) => call.id) });
    };
    try {
      const stream = await connected.client.chat.completions.create(
        { model: connected.model, messages, tools, parallel_tool_calls: true, stream: true, stream_options: { include_usage: true } },
        { signal },
      );
      for await (const chunk of stream) {
        reader.push(chunk);
        const delta = chunk.choices[0]?.delta;
        if (delta?.content) text += delta.content;
        if (delta?.content || delta?.tool_calls) frame ??= requestAnimationFrame(flush);
      }
      reader.end();
    } catch (error) {
      // A turn that never finished is not answered, so none of its calls may go on to commit.
      reader.abort(signal.aborted ? 'the visitor stopped the model' : 'the model stream broke off');
      signal.removeEventListener('abort', cancelOpen);
      cancelOpen();
      throw error;
    } finally {
      if (frame !== undefined) cancelAnimationFrame(frame);
      update(key, { text, callIds: reader.calls().map((call) => call.id), streaming: false });
    }
    const message = reader.assistantMessage();
    messages.push(message);
    update(key, { sent: Object.fromEntries((message.tool_calls ?? []).map((call) => [call.id, call.function.arguments])) });
    if (reader.calls().length === 0) {
      signal.removeEventListener('abort', cancelOpen);
      return false;
    }
    const turn = await reader.settled();
    signal.removeEventListener('abort', cancelOpen);
    if (signal.aborted) {
      messages.push(...openaiChatReply(turn));
      signal.throwIfAborted();
    }
    const decision = guard.decide(turn);
    if (decision.action === 'stop') {
      heldReply = { turn, notice: decision.notice };
      append({ kind: 'notice', key: `n${++keys}`, tone: 'guard', text: `Paused: ${decision.reason.message}. Nothing more is sent to the model until you write again.` });
      return false;
    }
    messages.push(...openaiChatReply(turn));
    return true;
  }

  async function send(text: string): Promise<void> {
    if (transcript.getState().busy) return;
    const controller = new AbortController();
    running = controller;
    if (heldReply !== undefined) messages.push(...openaiChatReply(heldReply.turn, { notice: heldReply.notice }));
    heldReply = undefined;
    guard.reset();
    messages.push({ role: 'user', content: text });
    append({ kind: 'user', key: `u${++keys}`, text });
    transcript.setState({ busy: true });
    try {
      while (await assistantTurn(controller.signal));
    } catch (error) {
      append(
        controller.signal.aborted
          ? { kind: 'notice', key: `n${++keys}`, tone: 'stop', text: 'Stopped. Calls that had not finished were cancelled; nothing they would have done was committed.' }
          : { kind: 'notice', key: `n${++keys}`, tone: 'error', text: `The model could not be reached: ${error instanceof Error ? error.message : String(error)}` },
      );
    } finally {
      if (running === controller) running = undefined;
      transcript.setState({ busy: false });
    }
  }

  return {
    transcript,
    send,
    stop: () => running?.abort(new DOMException('The visitor stopped the model.', 'AbortError')),
  };
}
