import { randomUUID } from 'node:crypto';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type {
  CallToolRequest,
  Progress,
  ServerNotification,
  ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { isTerminal, type SettledCall, type ToolCallRecord } from '@toolgate/core';
import { inputHash, type ServerGate } from '@toolgate/server';
import { answerRefused, answerSettled, answerWaiting, CALL_ID, type Answer } from './answer.ts';
import { approvalMessage, elicitApproval } from './elicitation.ts';
import type { SameAsks } from './same-asks.ts';

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** What answering a `tools/call` needs from the gateway. */
export interface CallContext {
  readonly gate: () => ServerGate;
  readonly session: string;
  /** The person the gateway acts for: who approves on the page and in a client's dialog. */
  readonly principal: string;
  /** The page's address without its token: what the model may read. */
  readonly pageUrl: string;
  readonly approvalWaitMs: number;
  readonly elicitationTimeoutMs: number;
  readonly upstreamOf: (tool: string) => string | undefined;
  /** The upstream's own `isError` result for a call that failed with it, while the gateway keeps it. */
  readonly upstreamError: (callId: string) => Record<string, unknown> | undefined;
  /** Sends a running call's progress to this request until the returned function is called. */
  readonly watch: (callId: string, send: (progress: Progress) => void) => () => void;
  readonly log: (line: string) => void;
}

const MAX_CALL_ID = 256;

/**
 * Answers one `tools/call`: proposes it to the server gate under the client's call id (or a new
 * one), asks a person when the tool needs it, waits for the outcome, and answers it.
 */
export async function answerToolCall(
  context: CallContext,
  server: Server,
  request: CallToolRequest,
  extra: Extra,
  asks: SameAsks,
): Promise<Answer> {
  const { name, arguments: args, _meta } = request.params;
  const given: unknown = _meta?.[CALL_ID];
  if (given !== undefined && (typeof given !== 'string' || given === '' || given.length > MAX_CALL_ID)) {
    return answerRefused(
      `_meta["${CALL_ID}"] must be a non-empty string of at most ${MAX_CALL_ID} characters (got ${JSON.stringify(given).slice(0, 80)}); nothing was run.`,
    );
  }
  // A request without a call id joins an identical one of this client session that waits for a person.
  const same = typeof given === 'string' ? undefined : await asks.take(name, args ?? {}, randomUUID);
  const id = typeof given === 'string' ? given : (same?.id ?? randomUUID());
  const cancelled = clientCancel(server, extra);
  const token = _meta?.progressToken;
  const unwatch = context.watch(id, (progress) => {
    if (token === undefined || extra.signal.aborted) return;
    extra
      .sendNotification({ method: 'notifications/progress', params: { ...progress, progressToken: token } })
      .catch(() => undefined);
  });
  let proposed: ToolCallRecord | undefined;
  try {
    const gate = context.gate();
    // The client's cancel ends the call wherever it is: waiting for a person, or running upstream.
    let call = await gate.propose(
      { name, arguments: args ?? {} },
      { session: context.session, principal: askerOf(context, server), id, signal: cancelled.signal },
    );
    proposed = call;
    same?.settle(call.status === 'awaiting_approval');
    const named = typeof given === 'string';
    if (call.status === 'awaiting_approval') {
      const release = same === undefined ? () => undefined : asks.claimAsking(same.key, id);
      let decided: ToolCallRecord | undefined;
      try {
        decided = await awaitPerson(context, server, call, extra, cancelled.signal, release !== undefined);
      } finally {
        release?.();
      }
      if (decided === undefined) return answerWaiting(call, context.pageUrl, named);
      call = decided;
    }
    if (!isTerminal(call.status)) call = (await gate.settled(id)) ?? call;
    if (!isTerminal(call.status)) return answerWaiting(call, context.pageUrl, named);
    if (same !== undefined) asks.answered(same.key, id);
    return answerSettled(call as SettledCall, context.upstreamError(id));
  } finally {
    if (proposed === undefined) same?.settle(false);
    unwatch();
    cancelled.dispose();
  }
}

/**
 * Who asks a call, as the ledger records it: the person the gateway acts for, through the client
 * that sent the request (its `clientInfo.name` from `initialize`), so the trail tells the model's
 * request apart from the person's decision.
 */
function askerOf(context: CallContext, server: Server): string {
  const name = server.getClientVersion()?.name;
  // The client names itself: kept printable and short, as the ledger stores and the page shows it.
  const shown =
    typeof name === 'string'
      ? name
          .replace(/\p{Cc}/gu, '')
          .trim()
          .slice(0, MAX_CLIENT_NAME)
      : '';
  return `${context.principal} via ${shown === '' ? 'an unnamed MCP client' : shown}`;
}

const MAX_CLIENT_NAME = 80;

/**
 * Waits for a person's decision: through the client's own dialog when it supports elicitation,
 * and on the approval page in any case. Resolves with the call once it has moved on, or
 * `undefined` when it still waits (the dialog was dismissed, or nobody decided in time).
 */
async function awaitPerson(
  context: CallContext,
  server: Server,
  call: ToolCallRecord,
  extra: Extra,
  cancelled: AbortSignal,
  mayAsk: boolean,
): Promise<ToolCallRecord | undefined> {
  const gate = context.gate();
  const ended = gate.settled(call.id);
  const withdraw = new AbortController();
  const stop = () => withdraw.abort();
  cancelled.addEventListener('abort', stop, { once: true });
  const settledFirst = ended.then((done) => ({ kind: 'settled' as const, done }));
  try {
    if (mayAsk && canElicit(server)) {
      const hash = await inputHash(call.input);
      const asked = elicitApproval(
        extra,
        approvalMessage(call, context.upstreamOf(call.name) ?? 'upstream', hash),
        withdraw.signal,
        context.elicitationTimeoutMs,
      ).then(
        (decision) => ({ kind: 'asked' as const, decision }),
        (error: unknown) => ({ kind: 'asked' as const, decision: 'dismissed' as const, error }),
      );
      const first = await Promise.race([settledFirst, asked]);
      if (first.kind === 'settled') return first.done;
      if (first.decision !== 'dismissed') {
        const decision =
          first.decision === 'approve'
            ? await gate.approve(call.id, { principal: context.principal, inputHash: hash })
            : await gate.deny(call.id, { principal: context.principal, reason: 'denied in the MCP client' });
        if (decision.ok) return (await ended) ?? undefined;
        // Decided elsewhere meanwhile, or expired: answer the call as it now stands.
        context.log(`the decision on call ${call.id} in the client was refused: ${decision.code}`);
      }
      if (cancelled.aborted) return (await ended) ?? undefined;
      return stillWaiting(gate, call.id, ended);
    }
    const timer = new Promise<{ kind: 'timeout' }>((resolve) => {
      const handle = setTimeout(() => resolve({ kind: 'timeout' }), context.approvalWaitMs);
      withdraw.signal.addEventListener('abort', () => clearTimeout(handle), { once: true });
      ended.finally(() => clearTimeout(handle)).catch(() => undefined);
    });
    const first = await Promise.race([settledFirst, timer]);
    if (first.kind === 'settled') return first.done;
    return stillWaiting(gate, call.id, ended);
  } finally {
    cancelled.removeEventListener('abort', stop);
    withdraw.abort();
  }
}

/** A call that left `awaiting_approval` meanwhile is followed to its end; one still waiting is answered as such. */
async function stillWaiting(
  gate: ServerGate,
  id: string,
  ended: Promise<SettledCall | undefined>,
): Promise<ToolCallRecord | undefined> {
  const now = await gate.get(id);
  if (now === undefined || now.status === 'awaiting_approval') return undefined;
  return isTerminal(now.status) ? now : ((await ended) ?? now);
}

/** Whether the client takes form elicitations (an empty `elicitation` capability means form). */
function canElicit(server: Server): boolean {
  const elicitation = server.getClientCapabilities()?.elicitation;
  if (elicitation === undefined) return false;
  return !('url' in elicitation) || 'form' in elicitation;
}

/** The client's stated reason for a cancel, or words that say who cancelled. */
function cancelReason(reason: unknown): string {
  return typeof reason === 'string' && reason.trim() !== ''
    ? `the client cancelled the request: ${reason}`
    : 'the client cancelled the request';
}

/**
 * Aborts when the client cancels the request (`notifications/cancelled`), and not when its
 * connection ends: the SDK aborts a request's signal in both cases, but only a cancel is the
 * client's word about the call; a dropped connection leaves it to be asked again by its id.
 */
function clientCancel(server: Server, extra: Extra): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  let disposed = false;
  const onAbort = () => {
    // On a closed connection the SDK aborts every request first, then lets go of the transport.
    setImmediate(() => {
      if (!disposed && server.transport !== undefined) controller.abort(cancelReason(extra.signal.reason));
    });
  };
  extra.signal.addEventListener('abort', onAbort, { once: true });
  return {
    signal: controller.signal,
    dispose: () => {
      disposed = true;
      extra.signal.removeEventListener('abort', onAbort);
    },
  };
}
