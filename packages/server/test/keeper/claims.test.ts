import type { ToolCallRecord } from '@toolgate/core';
import { afterEach, describe, expect, it } from 'vitest';
import { createFakeClock } from '@toolgate/test-utils';
import { sqliteLedger, type Ledger } from '../../src/index.ts';
import { createClaims } from '../../src/keeper/claims.ts';

const LEASE = 30_000;
let ledger: Ledger | undefined;
afterEach(async () => {
  await ledger?.close();
  ledger = undefined;
});

async function runningCall(fence: number): Promise<Ledger> {
  ledger = await sqliteLedger({ path: ':memory:' });
  await ledger.transaction((trx) =>
    trx
      .insertInto('toolgate_calls')
      .values({
        id: 'call_1',
        session: 's',
        owner: 'u',
        tool: 't',
        proposal_hash: 'h',
        input_hash: null,
        input: null,
        status: 'executing',
        version: 2,
        lease_owner: 'app-1',
        lease_expires_at: 1,
        fence,
        idempotency_key: 'k',
        output: null,
        reason: null,
        record: '{}',
        created_at: 0,
        updated_at: 0,
      })
      .execute(),
  );
  return ledger;
}

const leaseOf = async (db: Ledger) =>
  (
    await db.read((q) =>
      q
        .selectFrom('toolgate_calls')
        .select('lease_expires_at')
        .where('id', '=', 'call_1')
        .executeTakeFirstOrThrow(),
    )
  ).lease_expires_at;

/** Claims on `db` that hold call_1 under fence 3 and renew it; a database error fails the test. */
function renewing(db: Ledger) {
  const clock = createFakeClock();
  const lost: string[] = [];
  const claims = createClaims({
    ledger: db,
    clock,
    leaseMs: LEASE,
    onError: (error) => {
      throw error;
    },
    onLeaseLost: (id) => lost.push(id),
  });
  claims.claimed('call_1', { fence: 3, idempotencyKey: 'k', session: 's', owner: 'u' });
  claims.renew('call_1');
  return { clock, lost, claims };
}

describe('the claims of a keeper', () => {
  it('renew the lease of a call it runs every third of the lease, in the ledger', async () => {
    const db = await runningCall(3);
    const { clock, lost, claims } = renewing(db);
    clock.advance(LEASE / 3);
    await expect.poll(() => leaseOf(db)).toBe(clock.now() + LEASE);
    expect(lost).toEqual([]);
    expect(clock.pending).toBe(1); // the next renewal
    claims.close();
    expect(clock.pending).toBe(0);
  });

  it('let go of a call whose fencing token moved on (another process took it over), and say so', async () => {
    const db = await runningCall(4);
    const { clock, lost, claims } = renewing(db);
    clock.advance(LEASE / 3);
    await expect.poll(() => lost).toEqual(['call_1']);
    expect(claims.claims.has('call_1')).toBe(false);
    expect(await leaseOf(db)).toBe(1);
    expect(clock.pending).toBe(0);
  });

  it('do not renew a call held in doubt under the same token (no owner, no lease), and let it go', async () => {
    const db = await runningCall(3);
    const { clock, lost, claims } = renewing(db);
    // Held for a person while the renewal was already scheduled: still executing, same fence,
    // but no process holds it, so a lease set now would later read as a run that ran out.
    await db.transaction((trx) =>
      trx
        .updateTable('toolgate_calls')
        .set({ lease_owner: null, lease_expires_at: null })
        .where('id', '=', 'call_1')
        .execute(),
    );
    clock.advance(LEASE / 3);
    await expect.poll(() => lost).toEqual(['call_1']);
    expect(await leaseOf(db)).toBeNull();
    expect(claims.claims.has('call_1')).toBe(false);
    expect(clock.pending).toBe(0);
  });

  it('end the run’s span with the record it settled as, and stop renewing, on release', () => {
    const clock = createFakeClock();
    const ended: unknown[] = [];
    const claims = createClaims({
      ledger: {} as Ledger,
      clock,
      leaseMs: LEASE,
      onError: () => undefined,
      onLeaseLost: () => undefined,
    });
    claims.claimed('call_1', {
      fence: 1,
      idempotencyKey: 'k',
      session: 's',
      owner: 'u',
      span: { end: (record) => void ended.push(record) },
    });
    claims.renew('call_1');
    claims.known.set('call_1', {} as never);
    claims.release('call_1', { status: 'committed' } as ToolCallRecord);
    expect(ended).toEqual([{ status: 'committed' }]);
    expect(claims.known.has('call_1')).toBe(false);
    expect(clock.pending).toBe(0);
  });
});
