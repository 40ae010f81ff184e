import type { Clock } from '@toolgate/core';
import { messageOf } from '@toolgate/core/kit';
import type { GateParts } from '../gate/parts.ts';
import { readRecord } from '../ledger/stored-record.ts';
import type { ApprovalLinks } from '../links/approval-links.ts';
import type { Channel, Notice } from './notice.ts';
import { refsOf, settleNotice, type ClaimedNotice } from './notice-rows.ts';
import { describeNotice, type NoticeSettling } from './settling.ts';

/** How long one delivery may take at most, whatever the lease: a channel that hangs is given up on then. */
const MOST_MS = 10_000;
/** The first pause before a failed notice is tried again; it doubles with each failure, up to {@link LONGEST_PAUSE_MS}. */
const FIRST_PAUSE_MS = 1000;
const LONGEST_PAUSE_MS = 5 * 60_000;

/**
 * The confirm page's link for a principal to decide a call, when the gate has `links` and the
 * call has a validated input; `undefined` otherwise.
 *
 * @example
 * const link = linkOf(options.links, call, 'manager_1');
 */
export function linkOf(
  links: ApprovalLinks | undefined,
  call: Notice['call'],
  principal: string,
): string | undefined {
  return links === undefined || call.input === undefined ? undefined : links.linkFor(call, principal);
}

/**
 * Hands one claimed notice to its channel, then writes what came of it with an event in the hash
 * chain, in one transaction: delivered (with the channel's `ref`), or failed and due again after
 * a pause that doubles with each attempt. A `decided` or `expired` notice goes through the
 * channel's `update`, once for each `ref` the earlier notices of the call to that principal gave
 * (whichever app server delivered them), and through `deliver` when none did. A channel
 * that throws, does not answer within half a lease (10 s at most; its signal aborts then) or
 * answers something else than nothing or `{ ref }` has not taken the notice. Answers whether it
 * was delivered; `undefined` when the claim had passed to another process.
 *
 * @example
 * const delivered = await deliverNotice(parts, channels, claimed);
 */
