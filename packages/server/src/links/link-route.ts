import type { ToolCallRecord } from '@toolgate/core';
import { decisionStatus, type Decision, type DecisionCode } from '../decision/decision.ts';
import type { ServerGate } from '../gate/server-gate.ts';
import { hashInput } from '../keeper/row-columns.ts';
import type { ApprovalLinks, LinkClaims } from './approval-links.ts';
import type { ChannelRefusalCode } from '../decision/channel-reason.ts';
import { answerPage, callPage, PAGE_HEADERS } from './link-page.ts';

/**
 * What the link pages take of the handler's options: the links, and whether a vote needs a login.
 *
 * @example
 * const options: LinkPagesOptions = { links, linkNeedsLogin: true };
 */
export interface LinkPagesOptions {
  readonly links?: ApprovalLinks;
  readonly linkNeedsLogin?: boolean;
}

const CHANNEL = 'links';

/** Titles and sentences of the refusals a person can meet on a link's page. */
const REFUSED: Readonly<Partial<Record<DecisionCode | ChannelRefusalCode, readonly [string, string]>>> = {
  invalid_link: [
    'This link is not valid',
    'This link was not made by this server, or it was changed or cut short. Open the link from the message you received, whole.',
  ],
  link_expired: [
    'This link has expired',
    'This link no longer works. If the call still waits for you, ask for a new link.',
  ],
  wrong_call: [
    'This form was for another call',
    'The vote names another call than its link. Nothing was decided.',
  ],
  wrong_principal: [
    'This link is for someone else',
    'You are signed in as another person than the one this link was made for. Nothing was decided.',
  ],
  not_found: ['Call not found', 'There is no such call, or it is not yours to decide.'],
  forbidden: ['You may not decide this call', 'Nothing was decided.'],
  stale: [
    'The input has changed',
    'This link was made for an input the call no longer holds (someone changed it). Nothing was decided; the new input comes with a new link.',
  ],
  expired: ['The call has expired', 'Nobody approved this call in time; it was cancelled and will not run.'],
  not_awaiting: ['Already decided', 'This call is no longer waiting for a decision.'],
  settled: ['Already decided', 'This call has already ended. Nothing was changed.'],
  already_approved: [
    'You have already approved',
    'Your approval of this input is recorded; the call waits for the others.',
  ],
  invalid_edit: ['Not decided', 'The change was refused; the call still waits for a decision.'],
  tampered: ['Not run', 'The call was changed outside the gate; it was not run, and this was reported.'],
};

const REFUSED_STATUS: Readonly<Record<ChannelRefusalCode, number>> = {
  invalid_link: 403,
  link_expired: 410,
  wrong_call: 409,
  wrong_principal: 403,
  invalid_signature: 401,
};

/**
 * Serves `GET`, `HEAD` and `POST {base}/links/:token`: the confirm page of a signed approval link,
 * and the vote its forms send. GET and HEAD never decide anything (mail scanners open links); a
 * POST is `approve` or `deny` in the name of the link's principal, for the input hash it signed.
 * Every refused vote is in the audit trail: the gate's own refusals by `approve` and `deny`, the
 * link's (expired, another call, another principal, a changed input on a denial) as events of its
 * call, and a link whose signature fails, which names no call it could be trusted about, as an
 * event of the channel.
 *
 * `principalOf` and `readVote` are the handler's own ways to read who is signed in and a form or
 * JSON body; both throw an error with an HTTP `status`, answered here as a page. Without `links`,
 * there are no link pages (`undefined`).
 *
 * @example
 * const pages = linkPages(gate, { links }, principalOf, readVote);
 * if (pages && parts[0] === 'links') return pages(request, parts[1]);
 */
