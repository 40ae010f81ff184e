import type { ChannelReason, VoteRefusal } from '../decision/channel-reason.ts';
import type { GateParts } from '../gate/parts.ts';
import { readRecord } from '../ledger/stored-record.ts';

/**
 * Writes a refused vote into the audit trail, in a transaction of its own. About a call the ledger
 * holds, it is a refusal event of that call (`from === to`, the principal as actor). Otherwise it
 * is an event of the channel: `callId` and `session` empty (no call or session has either), `from`
 * and `to` `rejected`, the actor the principal or `toolgate:<channel>`; no feed of a session
 * carries it, and `verify()` checks it like any other event.
 *
 * @example
 * await refuseVote(parts, { channel: 'links', code: 'invalid_link', message: checked.message });
 */
export async function refuseVote(
  parts: Pick<GateParts, 'settings' | 'ledger' | 'keeper'>,
  refusal: VoteRefusal,
): Promise<void> {
  const { ledger, keeper } = parts;
  const { channel, code, message, callId, principal, user } = refusal;
  const reason: ChannelReason = {
    code,
    message: message.slice(0, 2000),
    channel,
    ...(principal === undefined ? {} : { principal }),
    ...(user === undefined ? {} : { user }),
  };
  const actor = principal ?? `toolgate:${channel}`;
  const at = parts.settings.clock.now();
  await ledger.transaction(async (trx) => {
    const row = callId === undefined ? undefined : await keeper.lock(trx, callId);
    if (row !== undefined) {
      const { status } = readRecord(row.record);
      await ledger.recordEvents(trx, [
        { callId: row.id, session: row.session, from: status, to: status, actor, at, reason },
      ]);
      return;
    }
    await ledger.recordEvents(trx, [
      { callId: '', session: '', from: 'rejected', to: 'rejected', actor, at, reason },
    ]);
  });
}
