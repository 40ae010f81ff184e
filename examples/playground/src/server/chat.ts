import {
  createContinuationGuard,
  heldText,
  isTerminal,
  type SettledCall,
  type SettledTurn,
  type ToolCallRecord,
  type ToolDefinition,
  type TurnReader,
} from '@toolgate/core';
import { createPending } from '@toolgate/core/kit';
import { openaiChatReply, openaiChatTools, readOpenAIChatStream } from '@toolgate/core/openai';
import type { ServerGate } from '@toolgate/server';
import { randomBytes } from 'node:crypto';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { createStore, type StoreApi } from 'zustand/vanilla';
import type {
  AssistantEntry,
  ChatMode,
  Pace,
  PageCallEntry,
  TranscriptEntry,
  TranscriptState,
} from '../chat/transcript.ts';
import { cartTotal, CATALOG, type ShopState } from '../shop/shop-store.ts';
import {
  modelFailure,
  remoteLabel,
  remoteModel,
  SCRIPTED_LABEL,
  scriptedModel,
  type ConnectedModel,
  type RemoteModel,
} from './model-connection.ts';
import { endedHere, type PageResults } from './page-calls.ts';
import type { ChatsTable, PlaygroundDb } from './playground-db.ts';
import type { ShopBook } from './shop-book.ts';
import { routeTurn } from './turn-router.ts';

export const SYSTEM_PROMPT = [
  'You are the shopping assistant of Trailhead Supply, a small outdoor shop.',
  "Use the tools to act on the visitor's cart and wallet; call several at once when they are independent.",
  'Every amount is an integer number of cents: 1250 means $12.50.',
  'When a tool result says a call was rejected, cancelled or failed, read why, then correct the call or explain; never say something happened unless its tool result says so.',
].join(' ');

/** The shop as the model is told about it with each request, so that it can compute amounts. */
export function shopSummary(state: ShopState): string {
  const lines = state.cart.map(
    (line) => `${line.quantity} × ${line.sku} (${CATALOG[line.sku].name}) at ${line.unit_cents} cents`,
  );
  return `The visitor's shop now: wallet ${state.balance_cents} cents; cart: ${lines.length === 0 ? 'empty' : lines.join(', ')}; cart total ${cartTotal(state.cart)} cents.`;
}

/** The calls of an assistant turn that the model is still owed answers for, kept across restarts. */
interface Waiting {
  readonly calls: readonly {
    readonly id: string;
    readonly modelId: string;
    readonly name: string;
    readonly inPage: boolean;
  }[];
}

/** What every chat shares: the gate, the database, the shops, the page's answers and the visitors' models. */
export interface ChatDeps {
  readonly gate: ServerGate;
  readonly store: PlaygroundDb;
  readonly book: ShopBook;
  readonly pageResults: PageResults;
  readonly serverTools: readonly ToolDefinition[];
  readonly pageTools: readonly ToolDefinition[];
  /** The visitor's own model, while this server holds it in memory. */
  readonly remoteModelOf: (principal: string) => RemoteModel | undefined;
  readonly onError: (error: unknown) => void;
}

/** One conversation, run on the server: the model's turns, the calls, the replies, the guard. */
export interface Chat {
  readonly id: string;
  readonly principal: string;
  readonly pace: Pace;
  readonly mode: ChatMode;
  readonly transcript: StoreApi<TranscriptState>;
  readonly modelLabel: () => string;
  /** Starts an exchange with the visitor's message; `false` when one is already running. */
  readonly send: (text: string) => boolean;
  /**
   * Stops the exchange: the model stream is aborted and every call still open is cancelled, with
   * `reason` (default: the visitor stopped the conversation). `false` when no exchange was running.
   */
  readonly stop: (reason?: string) => boolean;
  /** Goes on with an exchange a previous server process left waiting for its calls' answers. */
  readonly resume: () => void;
  /** Stops writing, without cancelling anything (the server is shutting down; the next one resumes). */
  readonly close: () => void;
}

