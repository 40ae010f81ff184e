import { createToolGate, type AuditEvent, type SettledCall, type ToolGate } from '@toolgate/core';
import { createRemoteGate, type RemoteGate } from '@toolgate/core/remote';
import { showRemoteParts } from '@toolgate/react';
import { createStore, type StoreApi } from 'zustand/vanilla';
import { createPageViewStore, PAGE_TOOLS, viewAfter, type PageViewStore } from '../shop/page-tools.ts';
import { createShopStore, type ShopStore } from '../shop/shop-store.ts';
import { createShopTools, type ShopBackend } from '../shop/shop-tools.ts';
import { pause } from '../shop/tool-timing.ts';
import { actingHeaders } from './acting-as.ts';
import { api, ApiRefusal, chatEventsUrl, TOOLGATE_URL, type ChatLoad } from './api.ts';
import { watchAudit, withPageMoves, type AuditFeed } from './audit-feed.ts';
import { pageAnswers } from './page-answers.ts';
import { watchVerdict, type VerdictStore } from './state-verdict.ts';
import type { ChatMode, Pace, TranscriptEntry, TranscriptState } from './transcript.ts';

// The page runs none of the shop's tools: the server does. The mirror only calls their `commit`.
const ON_THE_SERVER = () =>
  Promise.reject(new Error('the shop’s tools run on the server; this page only mirrors their commits'));
const PAGE_SIDE: ShopBackend = {
  read: ON_THE_SERVER,
  write: ON_THE_SERVER,
  pause: ON_THE_SERVER,
  transferHoldMs: 0,
  paymentsUrl: '',
};
const SHOP_TOOLS = createShopTools(PAGE_SIDE);

/** How long a Stop waits for this tab's answers still on their way; a server that does not take them stops anyway. */
const ANSWERS_BEFORE_STOP_MS = 3_000;

/** Everything one conversation owns on the page: the mirrors of the server's gate and chat, the page's own gate, and what watches them. */
export interface Conversation {
  readonly id: string;
  readonly mode: ChatMode;
  readonly pace: Pace;
  readonly modelLabel: string;
  /** The page's copy of the shop: loaded from the server, then changed only by committed calls. */
  readonly shop: ShopStore;
  /** The mirror of the server gate: its calls, Approve / Deny / Cancel as requests. */
  readonly gate: RemoteGate;
  /** The browser's own gate, for the tools that change only this page's view. */
  readonly pageGate: ToolGate;
  readonly view: PageViewStore;
  readonly transcript: StoreApi<TranscriptState>;
  readonly verdict: VerdictStore;
  readonly audit: AuditFeed;
  /** Resolves once the server's event feed has sent its first snapshot: what commits after it reaches the shop. */
  readonly live: Promise<void>;
  /** Settles when the visitor has left this chat for a newer one (started in another tab). */
  readonly left: Promise<void>;
  readonly send: (text: string) => Promise<void>;
  readonly stop: () => void;
  /** Closes the feeds and stops every watcher; the conversation is not used again. */
  readonly dispose: () => void;
}

/**
 * Opens a conversation the server holds: the shop as loaded, the server gate's calls through
 * `createRemoteGate` (the shop changes only when a `committed` move arrives live, through the
 * tool's own `commit`), the transcript from the chat's event stream, and the page's own gate for
 * the calls the server hands to the page.
 */
