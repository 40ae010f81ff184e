import type { MoveWatch } from '../policy/admission.ts';
import type { OnFired } from '../timers/fire.ts';
import { canonicalJson } from '@toolgate/core/kit';
import { hashInput } from '../keeper/row-columns.ts';
import { askedOf, undecided } from '../timers/asked.ts';
import { writeNotices, type WriterClaim } from './notice-rows.ts';
import type { FreshNotices, NoticeSettling } from './settling.ts';
import type { Channel } from './notice.ts';

/**
 * Writes the notices of a move, in its transaction: `asked` to each principal asked when a call
 * begins to wait, and when it stops waiting, `expired` (its approval ran out) or `decided` (any
 * other end of the wait) to everyone it asked. An approver's edit of a call that still waits asks
 * again, with the edited input, each principal who has not approved it: what they were shown
 * before is stale.
 *
 * @example
 * const watch = noticesOfMoves(channels, settings, settling);
 */
export function noticesOfMoves(
  channels: readonly Channel[],
  settings: WriterClaim & { readonly clock: { readonly now: () => number } },
  settling?: NoticeSettling,
  fresh?: FreshNotices,
): MoveWatch {
  const names = channels.map((channel) => channel.name);
  const { clock } = settings;
  const claim = { instance: settings.instance, leaseMs: settings.leaseMs };
  return async (trx, { session, owner, previous, next }) => {
    // Deliveries waiting to be recorded ride in this move's transaction (see NoticeSettling).
    await settling?.carry(trx, { id: next.id, status: next.status });
    const waits = next.status === 'awaiting_approval';
    const waited = previous?.status === 'awaiting_approval';
    if (waits && waited) {
      if (canonicalJson(previous.input) === canonicalJson(next.input)) return;
      const to = undecided(next, owner);
      const editedHash = hashInput(next.input);
      const batch = { kind: 'asked', step: 0, record: next, session, owner, to, editedHash } as const;
      fresh?.wrote(await writeNotices(trx, batch, names, clock.now(), claim));
      return;
    }
    if (waits === waited) return;
    const expired = next.status === 'cancelled' && next.reason.code === 'approval_expired';
    const kind = waits ? 'asked' : expired ? 'expired' : 'decided';
    const to = askedOf(waits ? next : (previous ?? next), owner);
    const batch = { kind, step: 0, record: next, session, owner, to } as const;
    fresh?.wrote(await writeNotices(trx, batch, names, clock.now(), claim));
  };
}

/**
 * Writes the notices of a timer that fired, in its transaction: `reminder` to those still asked,
 * `escalated` to the principals an escalation added.
 *
 * @example
 * const timers = keepTimers(parts, { running, onFired: noticesOfTimers(channels, settings) });
 */
export function noticesOfTimers(
  channels: readonly Channel[],
  settings: WriterClaim & { readonly clock: { readonly now: () => number } },
  fresh?: FreshNotices,
): OnFired {
  const names = channels.map((channel) => channel.name);
  const { clock } = settings;
  const claim = { instance: settings.instance, leaseMs: settings.leaseMs };
  return async (trx, fired) => {
    const kind = fired.kind === 'reminder' ? 'reminder' : 'escalated';
    const written = await writeNotices(
      trx,
      {
        kind,
        step: fired.step,
        record: fired.record,
        session: fired.session,
        owner: fired.owner,
        to: fired.to,
      },
      names,
      clock.now(),
      claim,
    );
    fresh?.wrote(written);
  };
}