/** A chat from its row. Entries a stopped process left streaming are marked as ended. */
export function loadChat(deps: ChatDeps, row: ChatsTable): Chat {
  const entries = (JSON.parse(row.entries) as TranscriptEntry[]).map((entry) =>
    entry.kind === 'assistant' && entry.streaming ? { ...entry, streaming: false } : entry,
  );
  const messages = JSON.parse(row.messages) as ChatCompletionMessageParam[];
  const held =
    row.held === null ? undefined : (JSON.parse(row.held) as { turn: SettledTurn; notice: string });
  const waiting = row.waiting === null ? undefined : (JSON.parse(row.waiting) as Waiting);
  return createChat(
    deps,
    {
      id: row.id,
      principal: row.principal,
      pace: row.pace === 'instant' ? 'instant' : 'realistic',
      mode: row.mode === 'remote' ? 'remote' : 'scripted',
    },
    { entries, messages, held, waiting },
  );
}

/** A new conversation, with a fresh shop, written to the database; `notice` opens its transcript (what became of the last chat, say). */
export async function startChat(
  deps: ChatDeps,
  init: {
    readonly principal: string;
    readonly pace: Pace;
    readonly mode: ChatMode;
    readonly notice?: string | undefined;
  },
): Promise<Chat> {
  const id = `chat_${randomBytes(9).toString('base64url')}`;
  const { notice, ...chat } = init;
  const entries: TranscriptEntry[] =
    notice === undefined ? [] : [{ kind: 'notice', key: 'n0', tone: 'stop', text: notice }];
  await deps.store.write(async (trx) => {
    await trx
      .insertInto('playground_chats')
      .values({
        id,
        principal: chat.principal,
        created_at: Date.now(),
        pace: chat.pace,
        mode: chat.mode,
        entries: JSON.stringify(entries),
        messages: '[]',
        held: null,
        waiting: null,
      })
      .execute();
    await deps.book.open(trx, id);
    await trx
      .insertInto('playground_visitors')
      .values({ principal: chat.principal, chat: id })
      .onConflict((conflict) => conflict.column('principal').doUpdateSet({ chat: id }))
      .execute();
  });
  return createChat(deps, { id, ...chat }, { entries, messages: [], held: undefined, waiting: undefined });
}

