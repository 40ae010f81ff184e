import { defineTool } from '@toolgate/core';
import { expect, it } from 'vitest';
import { createFakeClock } from '@toolgate/test-utils';
import { createServerGate, type Ledger, type ServerGateOptions } from '../../src/index.ts';
import { describeLedgers } from '../support/ledgers.ts';

const lookup = defineTool({
  name: 'lookup_balance',
  inputSchema: {
    type: 'object',
    properties: { account: { type: 'string' } },
    required: ['account'],
    additionalProperties: false,
  },
  execute: (input) => ({ account: input.account, cents: 912_345 }),
});
const transfer = defineTool({
  name: 'transfer',
  inputSchema: {
    type: 'object',
    properties: { amount_cents: { type: 'integer', minimum: 1 } },
    required: ['amount_cents'],
    additionalProperties: false,
  },
  needsApproval: true,
  execute: (input) => ({ sent: input.amount_cents }),
});

const balance = { id: 'call_balance', name: 'lookup_balance', arguments: { account: 'alice-checking' } };

async function setup(ledger: Ledger, options: Partial<ServerGateOptions> = {}) {
  const gate = createServerGate({
    tools: [lookup, transfer],
    ledger,
    recover: false,
    clock: createFakeClock(Date.now()),
    ...options,
  });
  const call = await gate.run(balance, { session: 'chat_alice', principal: 'alice' });
  expect(call).toMatchObject({ status: 'committed', output: { cents: 912_345 } });
  return gate;
}

describeLedgers(
  'reads scoped to the principal asking',
  (target) => {
    it('get, settled and toolResult answer the owner, and for anyone else exactly as for an id the ledger does not hold', async () => {
      const gate = await setup(await (await target.fresh()).open());
      expect(await gate.get('call_balance', { principal: 'alice' })).toMatchObject({
        status: 'committed',
        output: { cents: 912_345 },
      });
      expect(await gate.settled('call_balance', { principal: 'alice' })).toMatchObject({
        status: 'committed',
      });
      expect(await gate.toolResult('call_balance', 'openai-chat', { principal: 'alice' })).toMatchObject({
        content: expect.stringContaining('912345'),
      });

      expect(await gate.get('call_balance', { principal: 'mallory' })).toBeUndefined();
      expect(await gate.settled('call_balance', { principal: 'mallory' })).toBeUndefined();
      const refusedUnknown = await gate
        .toolResult('no_such_call', 'openai-chat', { principal: 'mallory' })
        .catch((error: Error) => error.message.replace('no_such_call', 'ID'));
      const refusedHidden = await gate
        .toolResult('call_balance', 'openai-chat', { principal: 'mallory' })
        .catch((error: Error) => error.message.replace('call_balance', 'ID'));
      expect(refusedHidden).toBe(refusedUnknown);
      expect(refusedHidden).not.toContain('912');

      // Without a principal the read is the trusted server's own.
      expect(await gate.get('call_balance')).toMatchObject({ status: 'committed' });
      await gate.close();
    });

    it('settled for a principal who may not see a call waiting for a person answers at once', async () => {
      const gate = await setup(await (await target.fresh()).open());
      expect(
        (
          await gate.propose(
            { id: 'call_pay', name: 'transfer', arguments: { amount_cents: 500 } },
            { session: 'chat_alice', principal: 'alice' },
          )
        ).status,
      ).toBe('awaiting_approval');
      expect(await gate.settled('call_pay', { principal: 'mallory' })).toBeUndefined();
      expect(await gate.get('call_pay', { principal: 'alice' })).toMatchObject({
        status: 'awaiting_approval',
      });
      await gate.close();
    });

    it('follows canSee, exactly as calls() does', async () => {
      const gate = await setup(await (await target.fresh()).open(), {
        canSee: (principal, session) => principal === session.owner || principal === 'auditor',
      });
      expect(await gate.get('call_balance', { principal: 'auditor' })).toMatchObject({ status: 'committed' });
      expect((await gate.calls('chat_alice', 'auditor')).map((call) => call.id)).toEqual(['call_balance']);
      expect(await gate.get('call_balance', { principal: 'mallory' })).toBeUndefined();
      expect(await gate.calls('chat_alice', 'mallory')).toEqual([]);
      await gate.close();
    });

    it('a canSee that throws hides the call, and the error goes to onError', async () => {
      const errors: unknown[] = [];
      const gate = await setup(await (await target.fresh()).open(), {
        canSee: (principal, session) => {
          if (principal === 'broken') throw new Error('directory down');
          return principal === session.owner;
        },
        onError: (error) => errors.push(error),
      });
      expect(await gate.get('call_balance', { principal: 'broken' })).toBeUndefined();
      expect(errors).toEqual([new Error('directory down')]);
      await gate.close();
    });

    it('refuses a scope without a usable principal instead of answering it as trusted', async () => {
      const gate = await setup(await (await target.fresh()).open());
      await expect(gate.get('call_balance', { principal: '' })).rejects.toThrow(TypeError);
      await expect(
        gate.settled('call_balance', { principal: undefined as unknown as string }),
      ).rejects.toThrow(/principal/);
      await expect(gate.toolResult('call_balance', 'mcp', {} as { principal: string })).rejects.toThrow(
        /principal/,
      );
      await gate.close();
    });

    it("propose with the owner's call id answers a principal who may not see the session a refusal that shows nothing of the call", async () => {
      const ledger = await (await target.fresh()).open();
      const gate = await setup(ledger);
      const replayed = await gate.propose(balance, {
        session: 'chat_alice',
        principal: 'mallory',
        id: 'call_balance',
      });
      const fresh = await gate.propose(
        { ...balance, id: 'call_never_seen' },
        { session: 'chat_alice', principal: 'mallory' },
      );
      expect(replayed).toMatchObject({
        id: 'call_balance',
        status: 'rejected',
        reason: { code: 'unauthorized' },
      });
      // Word for word what an id never used gets: nothing tells that the call exists.
      expect({ ...replayed, id: 'X' }).toEqual({ ...fresh, id: 'X' });
      expect(JSON.stringify(replayed)).not.toContain('912345');
      expect(await gate.get('call_balance')).toMatchObject({
        status: 'committed',
        output: { cents: 912_345 },
      });
      expect((await ledger.eventsAfter(0)).filter((event) => event.actor === 'mallory')).toEqual([]);
      await gate.close();
    });

    it('the same call id proposed into a session of their own answers id_conflict with only what they proposed', async () => {
      const gate = await setup(await (await target.fresh()).open());
      const conflict = await gate.propose(
        { id: 'call_balance', name: 'transfer', arguments: { amount_cents: 1 } },
        { session: 'chat_mallory', principal: 'mallory' },
      );
      expect(conflict).toMatchObject({
        id: 'call_balance',
        status: 'rejected',
        name: 'transfer',
        reason: { code: 'id_conflict' },
      });
      expect(conflict.output).toBeUndefined();
      expect(JSON.stringify(conflict)).not.toMatch(/912345|lookup_balance|alice/);
      expect(await gate.get('call_balance', { principal: 'mallory' })).toBeUndefined();
      await gate.close();
    });
  },
  { shared: true },
);