export function openConversation(load: ChatLoad): Conversation {
  const { chat } = load;
  const shop = createShopStore(load.shop);
  // The server gate's calls: <ToolCallStatus> shows their connection note, refusals and the rest.
  showRemoteParts();
  const gate = createRemoteGate({
    url: TOOLGATE_URL,
    session: chat.id,
    tools: SHOP_TOOLS,
    store: shop,
    headers: actingHeaders,
  });
  const view = createPageViewStore();
  const pageGate = createToolGate({ tools: PAGE_TOOLS, store: view });
  const transcript = createStore<TranscriptState>()(() => chat.transcript);
  const live = new Promise<void>((resolve) => {
    if (gate.connection.getState().state === 'live') resolve();
    const stop = gate.connection.subscribe(({ state }) => {
      if (state !== 'live') return;
      stop();
      resolve();
    });
  });

  // Settles once the visitor has left this chat for a new one, started in another tab: the page
  // then shows that one, and this chat takes no more messages.
  let markLeft!: () => void;
  const left = new Promise<void>((resolve) => (markLeft = resolve));

  // The transcript, as the server's loop writes it: a snapshot on every (re)connection, then patches.
  const events = new EventSource(chatEventsUrl(chat.id));
  events.addEventListener('left', () => markLeft());
  events.addEventListener('transcript', (event) =>
    transcript.setState(JSON.parse((event as MessageEvent<string>).data) as TranscriptState, true),
  );
  events.addEventListener('patch', (event) => {
    const patch = JSON.parse((event as MessageEvent<string>).data) as {
      entries: TranscriptEntry[];
      busy: boolean;
    };
    transcript.setState((state) => {
      const changed = new Map(patch.entries.map((entry) => [entry.key, entry]));
      const entries = state.entries.map((entry) => {
        const next = changed.get(entry.key);
        changed.delete(entry.key);
        return next ?? entry;
      });
      return { entries: [...entries, ...changed.values()], busy: patch.busy };
    });
  });

  // Calls of the page's own tools: run here, in the browser's gate, and answered to the server once
  // settled. A call the transcript says was answered already (before a reload) is shown from that
  // record and never run again; the page's view is rebuilt from those records instead.
  const answers = pageAnswers(chat.id);
  const settledInPage = settledPageCalls(chat.transcript, answers.get);
  view.setState(viewAfter(settledInPage), true);
  const handled = new Set<string>();
  // Calls whose answer the server's transcript holds: this tab need not keep them (forgotten once,
  // not on every transcript update, each of which would read the storage again).
  const held = new Set<string>();
  // Answers on their way to the server. A Stop waits for them: a page tool that ran here before
  // the visitor pressed Stop did take effect, and the server must hear so before it cancels what
  // is still open (else it would tell the model "cancelled" for a call the page committed).
  const answering = new Set<Promise<unknown>>();
  const answer = (record: SettledCall) => {
    const sent = api.toolResult(chat.id, record).catch((error: unknown) => console.error(error));
    answering.add(sent);
    void sent.finally(() => answering.delete(sent));
    return sent;
  };
  const runPageCalls = ({ entries }: TranscriptState) => {
    for (const entry of entries) {
      if (entry.kind !== 'assistant' || entry.pageCalls === undefined) continue;
      for (const [id, call] of Object.entries(entry.pageCalls)) {
        if (call.settled !== undefined) {
          if (!held.has(id)) answers.forget(id);
          held.add(id);
          continue;
        }
        if (handled.has(id)) continue;
        handled.add(id);
        // Settled here before a reload, and not yet in the server's transcript: sent again, not run again.
        const kept = answers.get(id);
        if (kept !== undefined) {
          void answer(kept);
          continue;
        }
        pageGate.propose({ id, name: call.name, arguments: call.arguments });
        void pageGate.settled(id).then((record) => {
          answers.keep(record);
          return answer(record);
        });
      }
    }
  };

  // A call that ended `interrupted` may have changed the server's shop before it stopped: ask the server.
  const stopInterrupted = gate.audit.subscribe((event: AuditEvent) => {
    if (event.to !== 'failed' || event.reason?.code !== 'interrupted') return;
    void api.shop(chat.id).then(
      ({ shop: state }) => shop.setState(state, true),
      (error: unknown) => console.error(error),
    );
  });

  const verdict = watchVerdict({
    shop,
    gate,
    pageGate,
    history: load.audit,
    settledInPage,
    changesShop: (name) => SHOP_TOOLS.some((tool) => tool.name === name && tool.commit !== undefined),
  });
  const audit = watchAudit(withPageMoves(load.audit, settledInPage), [gate, pageGate]);
  // Only once the timeline and the verdict watch the page's gate: a call run now shows there too.
  runPageCalls(transcript.getState());
  const stopPageCalls = transcript.subscribe(runPageCalls);
  return {
    id: chat.id,
    mode: chat.mode,
    pace: chat.pace,
    modelLabel: chat.modelLabel,
    shop,
    gate,
    pageGate,
    view,
    transcript,
    verdict: verdict.verdict,
    audit: audit.feed,
    live,
    left,
    send: async (text) => {
      await live;
      transcript.setState({ busy: true });
      try {
        await api.send(chat.id, text);
      } catch (error) {
        transcript.setState({ busy: false });
        // Left in another tab before this page heard of it: it follows, and the message is not sent.
        if (error instanceof ApiRefusal && error.code === 'left') return markLeft();
        throw error;
      }
    },
    stop: () =>
      void Promise.race([Promise.allSettled([...answering]), pause(ANSWERS_BEFORE_STOP_MS)])
        .then(() => api.stop(chat.id))
        .catch((error: unknown) => console.error(error)),
    dispose: () => {
      events.close();
      gate.close();
      stopPageCalls();
      stopInterrupted();
      verdict.stop();
      audit.stop();
    },
  };
}

/** The records of the page calls the page had answered (as the server keeps them, or else this tab), in the transcript's order. */
function settledPageCalls(
  { entries }: TranscriptState,
  keptHere: (id: string) => SettledCall | undefined,
): SettledCall[] {
  return entries.flatMap((entry) =>
    entry.kind === 'assistant'
      ? Object.entries(entry.pageCalls ?? {}).flatMap(([id, call]) => {
          const settled = call.settled ?? keptHere(id);
          return settled === undefined ? [] : [settled];
        })
      : [],
  );
}