function createChat(
  deps: ChatDeps,
  info: { readonly id: string; readonly principal: string; readonly pace: Pace; readonly mode: ChatMode },
  saved: {
    entries: TranscriptEntry[];
    messages: ChatCompletionMessageParam[];
    held: { turn: SettledTurn; notice: string } | undefined;
    waiting: Waiting | undefined;
  },
): Chat {
  const { gate, store, book, pageResults } = deps;
  const transcript = createStore<TranscriptState>()(() => ({
    entries: saved.entries,
    busy: saved.waiting !== undefined,
  }));
  const messages = saved.messages;
  let held = saved.held;
  let waiting = saved.waiting;
  // Strict mode where a tool's schema allows it; the gates check every value either way.
  const tools = openaiChatTools([...deps.serverTools, ...deps.pageTools]);
  const guard = createContinuationGuard();
  let keys = saved.entries.length;
  let running: AbortController | undefined;
  /** The last stop left a call held for a person: the stop's notice says so. */
  let stoppedWithHeld = false;
  let closed = false;

  const append = (entry: TranscriptEntry) =>
    transcript.setState((state) => ({ entries: [...state.entries, entry] }));
  const update = (key: string, change: Partial<AssistantEntry>) =>
    transcript.setState((state) => ({
      entries: state.entries.map((entry) =>
        entry.key === key && entry.kind === 'assistant' ? { ...entry, ...change } : entry,
      ),
    }));
  const notice = (tone: 'guard' | 'stop' | 'error', text: string) =>
    append({ kind: 'notice', key: `n${++keys}`, tone, text });
  const setPageCall = (key: string, id: string, call: PageCallEntry) =>
    transcript.setState((state) => ({
      entries: state.entries.map((entry) =>
        entry.key === key && entry.kind === 'assistant'
          ? { ...entry, pageCalls: { ...entry.pageCalls, [id]: call } }
          : entry,
      ),
    }));
  /** The entry and record of a call handed to the page, from the transcript. */
  const pageCallOf = (id: string): { key: string; call: PageCallEntry } | undefined => {
    for (const entry of transcript.getState().entries) {
      const call = entry.kind === 'assistant' ? entry.pageCalls?.[id] : undefined;
      if (call !== undefined) return { key: entry.key, call };
    }
    return undefined;
  };
  /**
   * Writes the page's answer for a call it ran into the call's entry (and the database), so that a
   * page loaded later shows how the call ended rather than running it again, and a restarted
   * server answers the model from it rather than waiting for the page.
   */
  const keepPageResult = (call: { readonly id: string; readonly name: string }) =>
    void pageResults
      .wait(call)
      .then(async (settled) => {
        const kept = pageCallOf(call.id);
        if (kept === undefined || closed) return;
        setPageCall(kept.key, call.id, { ...kept.call, settled });
        await save();
      })
      .catch(deps.onError);

  /** Writes what a restart needs to go on: the transcript, the messages, a held reply, the calls still owed an answer. */
  async function save(): Promise<void> {
    if (closed) return;
    const { entries } = transcript.getState();
    await store.write((trx) =>
      trx
        .updateTable('playground_chats')
        .set({
          entries: JSON.stringify(entries),
          messages: JSON.stringify(messages),
          held: held === undefined ? null : JSON.stringify(held),
          waiting: waiting === undefined ? null : JSON.stringify(waiting),
        })
        .where('id', '=', info.id)
        .execute(),
    );
  }

  function connect(): ConnectedModel {
    if (info.mode === 'scripted') return scriptedModel(info.pace);
    const settings = deps.remoteModelOf(info.principal);
    if (settings === undefined) {
      throw new Error(
        'this server holds no settings for your model (it keeps the key in memory only, so a restart forgets it): enter them again under Your model',
      );
    }
    return remoteModel(settings);
  }

  /** The reply to a settled turn goes to the model, unless the continuation guard holds it back. Resolves `true` to ask the model again. */
  async function answer(settled: SettledTurn, signal: AbortSignal): Promise<boolean> {
    const turn = asTheModelSaw(settled);
    if (signal.aborted) {
      messages.push(...openaiChatReply(turn));
      waiting = undefined;
      await save();
      signal.throwIfAborted();
    }
    const decision = guard.decide(turn);
    waiting = undefined;
    if (decision.action === 'stop') {
      held = { turn, notice: decision.notice };
      notice(
        'guard',
        `Paused: ${decision.reason.message}. Nothing more is sent to the model until you write again.`,
      );
      await save();
      return false;
    }
    messages.push(...openaiChatReply(turn));
    await save();
    return true;
  }

  /**
   * One assistant turn and its calls, on a signal of its own that follows the exchange's: the
   * `openai` SDK leaves a listener on the signal of every request it makes, and an exchange makes
   * one request per turn.
   */
  async function assistantTurn(exchangeSignal: AbortSignal): Promise<boolean> {
    const own = new AbortController();
    const follow = () => own.abort(exchangeSignal.reason);
    if (exchangeSignal.aborted) follow();
    else exchangeSignal.addEventListener('abort', follow, { once: true });
    try {
      return await turnOn(own.signal);
    } finally {
      exchangeSignal.removeEventListener('abort', follow);
    }
  }

  /**
   * The turn once every call has ended. A stop ends every call it can; a call held in doubt is not
   * one of them (only a person's word ends it), so then the model is answered without waiting for
   * it: the calls that ended as they ended, the held one as an outcome nobody knows yet, and the
   * stop is thrown.
   */
  async function settledUnlessHeld(
    reader: Pick<TurnReader<unknown>, 'settled' | 'stopped'>,
    signal: AbortSignal,
    modelIds: Readonly<Record<string, string>>,
  ): Promise<SettledTurn> {
    const settled = reader.settled();
    const stopped = new Promise<undefined>((resolve) => {
      if (signal.aborted) resolve(undefined);
      else signal.addEventListener('abort', () => resolve(undefined), { once: true });
    });
    const first = await Promise.race([settled, stopped]);
    if (first !== undefined) return first;
    const records = await reader.stopped();
    if (!records.some(isHeld)) return settled;
    const ended = records.filter((record): record is SettledCall => isTerminal(record.status));
    const answered: SettledTurn = {
      turn: undefined,
      answers: ended.map((record) => ({
        id: modelIds[record.id] ?? record.id,
        name: record.name,
        generatedId: false,
        calls: [record],
      })),
    };
    messages.push(...(ended.length === 0 ? [] : openaiChatReply(asTheModelSaw(answered))));
    for (const record of records.filter(isHeld))
      messages.push({
        role: 'tool',
        tool_call_id: modelIds[record.id] ?? record.id,
        content: heldText(record) ?? '',
      });
    waiting = undefined;
    stoppedWithHeld = true;
    await save();
    throw signal.reason;
  }

  /** One assistant turn and its calls. Resolves `true` when the model should be asked again. */
  async function turnOn(signal: AbortSignal): Promise<boolean> {
    const connected = connect();
    const key = `a${++keys}`;
    append({ kind: 'assistant', key, text: '', callIds: [], streaming: true });
    const prefix = `${randomBytes(6).toString('base64url')}.`;
    const router = routeTurn({
      server: gate.turn({ session: info.id, principal: info.principal }),
      pageTools: deps.pageTools,
      pageResults,
      prefix,
      onServerCall: (id) => book.assign(id, info.id),
      onPageCall: (call) => {
        setPageCall(key, call.id, { name: call.name, arguments: call.arguments });
        keepPageResult(call);
      },
    });
    const reader = readOpenAIChatStream(router, { signal, previewIntervalMs: 100 });
    // Stopping also cancels the calls already handed to a gate: a running tool sees its signal abort.
    const cancelOpen = () => {
      for (const call of reader.calls()) router.cancel(call.id, stopReason(signal));
    };
    signal.addEventListener('abort', cancelOpen, { once: true });
    // Text and new calls reach the transcript (and the page) at most every 50 ms, however fast the chunks come.
    let text = '';
    let timer: NodeJS.Timeout | undefined;
    // Names, ids and argument previews go with the calls: the page's mirror has a call only once the ledger does.
    const calls = () => {
      const open = reader.calls();
      return {
        callIds: open.map((call) => call.id),
        names: Object.fromEntries(open.map((call) => [call.id, call.name])),
        modelIds: Object.fromEntries(open.map((call) => [call.id, router.modelIdOf(call.id) ?? call.id])),
        previews: Object.fromEntries(
          open.flatMap((call) =>
            call.status === 'pending' && call.preview !== undefined
              ? [[call.id, JSON.stringify(call.preview)]]
              : [],
          ),
        ),
      };
    };
    const flush = () => {
      timer = undefined;
      update(key, { text, ...calls() });
    };
    /**
     * Each call's arguments as the model wrote them (as far as it got), and the records of calls
     * that ended before any gate the page mirrors had them.
     */
    const asWritten = (): Partial<AssistantEntry> => {
      const argumentsOf = new Map(
        (reader.assistantMessage().tool_calls ?? []).map((call) => [call.id, call.function.arguments]),
      );
      const records = reader.calls();
      return {
        sent: Object.fromEntries(
          records.flatMap((call) => {
            const written = argumentsOf.get(router.modelIdOf(call.id) ?? call.id);
            return written === undefined ? [] : [[call.id, written]];
          }),
        ),
        ended: Object.fromEntries(
          records
            .filter((call) => isTerminal(call.status) && !router.reachedGate(call.id))
            .map((call) => [call.id, call]),
        ),
      };
    };
    let stream: Awaited<ReturnType<typeof connected.client.chat.completions.create>> | undefined;
    try {
      const state = await book.read(info.id);
      stream = await connected.client.chat.completions.create(
        {
          model: connected.model,
          messages: [{ role: 'system', content: `${SYSTEM_PROMPT}\n${shopSummary(state)}` }, ...messages],
          tools,
          parallel_tool_calls: true,
          stream: true,
          stream_options: { include_usage: true },
        },
        { signal },
      );
      for await (const chunk of stream) {
        reader.push(chunk);
        const delta = chunk.choices[0]?.delta;
        if (delta?.content) text += delta.content;
        if (delta?.content || delta?.tool_calls) timer ??= setTimeout(flush, 50);
      }
      reader.end();
    } catch (error) {
      // A turn that never finished is not answered, so none of its calls may go on to commit: the
      // visitor's stop cancels them, a broken stream rejects them as truncated (in the ledger, so
      // the page shows why), and anything already proposed is cancelled.
      // The calls still being written end here; only those already proposed need a cancel.
      const unwritten = new Set(
        reader.calls().flatMap((call) => (router.reachedGate(call.id) ? [] : [call.id])),
      );
      if (signal.aborted) reader.abort(stopReason(signal));
      else reader.fail(error);
      signal.removeEventListener('abort', cancelOpen);
      for (const call of reader.calls())
        if (!unwritten.has(call.id))
          router.cancel(call.id, 'the model stream broke off before the turn was complete');
      throw signal.aborted || stream === undefined ? error : new StreamCut(error);
    } finally {
      clearTimeout(timer);
      update(key, { text, ...calls(), previews: {}, streaming: false, ...asWritten() });
    }
    const message = reader.assistantMessage();
    messages.push(message);
    const turnCalls = reader.calls();
    const modelIds = Object.fromEntries(
      turnCalls.map((call) => [call.id, router.modelIdOf(call.id) ?? call.id]),
    );
    if (turnCalls.length === 0) {
      signal.removeEventListener('abort', cancelOpen);
      await save();
      return false;
    }
    waiting = {
      calls: turnCalls.map((call) => ({
        id: call.id,
        modelId: modelIds[call.id] ?? call.id,
        name: call.name,
        inPage: router.inPage(call.id),
      })),
    };
    await save();
    const turn = await settledUnlessHeld(reader, signal, modelIds);
    signal.removeEventListener('abort', cancelOpen);
    for (const call of turnCalls) book.release(call.id);
    return answer(turn, signal);
  }

  /** The turn a previous process left waiting: each call's answer from the ledger or the page, then the reply. */
  async function settleWaiting(owed: Waiting, signal: AbortSignal): Promise<boolean> {
    const cancelOpen = () => {
      for (const call of owed.calls) {
        if (call.inPage)
          pageResults.settle(
            endedHere(pending(call), 'cancelled', { code: 'user_cancelled', message: stopReason(signal) }),
          );
        else
          void gate
            .cancel(call.id, { principal: info.principal, reason: stopReason(signal) })
            .catch(deps.onError);
      }
    };
    signal.addEventListener('abort', cancelOpen, { once: true });
    const settled = await Promise.all(
      owed.calls.map(async (call): Promise<SettledCall> => {
        if (call.inPage) {
          const answered = pageCallOf(call.id)?.call.settled;
          if (answered !== undefined) return answered;
          keepPageResult(call);
          return pageResults.wait(call);
        }
        // A call the stream had opened but the ledger never received: nothing of it ran.
        return (
          (await gate.settled(call.id)) ??
          endedHere(pending(call), 'cancelled', {
            code: 'user_cancelled',
            message: 'the server stopped before this call was proposed; nothing was run',
          })
        );
      }),
    );
    signal.removeEventListener('abort', cancelOpen);
    const turn: SettledTurn = {
      turn: undefined,
      answers: owed.calls.map((call, index) => ({
        id: call.modelId,
        name: call.name,
        generatedId: false,
        calls: [settled[index] as SettledCall],
      })),
    };
    return answer(turn, signal);
  }

  async function exchange(first: (signal: AbortSignal) => Promise<boolean>): Promise<void> {
    const controller = new AbortController();
    running = controller;
    stoppedWithHeld = false;
    transcript.setState({ busy: true });
    try {
      if (await first(controller.signal)) while (await assistantTurn(controller.signal));
    } catch (error) {
      if (closed) return;
      if (controller.signal.aborted)
        notice(
          'stop',
          stoppedWithHeld
            ? 'Stopped. A call whose outcome nobody knows stays held for a person to settle on its card; the other calls that had not finished were cancelled.'
            : 'Stopped. Calls that had not finished were cancelled; nothing they would have done was committed.',
        );
      else if (error instanceof StreamCut)
        notice(
          'error',
          `The model’s stream was cut (${messageOf(error.cause)}). The calls it had not finished writing were not run.`,
        );
      else notice('error', modelFailure(error, info.mode === 'remote' ? 'Your model' : 'The model'));
    } finally {
      if (running === controller) running = undefined;
      if (!closed) {
        transcript.setState({ busy: false });
        await save().catch(deps.onError);
      }
    }
  }

  return {
    id: info.id,
    principal: info.principal,
    pace: info.pace,
    mode: info.mode,
    transcript,
    modelLabel: () => {
      if (info.mode === 'scripted') return SCRIPTED_LABEL;
      const settings = deps.remoteModelOf(info.principal);
      return settings === undefined ? 'Your model (not set)' : remoteLabel(settings);
    },
    send(text) {
      if (transcript.getState().busy || closed) return false;
      if (held !== undefined) messages.push(...openaiChatReply(held.turn, { notice: held.notice }));
      held = undefined;
      guard.reset();
      messages.push({ role: 'user', content: text });
      append({ kind: 'user', key: `u${++keys}`, text });
      void exchange(async (signal) => {
        await save();
        return assistantTurn(signal);
      });
      return true;
    },
    stop(reason = STOPPED) {
      if (running === undefined) return false;
      running.abort(new DOMException(reason, 'AbortError'));
      return true;
    },
    resume() {
      const owed = waiting;
      if (owed === undefined || running !== undefined) return;
      void exchange((signal) => settleWaiting(owed, signal));
    },
    close() {
      // Nothing is cancelled: the calls stay in the ledger as they are, and the next process goes on.
      closed = true;
    },
  };
}

