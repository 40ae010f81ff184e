import { inputHash } from '@toolgate/core';
import type { Decision, DecisionCode, ServerGate, VoteRefusal } from '@toolgate/server';
import { APPROVE, DENY } from './slack-card.ts';
import { checkSlackSignature } from './slack-signature.ts';

/** What the interactivity handler needs of the channel's options. */
export interface VoteOptions {
  readonly name: string;
  readonly signingSecret: string;
  readonly principalOf: (slackUserId: string) => string | undefined | Promise<string | undefined>;
  readonly gate: (() => ServerGate | undefined) | undefined;
  readonly now: () => number;
}

/** One click, read from a request whose signature held. */
interface Click {
  readonly user: string;
  readonly action: typeof APPROVE | typeof DENY;
  readonly callId: string;
  readonly hash: string;
  readonly responseUrl: string | undefined;
  /** Slack's id of this click; a redelivery carries the same. */
  readonly key: string;
}

/** Slack's interactivity payloads are small; a body past this is nobody's click. */
const MOST_BODY = 256 * 1024;
/** How long a click's key is remembered, so that its redelivery is not decided again. */
const REMEMBER_MS = 10 * 60_000;

/** What the clicking person reads (only they see it) when their vote was refused. */
const SAYS: Readonly<Partial<Record<DecisionCode, string>>> = {
  not_found: 'There is no such call, or you are not one of those asked to decide it. Nothing was decided.',
  forbidden: 'You may not decide this call: it was asked for by you, or for you. Nothing was decided.',
  stale:
    'The input changed after this card was posted. Nothing was decided; the new input comes in a new card.',
  expired: 'This call expired: nobody decided in time, and it will not run.',
  not_awaiting: 'This call was already decided. Nothing was changed.',
  settled: 'This call has already ended. Nothing was changed.',
  already_approved: 'You have already approved this input; the call waits for the others.',
  tampered: 'This call was changed outside the gate; it was not run, and this was reported.',
};

/**
 * Slack's interactivity Request URL: checks the signature and its age, reads the click, maps the
 * Slack user with `principalOf`, and decides through the gate; the answer to Slack (200, empty)
 * goes out once the vote is decided or `ackMs` passed, whichever is first, and what came of it
 * reaches the person as an ephemeral message on the click's `response_url`. Every refused vote is
 * one event in the audit trail naming the channel and the Slack user id: written with `refuseVote`
 * when refused here, by the gate (given `via`) when refused there.
 *
 * @example
 * const handle = slackVotes(options);
 * app.post('/slack/interactivity', (c) => handle(c.req.raw, 2500));
 */