export function linkPages(
  gate: ServerGate,
  options: LinkPagesOptions,
  principalOf: (request: Request) => Promise<string>,
  readVote: (request: Request) => Promise<Record<string, unknown>>,
): ((request: Request, token: string) => Promise<Response>) | undefined {
  const { links } = options;
  if (links === undefined) return undefined;
  const { verify } = links;

  async function open(request: Request, token: string): Promise<Response> {
    if (request.method !== 'GET' && request.method !== 'HEAD' && request.method !== 'POST')
      return page(request, 405, answerPage('Method not allowed', 'Open this link, or use its buttons.'), {
        allow: 'GET, HEAD, POST',
      });
    const checked = verify(token);
    if (!checked.ok) {
      const claims = checked.code === 'link_expired' ? checked.claims : undefined;
      return refuse(gate, request, checked.code, checked.message, claims, claims?.principal);
    }
    const { claims } = checked;
    if (options.linkNeedsLogin === true) {
      const principal = await principalOf(request);
      if (principal !== claims.principal)
        return refuse(
          gate,
          request,
          'wrong_principal',
          `signed in as "${principal}", but this link is for "${claims.principal}"`,
          claims,
          principal,
        );
    }
    // The signature is the authority here: the server made this link for this principal and call.
    if (request.method === 'POST') return vote(request, claims);
    const call = await gate.get(claims.callId);
    if (call === undefined) return refusal(request, 'not_found', 404);
    return page(request, 200, callPage(call, claims, standing(call, claims)));
  }

  async function vote(request: Request, claims: LinkClaims): Promise<Response> {
    const body = await readVote(request);
    const choice = body['vote'];
    const reason = body['reason'];
    if ((choice !== 'approve' && choice !== 'deny') || (reason !== undefined && typeof reason !== 'string'))
      return page(
        request,
        400,
        answerPage(
          'Not understood',
          'Send { "vote": "approve" | "deny", "reason"?: "…" } or use the page’s buttons.',
        ),
      );
    const named = body['callId'];
    if (named !== undefined && named !== claims.callId)
      return refuse(
        gate,
        request,
        'wrong_call',
        `the vote names call ${JSON.stringify(named)}, but this link is for "${claims.callId}"`,
        claims,
        claims.principal,
      );
    const { principal, callId, inputHash } = claims;
    let decision: Decision;
    // A vote the gate refuses is audited there, once, naming this channel (one about a call the
    // ledger does not hold, as an event of the channel).
    const via = { channel: CHANNEL };
    // approve reads the call itself (and checks the signed hash against it): read here only after.
    let before: ToolCallRecord | undefined;
    if (choice === 'approve') decision = await gate.approve(callId, { principal, inputHash, via });
    else {
      before = await gate.get(callId);
      // deny carries no hash of its own: a link made for an input the call no longer holds denies nothing.
      if (before?.status === 'awaiting_approval' && hashInput(before.input) !== inputHash)
        return refuse(
          gate,
          request,
          'stale',
          'the denial names other arguments than the call holds',
          claims,
          principal,
        );
      const text = typeof reason === 'string' && reason.trim() !== '' ? reason : undefined;
      decision = await gate.deny(
        callId,
        text === undefined ? { principal, via } : { principal, reason: text, via },
      );
    }
    const after = (await gate.get(callId)) ?? before;
    if (after === undefined) return refusal(request, 'not_found', 404);
    if (!decision.ok)
      return refusal(request, decision.code, decisionStatus(decision), decision.message, after, claims);
    if (choice === 'deny')
      return page(
        request,
        200,
        answerPage('Denied', 'You denied this call. It will not run.', after, claims),
      );
    const left = decision.left ?? 0;
    return page(
      request,
      200,
      answerPage(
        'Approved',
        left > 0
          ? `Your approval is recorded. ${left} more approval${left === 1 ? ' is' : 's are'} needed before the call runs.`
          : 'You approved this call. It runs now.',
        after,
        claims,
      ),
    );
  }

  return async (request, token) => {
    try {
      return await open(request, token);
    } catch (error) {
      const status = statusOf(error);
      if (status === undefined) throw error;
      const message = (error as Error).message;
      return page(request, status, answerPage(status === 401 ? 'Sign in first' : 'Not understood', message), {
        ...(status === 503 ? { 'retry-after': '1' } : {}),
      });
    }
  };
}

function page(
  request: Request,
  status: number,
  html: string,
  headers: Record<string, string> = {},
): Response {
  return new Response(request.method === 'HEAD' ? null : html, {
    status,
    headers: { ...PAGE_HEADERS, ...headers },
  });
}

/** The page of a refusal: its title and sentence, with the gate's own words when it gave them. */
function refusal(
  request: Request,
  code: DecisionCode | ChannelRefusalCode,
  status: number,
  detail?: string,
  call?: ToolCallRecord,
  claims?: LinkClaims,
): Response {
  // The codes of resolve and compensate are never a vote's answer.
  const [title, sentence] = REFUSED[code] ?? ['Not decided', 'This call is not waiting for a decision.'];
  return page(
    request,
    status,
    answerPage(title, detail === undefined ? sentence : `${sentence} (${detail})`, call, claims),
  );
}

/** Audits a vote the link itself refused (a GET is no vote), then answers its page. */
async function refuse(
  gate: ServerGate,
  request: Request,
  code: ChannelRefusalCode | 'stale',
  message: string,
  claims?: LinkClaims,
  principal?: string,
): Promise<Response> {
  if (request.method === 'POST')
    await gate.refuseVote({
      channel: CHANNEL,
      code,
      message,
      ...(claims === undefined ? {} : { callId: claims.callId }),
      ...(principal === undefined ? {} : { principal }),
    });
  return refusal(request, code, code === 'stale' ? 409 : REFUSED_STATUS[code]);
}

/** Whether the person may decide from this page now, or the sentence that says why not. */
function standing(call: ToolCallRecord, claims: LinkClaims): { open: true } | { open: false; why: string } {
  if (call.status !== 'awaiting_approval')
    return { open: false, why: `Nothing to decide: this call is ${call.status.replace('_', ' ')}.` };
  if (hashInput(call.input) !== claims.inputHash)
    return {
      open: false,
      why: 'This link was made for an input the call no longer holds (someone changed it): the new input comes with a new link. Below is the input as it stands.',
    };
  const asked = call.approval?.asked;
  if (asked !== undefined && !asked.includes(claims.principal))
    return { open: false, why: `${claims.principal} was not asked to decide this call.` };
  if (call.approval?.approvedBy.some((vote) => vote.principal === claims.principal) === true)
    return { open: false, why: 'You have approved this input. The call waits for the others.' };
  return { open: true };
}

/** The HTTP status an error of the handler's own carries (a body too large, no principal), if any. */
function statusOf(error: unknown): number | undefined {
  if (!(error instanceof Error)) return undefined;
  const { status } = error as { status?: unknown };
  if (typeof status === 'number' && status >= 400 && status < 600) return status;
  return (error as { code?: unknown }).code === 'ledger_unavailable' ? 503 : undefined;
}
