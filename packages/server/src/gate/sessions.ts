import { storable } from '../ledger/guards/storable.ts';
import type { Ledger } from '../ledger/ledger.ts';
import type { GateSettings } from './settings.ts';

/**
 * Who owns a session, and who may see it. A session's owner never changes once written, so it is
 * read from the ledger once per process.
 *
 * @example
 * const sessions = createSessions(ledger, settings);
 * const owner = await sessions.owner('chat_1', 'user_42'); // 'user_42' if the session was new
 */
export interface Sessions {
  /** The session's owner; with `principal`, a session nobody owns yet becomes theirs. */
  readonly owner: (session: string, principal?: string) => Promise<string | undefined>;
  /** Whether `principal` may see the session (one nobody owns yet: yes); `canSee` throwing is a no. */
  readonly mayView: (principal: string, session: string, owner: string | undefined) => Promise<boolean>;
}

const KEPT = 10_000;

/**
 * Builds the sessions of one gate.
 *
 * @example
 * const sessions = createSessions(ledger, settings);
 */
export function createSessions(
  ledger: Ledger,
  { clock, canSee, onError }: Pick<GateSettings, 'clock' | 'canSee' | 'onError'>,
): Sessions {
  const owners = new Map<string, string>();

  async function owner(session: string, principal?: string): Promise<string | undefined> {
    const known = owners.get(session);
    if (known !== undefined) return known;
    if (!storable(session)) return undefined;
    const read = () =>
      ledger.read((db) =>
        db.selectFrom('toolgate_sessions').select('owner').where('id', '=', session).executeTakeFirst(),
      );
    let row = await read();
    if (row === undefined && principal !== undefined) {
      await ledger.transaction((trx) =>
        trx
          .insertInto('toolgate_sessions')
          .values({ id: session, owner: principal, created_at: clock.now() })
          .onConflict((conflict) => conflict.column('id').doNothing())
          .execute(),
      );
      row = await read();
    }
    if (row !== undefined) {
      if (owners.size >= KEPT) owners.delete(owners.keys().next().value as string);
      owners.set(session, row.owner);
    }
    return row?.owner;
  }

  async function mayView(
    principal: string,
    session: string,
    sessionOwner: string | undefined,
  ): Promise<boolean> {
    if (sessionOwner === undefined) return true; // nothing to see yet; every event is checked as it comes
    try {
      return (await canSee(principal, { id: session, owner: sessionOwner })) === true;
    } catch (error) {
      onError(error);
      return false;
    }
  }

  return { owner, mayView };
}