export function slackVotes(options: VoteOptions): (request: Request, ackMs: number) => Promise<Response> {
  const seen = new Map<string, Promise<void>>();

  async function refuse(click: Partial<Click>, refusal: Omit<VoteRefusal, 'channel'>, says: string) {
    const gate = options.gate?.();
    await gate?.refuseVote({
      channel: options.name,
      ...refusal,
      ...(click.user === undefined ? {} : { user: click.user }),
    });
    await tell(click.responseUrl, says);
  }

  async function decide(click: Click): Promise<void> {
    const gate = options.gate?.();
    if (gate === undefined)
      return tell(click.responseUrl, 'This app is not ready to take votes yet. Nothing was decided.');
    const callId = click.callId;
    // A mapping that throws maps nobody: the click is refused like an unknown user's.
    const principal = await Promise.resolve()
      .then(() => options.principalOf(click.user))
      .catch(() => undefined);
    if (typeof principal !== 'string' || principal === '')
      return refuse(
        click,
        { code: 'forbidden', message: `Slack user ${click.user} maps to no principal`, callId },
        'Your Slack account is not linked to anyone this app knows, so your click decided nothing. Ask the app’s admin to link it.',
      );
    // The gate audits a vote it refuses itself, once, naming Slack and the clicking user.
    const via = { channel: options.name, user: click.user };
    let decision: Decision;
    if (click.action === APPROVE)
      decision = await gate.approve(callId, { principal, inputHash: click.hash, via });
    else {
      const call = await gate.get(callId);
      // Deny carries no hash of its own: a card of an input the call no longer holds denies nothing.
      if (call?.status === 'awaiting_approval' && (await inputHash(call.input)) !== click.hash)
        return refuse(
          click,
          {
            code: 'stale',
            message: 'the denial names other arguments than the call holds',
            callId,
            principal,
          },
          SAYS.stale ?? '',
        );
      decision = await gate.deny(callId, { principal, reason: `denied in Slack by ${principal}`, via });
    }
    if (!decision.ok)
      return tell(click.responseUrl, SAYS[decision.code] ?? `Nothing was decided: ${decision.message}.`);
    const left = decision.left ?? 0;
    await tell(
      click.responseUrl,
      click.action === DENY
        ? 'You denied this call. It will not run.'
        : left > 0
          ? `Your approval is recorded. ${left} more approval${left === 1 ? ' is' : 's are'} needed before it runs.`
          : 'You approved this call. It runs now.',
    );
  }

  return async (request, ackMs) => {
    if (request.method !== 'POST') return new Response(null, { status: 405, headers: { allow: 'POST' } });
    const body = await request.text();
    if (body.length > MOST_BODY) return new Response(null, { status: 413 });
    const checked = checkSlackSignature(options.signingSecret, request.headers, body, options.now());
    if (!checked.ok) {
      // Nothing in an unauthenticated request can be trusted, not even the call or user it names.
      await options
        .gate?.()
        ?.refuseVote({ channel: options.name, code: 'invalid_signature', message: checked.message });
      return new Response(null, { status: 401 });
    }
    const click = readClick(body);
    // A click on the confirm-page button, or another app's action: nothing to decide.
    if (click === undefined) return new Response(null, { status: 200 });
    const earlier = seen.get(click.key);
    if (earlier !== undefined) return new Response(null, { status: 200 });
    const work = decide(click).catch(() =>
      tell(
        click.responseUrl,
        'The vote could not be recorded (the server could not reach its ledger). Nothing was decided; try again.',
      ),
    );
    seen.set(click.key, work);
    setTimeout(() => seen.delete(click.key), REMEMBER_MS).unref();
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([work, new Promise((resolve) => (timer = setTimeout(resolve, ackMs)))]);
    clearTimeout(timer);
    return new Response(null, { status: 200 });
  };
}

/** The Approve or Deny click of a `block_actions` payload, or `undefined` for anything else. */
function readClick(body: string): Click | undefined {
  let payload: unknown;
  try {
    payload = JSON.parse(new URLSearchParams(body).get('payload') ?? '');
  } catch {
    return undefined;
  }
  const { type, user, actions, response_url: responseUrl } = (payload ?? {}) as Record<string, unknown>;
  const userId = (user as { id?: unknown } | undefined)?.id;
  const action = (Array.isArray(actions) ? actions[0] : undefined) as Record<string, unknown> | undefined;
  if (type !== 'block_actions' || typeof userId !== 'string' || action === undefined) return undefined;
  const { action_id: actionId, value, action_ts: actionTs } = action;
  if ((actionId !== APPROVE && actionId !== DENY) || typeof value !== 'string') return undefined;
  let bound: { call?: unknown; hash?: unknown };
  try {
    bound = JSON.parse(value) as typeof bound;
  } catch {
    return undefined;
  }
  if (typeof bound.call !== 'string' || typeof bound.hash !== 'string') return undefined;
  return {
    user: userId,
    action: actionId,
    callId: bound.call,
    hash: bound.hash,
    responseUrl: typeof responseUrl === 'string' ? responseUrl : undefined,
    key: JSON.stringify([userId, actionId, bound.call, bound.hash, String(actionTs)]),
  };
}

/** Tells the clicking person, and only them, what came of their click; a message that fails is let go. */
async function tell(responseUrl: string | undefined, text: string): Promise<void> {
  if (responseUrl === undefined) return;
  try {
    const response = await fetch(responseUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ response_type: 'ephemeral', replace_original: false, text }),
      signal: AbortSignal.timeout(5000),
    });
    await response.body?.cancel();
  } catch {
    // The vote stands whatever Slack's answer; the card's update tells the end.
  }
}