export async function deliverNotice(
  parts: Pick<GateParts, 'options' | 'settings' | 'ledger'>,
  channels: readonly Channel[],
  claimed: ClaimedNotice,
  closing?: AbortSignal,
  settling?: NoticeSettling,
): Promise<boolean | undefined> {
  const { ledger, settings } = parts;
  const { clock, leaseMs } = settings;
  const channel = channels.find((candidate) => candidate.name === claimed.channel);
  const call = readRecord(claimed.record);
  const asks = claimed.kind === 'asked' || claimed.kind === 'reminder' || claimed.kind === 'escalated';
  const link = asks ? linkOf(parts.options.links, call, claimed.principal) : undefined;
  const notice: Notice = {
    id: claimed.id,
    kind: claimed.kind,
    to: claimed.principal,
    call,
    from:
      claimed.from_on_behalf_of === null
        ? { principal: claimed.from_principal }
        : { principal: claimed.from_principal, onBehalfOf: claimed.from_on_behalf_of },
    ...(link === undefined ? {} : { link }),
  };
  const closed = () => closing?.aborted === true;
  if (closed()) return undefined;
  let result: { ok: true; ref?: string } | { ok: false; why: string };
  if (channel === undefined)
    result = { ok: false, why: `this gate has no channel named "${claimed.channel}"` };
  else {
    const refs =
      !asks && channel.update !== undefined
        ? [...new Set([...(await refsOf(ledger, claimed)), ...(settling?.refsOf(claimed) ?? [])])]
        : [];
    const ms = Math.min(MOST_MS, leaseMs / 2);
    result = await attempt(
      async (signal) => {
        if (channel.update === undefined || refs.length === 0) return channel.deliver(notice, { signal });
        // Updating a card twice shows the same end, so a retry after a partial failure is safe.
        for (const ref of refs) await channel.update(notice, ref, { signal });
        return { ref: refs.at(-1) };
      },
      ms,
      clock,
      closing,
    );
  }
  // A gate closed mid-delivery writes nothing: its claim runs out, and a process still open tries again.
  if (closed() && !result.ok) return undefined;
  const now = clock.now();
  if (result.ok && settling !== undefined) {
    // Recorded by the next move this gate writes, or on its own a moment later (see NoticeSettling).
    settling.delivered(claimed, result.ref, now);
    return true;
  }
  const pause = Math.min(LONGEST_PAUSE_MS, FIRST_PAUSE_MS * 2 ** Math.min(claimed.attempts, 16));
  return ledger.transaction(async (trx) => {
    const settled = await settleNotice(
      trx,
      claimed,
      result.ok
        ? { delivered: true, ...(result.ref === undefined ? {} : { ref: result.ref }) }
        : { delivered: false, retryAt: now + pause },
      now,
    );
    if (!settled) return undefined;
    const row = await trx
      .selectFrom('toolgate_calls')
      .select('status')
      .where('id', '=', claimed.call_id)
      .executeTakeFirst();
    const status = row?.status ?? call.status;
    await ledger.recordEvents(trx, [
      {
        callId: claimed.call_id,
        session: claimed.session,
        from: status,
        to: status,
        actor: `toolgate:${claimed.channel}`,
        at: now,
        reason: result.ok
          ? {
              code: 'notice_delivered',
              message: `${describeNotice(claimed)} delivered${result.ref === undefined ? '' : ` (ref ${JSON.stringify(result.ref)})`}`,
            }
          : {
              code: 'notice_failed',
              message: `${describeNotice(claimed)} not delivered (attempt ${claimed.attempts + 1}): ${result.why}; tried again in ${pause} ms`,
            },
      },
    ]);
    if (!result.ok)
      settings.onError(new Error(`toolgate: ${describeNotice(claimed)} not delivered: ${result.why}`));
    return result.ok;
  });
}

/** Runs one delivery under a signal that aborts after `ms`; what it answered, checked, or why it failed. */
async function attempt(
  run: (signal: AbortSignal) => Promise<unknown>,
  ms: number,
  clock: Clock,
  closing: AbortSignal | undefined,
): Promise<{ ok: true; ref?: string } | { ok: false; why: string }> {
  const controller = new AbortController();
  let timer: unknown;
  let stop = () => {};
  const late = new Promise<{ ok: false; why: string }>((resolve) => {
    timer = clock.setTimeout(() => {
      controller.abort(new DOMException(`The channel did not answer within ${ms} ms.`, 'TimeoutError'));
      resolve({ ok: false, why: `the channel did not answer within ${ms} ms` });
    }, ms);
    const closed = () => {
      controller.abort(new DOMException('The server gate was closed.', 'AbortError'));
      resolve({ ok: false, why: 'the gate was closed' });
    };
    closing?.addEventListener('abort', closed, { once: true });
    stop = () => closing?.removeEventListener('abort', closed);
    if (closing?.aborted === true) closed();
  });
  try {
    return await Promise.race([
      Promise.resolve()
        .then(() => run(controller.signal))
        .then(answered, (error: unknown) => ({
          ok: false as const,
          why: `the channel threw: ${messageOf(error)}`,
        })),
      late,
    ]);
  } finally {
    clock.clearTimeout(timer);
    stop();
  }
}

function answered(answer: unknown): { ok: true; ref?: string } | { ok: false; why: string } {
  if (answer === undefined) return { ok: true };
  if (typeof answer === 'object' && answer !== null && !Array.isArray(answer)) {
    const { ref } = answer as { ref?: unknown };
    if (ref === undefined) return { ok: true };
    if (typeof ref === 'string' && ref !== '' && ref.length <= 2000 && !ref.includes('\u0000'))
      return { ok: true, ref };
  }
  return { ok: false, why: 'the channel answered something else than nothing or { ref }' };
}
