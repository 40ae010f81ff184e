import { expect, it } from 'vitest';
import { describeLedgers } from '../support/ledgers.ts';
import { hashOf, ids, inboxGate, TTL } from './support.ts';

const SMALL = { iban: 'DE02', amount_cents: 50_000 };

describeLedgers('the approver inbox: serverGate.awaiting', (target) => {
  it("lists the calls asking a principal across sessions, oldest first, and nobody else's", async () => {
    const ledger = await (await target.fresh()).open();
    const { gate, clock, propose } = inboxGate(ledger);
    // Proposed in the order z, m, a: the inbox keeps that order, not the ids'.
    await propose('z_wire', 'wire', SMALL, 'chat_bob', 'bob');
    clock.advance(1_000);
    await propose('m_refund', 'refund', { order: 'o_7' }, 'chat_alice');
    clock.advance(1_000);
    await propose('a_wire', 'wire', { iban: 'FR76', amount_cents: 70_000 }, 'chat_alice');

    expect(ids(await gate.awaiting('manager_1'))).toEqual(['z_wire', 'a_wire']);
    expect(ids(await gate.awaiting('support_1'))).toEqual(['m_refund']);
    expect(await gate.awaiting('alice')).toEqual([]);
    const [first] = await gate.awaiting('manager_1');
    expect(first).toMatchObject({
      status: 'awaiting_approval',
      input: SMALL,
      approval: { asked: ['manager_1'], left: 1, from: { principal: 'bob' } },
    });
    await gate.close();
  });

  it('lets an asked principal read that call and vote on it, but not the rest of its session', async () => {
    const ledger = await (await target.fresh()).open();
    const { gate, propose } = inboxGate(ledger);
    await propose('w1', 'wire', SMALL, 'chat_alice');
    await propose('r1', 'refund', { order: 'o_7' }, 'chat_alice');

    expect((await gate.get('w1', { principal: 'manager_1' }))?.status).toBe('awaiting_approval');
    expect(await gate.get('r1', { principal: 'manager_1' })).toBeUndefined();
    expect(await gate.calls('chat_alice', 'manager_1')).toEqual([]);
    // Not asked, and not allowed to see the session: the call is as unknown to them as a missing id.
    expect(await gate.get('w1', { principal: 'mallory' })).toBeUndefined();
    expect(await gate.awaiting('mallory')).toEqual([]);
    expect(
      await gate.approve('w1', { principal: 'mallory', inputHash: await hashOf(await gate.get('w1')) }),
    ).toMatchObject({
      ok: false,
      code: 'not_found',
    });

    expect(
      await gate.approve('w1', { principal: 'manager_1', inputHash: await hashOf(await gate.get('w1')) }),
    ).toEqual({
      ok: true,
    });
    expect(await gate.settled('w1', { principal: 'manager_1' })).toMatchObject({ status: 'committed' });
    expect(await gate.awaiting('manager_1')).toEqual([]);
    // Once decided, the call stays readable to whoever was asked about it.
    expect((await gate.get('w1', { principal: 'manager_1' }))?.status).toBe('committed');
    await gate.close();
  });

  it('drops an approver of a quorum from the inbox once they approved, and asks them again after an edit', async () => {
    const ledger = await (await target.fresh()).open();
    const { gate, propose } = inboxGate(ledger);
    const call = await propose('q1', 'big_wire', { iban: 'DE02', amount_cents: 2_000_000 }, 'chat_alice');
    expect(ids(await gate.awaiting('manager_1'))).toEqual(['q1']);
    expect(ids(await gate.awaiting('finance_1'))).toEqual(['q1']);

    expect(await gate.approve('q1', { principal: 'manager_1', inputHash: await hashOf(call) })).toEqual({
      ok: true,
      left: 1,
    });
    expect(await gate.awaiting('manager_1')).toEqual([]);
    expect(await gate.awaiting('finance_1')).toMatchObject([
      { id: 'q1', approval: { left: 1, approvedBy: [{ principal: 'manager_1' }] } },
    ]);

    // finance approves a smaller amount: manager_1 approved another input, and is asked again.
    const edited = { iban: 'DE02', amount_cents: 1_500_000 };
    expect(
      await gate.approve('q1', { principal: 'finance_1', inputHash: await hashOf(call), input: edited }),
    ).toEqual({ ok: true, left: 1 });
    expect(await gate.awaiting('finance_1')).toEqual([]);
    expect(await gate.awaiting('manager_1')).toMatchObject([{ id: 'q1', input: edited }]);

    const now = await gate.get('q1');
    expect(await gate.approve('q1', { principal: 'manager_1', inputHash: await hashOf(now) })).toEqual({
      ok: true,
      left: 0,
    });
    expect(await gate.settled('q1')).toMatchObject({ status: 'committed', output: { sent: 1_500_000 } });
    expect(await gate.awaiting('manager_1')).toEqual([]);
    expect(await gate.awaiting('finance_1')).toEqual([]);
    await gate.close();
  });

  it('takes a call out of every inbox when it is denied, cancelled or expires', async () => {
    const ledger = await (await target.fresh()).open();
    const { gate, clock, propose } = inboxGate(ledger);
    await propose('denied', 'wire', { iban: 'DE02', amount_cents: 2_000_000 }, 'chat_alice');
    clock.advance(1);
    await propose('cancelled', 'wire', SMALL, 'chat_alice');
    clock.advance(TTL / 2 - 1);
    await propose('kept', 'wire', SMALL, 'chat_bob', 'bob');
    expect(ids(await gate.awaiting('manager_1'))).toEqual(['denied', 'cancelled', 'kept']);
    expect(ids(await gate.awaiting('finance_1'))).toEqual(['denied']);

    expect(await gate.deny('denied', { principal: 'finance_1', reason: 'too much' })).toEqual({ ok: true });
    expect(await gate.cancel('cancelled', { principal: 'alice' })).toEqual({ ok: true });
    expect(ids(await gate.awaiting('manager_1'))).toEqual(['kept']);
    expect(await gate.awaiting('finance_1')).toEqual([]);

    clock.advance(TTL / 2);
    expect((await gate.recover()).expired).toEqual([]);
    clock.advance(TTL / 2);
    expect((await gate.recover()).expired).toEqual(['kept']);
    expect(await gate.get('kept')).toMatchObject({
      status: 'cancelled',
      reason: { code: 'approval_expired' },
    });
    expect(await gate.awaiting('manager_1')).toEqual([]);
    await gate.close();
  });

  it('refuses to read an inbox for no principal', async () => {
    const ledger = await (await target.fresh()).open();
    const { gate } = inboxGate(ledger);
    await expect(gate.awaiting('')).rejects.toThrow(/principal/);
    await expect(gate.awaiting(undefined as unknown as string)).rejects.toThrow(/principal/);
    await gate.close();
  });
});
