import { createPending, readProposal, refusal, truncatedReason } from '@toolgate/core/kit';
import {
  isTerminal,
  type SettledCall,
  type StreamGate,
  type ToolCallRecord,
  type ToolDefinition,
} from '@toolgate/core';
import { endedHere, type PageCall, type PageResults } from './page-calls.ts';

/** What {@link routeTurn} takes. */
export interface TurnRouting {
  /** The server gate's view of this turn (`serverGate.turn(...)`): every call of a server tool goes there. */
  readonly server: StreamGate;
  /** The tools that run in the page; their calls are handed to it. */
  readonly pageTools: readonly ToolDefinition[];
  readonly pageResults: PageResults;
  /**
   * Put before each model-given id. A call id names one call in the whole ledger, and a model's ids
   * are only unique within its own conversation (a scripted or local model repeats them).
   */
  readonly prefix: string;
  /** A call of a server tool was opened, under this id, before it reaches the ledger. */
  readonly onServerCall?: (id: string) => void;
  /** A page call's arguments are complete: hand it to the page. */
  readonly onPageCall: (call: PageCall) => void;
}

/** A turn's stream gate that sends each call to the gate its tool belongs to. */
export interface TurnRouter extends StreamGate {
  /** The id the model gave a call, for replaying the turn to it. */
  readonly modelIdOf: (id: string) => string | undefined;
  /** Whether a call runs in the page. */
  readonly inPage: (id: string) => boolean;
  /**
   * Whether a call reached a gate that shows it to the page: proposed to the ledger, or handed to
   * the page. One ended before (the stream was stopped while the model wrote it) is known only here.
   */
  readonly reachedGate: (id: string) => boolean;
}

/**
 * Routes one assistant turn's calls: server tools to the server gate (and its ledger), page tools
 * to the page, which runs them in the browser's own gate and posts the results back. To the stream
 * reader it is one gate, so it reads, previews, closes and answers every call the same way.
 */
export function routeTurn(routing: TurnRouting): TurnRouter {
  const { server, pageResults, prefix } = routing;
  const pageNames = new Set(routing.pageTools.map((tool) => tool.name));
  const modelIds = new Map<string, string>();
  const page = new Map<string, ToolCallRecord>();
  const answers = new Map<string, Promise<SettledCall>>();
  const proposed = new Set<string>();
  let unnamed = 0;

  const idFor = (modelId: string | undefined) => {
    const given = modelId ?? `call_${++unnamed}`;
    const id = `${prefix}${given}`;
    modelIds.set(id, given);
    return id;
  };

  const handToPage = (record: ToolCallRecord, rawArguments: unknown): ToolCallRecord => {
    const text = typeof rawArguments === 'string' ? rawArguments : (JSON.stringify(rawArguments) ?? '');
    answers.set(record.id, pageResults.wait(record));
    void answers.get(record.id)?.then((settled) => page.set(record.id, settled));
    routing.onPageCall({ id: record.id, name: record.name, arguments: text });
    return record;
  };

  const openInPage = (id: string, name: string, turn: string | undefined): ToolCallRecord => {
    const record = createPending({
      id,
      name,
      source: 'openai-chat',
      generatedId: false,
      turn,
      at: Date.now(),
    });
    page.set(id, record);
    return record;
  };

  /** Ends a server call's stream: a call still pending goes to the ledger (one the turn already ended stays the turn's own). */
  const toLedger = (id: string, end: () => ToolCallRecord | undefined): ToolCallRecord | undefined => {
    if (server.get(id)?.status === 'pending') proposed.add(id);
    return end();
  };

  const settled = (id: string): Promise<SettledCall> => {
    if (!page.has(id)) return server.settled(id);
    const now = page.get(id) as ToolCallRecord;
    if (isTerminal(now.status)) return Promise.resolve(now as SettledCall);
    return answers.get(id) ?? Promise.reject(new Error(`call "${id}" was not handed to the page`));
  };

  return {
    tools: [...server.tools, ...routing.pageTools],
    limits: server.limits,
    modelIdOf: (id) => modelIds.get(id),
    inPage: (id) => page.has(id),
    reachedGate: (id) => proposed.has(id) || answers.has(id),
    propose(input, options) {
      let reading: ReturnType<typeof readProposal> | undefined;
      try {
        reading = readProposal(input, server.limits);
      } catch {
        reading = undefined;
      }
      const modelId =
        options?.id ?? (reading === undefined ? undefined : reading.ok ? reading.proposal.id : reading.id);
      const id = idFor(modelId);
      if (reading?.ok === true && pageNames.has(reading.proposal.name)) {
        return handToPage(openInPage(id, reading.proposal.name, options?.turn), reading.proposal.arguments);
      }
      routing.onServerCall?.(id);
      proposed.add(id);
      return server.propose(input, { ...options, id });
    },
    get: (id) => page.get(id) ?? server.get(id),
    settled,
    // A page call comes back once the page has run it (a person there may decide first).
    stopped: (id) => (page.has(id) ? settled(id) : server.stopped(id)),
    cancel(id, reason) {
      const now = page.get(id);
      if (now === undefined) return server.cancel(id, reason);
      if (isTerminal(now.status)) return false;
      const ended = endedHere(now, 'cancelled', {
        code: 'user_cancelled',
        message: reason ?? 'the user cancelled this call',
      });
      page.set(id, ended);
      pageResults.settle(ended);
      return true;
    },
    stream: {
      open(init) {
        const id = idFor(init.id);
        if (pageNames.has(init.name)) return openInPage(id, init.name, init.turn);
        routing.onServerCall?.(id);
        return server.stream.open({ ...init, id });
      },
      preview(id, preview) {
        const now = page.get(id);
        if (now === undefined) server.stream.preview(id, preview);
        else if (now.status === 'pending') page.set(id, { ...now, preview });
      },
      close(id, rawArguments) {
        const now = page.get(id);
        if (now === undefined) return toLedger(id, () => server.stream.close(id, rawArguments));
        if (now.status !== 'pending' || answers.has(id)) return now;
        return handToPage(now, rawArguments);
      },
      truncate(id, message) {
        const now = page.get(id);
        if (now === undefined) return toLedger(id, () => server.stream.truncate(id, message));
        if (now.status !== 'pending' || answers.has(id)) return now;
        const ended = endedHere(now, 'rejected', truncatedReason(message));
        page.set(id, ended);
        return ended;
      },
      refuse(id, reason) {
        const now = page.get(id);
        if (now === undefined) return toLedger(id, () => server.stream.refuse(id, reason));
        if (now.status !== 'pending' || answers.has(id)) return now;
        const ended = endedHere(now, 'rejected', refusal(reason));
        page.set(id, ended);
        return ended;
      },
    },
  };
}