/**
 * The turn with each call under the id the model gave it: the gate's ids carry the turn's prefix,
 * and the reply must answer the ids the model wrote.
 */
/** A running call whose outcome nobody can tell, held for a person. */
const isHeld = (call: ToolCallRecord): boolean => call.status === 'executing' && call.doubt !== undefined;

function asTheModelSaw(turn: SettledTurn): SettledTurn {
  return {
    ...turn,
    answers: turn.answers.map((entry) => {
      const [only] = entry.calls;
      return entry.calls.length === 1 && only !== undefined && only.id !== entry.id
        ? { ...entry, calls: [{ ...only, id: entry.id }] }
        : entry;
    }),
  };
}

/** The model's stream broke off after it had begun: the model was reached, and what it wrote so far is on screen. */
class StreamCut extends Error {
  constructor(cause: unknown) {
    super(`the model's stream was cut: ${messageOf(cause)}`, { cause });
  }
}

const STOPPED = 'the visitor stopped the conversation';

/** Why the exchange was stopped, as the calls it cancels are told. */
const stopReason = (signal: AbortSignal): string =>
  signal.reason instanceof Error && signal.reason.message !== '' ? signal.reason.message : STOPPED;

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

function pending(call: { readonly id: string; readonly name: string }) {
  return createPending({
    id: call.id,
    name: call.name,
    source: 'openai-chat',
    generatedId: false,
    turn: undefined,
    at: Date.now(),
  });
}
