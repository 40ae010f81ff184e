import { defineTool, inputHash } from '@toolgate/core';
import { expect, it } from 'vitest';
import { createFakeClock } from '@toolgate/test-utils';
import { createServerGate, type Ledger } from '../../src/index.ts';
import { describeLedgers } from '../support/ledgers.ts';

/** A tool that runs until the test lets it go, and says whether its signal fired. */
function slowShipping() {
  const runs: string[] = [];
  const aborted: string[] = [];
  let release: (() => void) | undefined;
  const started = new Promise<void>((resolveStarted) => {
    release = resolveStarted;
  });
  const tool = defineTool({
    name: 'ship',
    inputSchema: {
      type: 'object',
      properties: { order: { type: 'string' } },
      required: ['order'],
      additionalProperties: false,
    },
    execute: (input, ctx) =>
      new Promise<{ shipped: string }>((resolve, reject) => {
        runs.push(input.order);
        release?.();
        ctx.signal.addEventListener('abort', () => {
          aborted.push(input.order);
          reject(ctx.signal.reason as Error);
        });
        if (input.order === 'quick') resolve({ shipped: input.order });
      }),
  });
  return { tool, runs, aborted, started };
}

const refund = defineTool({
  name: 'refund',
  inputSchema: {
    type: 'object',
    properties: { cents: { type: 'integer', minimum: 1 } },
    required: ['cents'],
    additionalProperties: false,
  },
  needsApproval: true,
  execute: (input) => ({ refunded: input.cents }),
});

async function setup(ledger: Ledger) {
  const shipping = slowShipping();
  const gate = createServerGate({
    tools: [shipping.tool, refund],
    ledger,
    recover: false,
    clock: createFakeClock(Date.now()),
  });
  return { gate, ...shipping };
}

const session = { session: 'chat_1', principal: 'alice' };

describeLedgers(
  'propose with a signal',
  (target) => {
    it('an abort while the tool runs cancels the call user_cancelled, and the tool sees its ctx.signal fire', async () => {
      const { gate, aborted, started } = await setup(await (await target.fresh()).open());
      const controller = new AbortController();
      const call = await gate.propose(
        { id: 's1', name: 'ship', arguments: { order: 'o-1' } },
        { ...session, signal: controller.signal },
      );
      expect(call.status).toBe('executing');
      await started;
      controller.abort();
      expect(await gate.settled('s1')).toMatchObject({
        status: 'cancelled',
        reason: { code: 'user_cancelled', message: 'the request that proposed this call was aborted' },
      });
      expect(aborted).toEqual(['o-1']);
      await gate.close();
    });

    it('an abort while the call waits for a person cancels it with the signal’s own reason, and approving it afterwards runs nothing', async () => {
      const { gate } = await setup(await (await target.fresh()).open());
      const controller = new AbortController();
      const call = await gate.propose(
        { id: 'r1', name: 'refund', arguments: { cents: 500 } },
        { ...session, signal: controller.signal },
      );
      expect(call.status).toBe('awaiting_approval');
      controller.abort('the client went away');
      expect(await gate.settled('r1')).toMatchObject({
        status: 'cancelled',
        reason: { code: 'user_cancelled', message: 'the client went away' },
      });
      expect(
        await gate.approve('r1', { principal: 'alice', inputHash: await inputHash(call.input) }),
      ).toMatchObject({ ok: false, code: 'settled' });
      await gate.close();
    });

    it('an abort after the call ended does nothing', async () => {
      const { gate } = await setup(await (await target.fresh()).open());
      const controller = new AbortController();
      const done = await gate.run(
        { id: 'q1', name: 'ship', arguments: { order: 'quick' } },
        { ...session, signal: controller.signal },
      );
      expect(done).toMatchObject({ status: 'committed', output: { shipped: 'quick' } });
      const before = await gate.verify();
      controller.abort();
      await new Promise((resolve) => setImmediate(resolve));
      expect(await gate.get('q1')).toMatchObject({ status: 'committed' });
      expect(await gate.verify()).toEqual(before); // not even a refusal in the trail
      await gate.close();
    });

    it('a signal already aborted: the call is stored cancelled, and neither checked nor run', async () => {
      const { gate, runs } = await setup(await (await target.fresh()).open());
      const call = await gate.propose(
        { id: 'a1', name: 'ship', arguments: { order: 'o-2' } },
        { ...session, signal: AbortSignal.abort() },
      );
      expect(call).toMatchObject({ status: 'cancelled', reason: { code: 'user_cancelled' } });
      expect(call.history.map((step) => step.status)).toEqual(['pending', 'cancelled']);
      expect(await gate.get('a1')).toMatchObject({ status: 'cancelled' });
      // Even a proposal the gate would refuse is only cancelled: nothing of it was looked at.
      expect(
        await gate.propose(
          { id: 'a2', name: 'no_such_tool', arguments: {} },
          { ...session, signal: AbortSignal.abort() },
        ),
      ).toMatchObject({ status: 'cancelled' });
      expect(runs).toEqual([]);
      await gate.close();
    });

    it('a signal already aborted with a call id that is waiting cancels that call', async () => {
      const { gate } = await setup(await (await target.fresh()).open());
      expect(
        (await gate.propose({ id: 'r2', name: 'refund', arguments: { cents: 9 } }, session)).status,
      ).toBe('awaiting_approval');
      const again = await gate.propose(
        { id: 'r2', name: 'refund', arguments: { cents: 9 } },
        { ...session, signal: AbortSignal.abort() },
      );
      expect(again).toMatchObject({ status: 'cancelled', reason: { code: 'user_cancelled' } });
      expect(await gate.get('r2')).toMatchObject({ status: 'cancelled' });
      await gate.close();
    });

    it('a signal that is not an AbortSignal is refused before anything is proposed', async () => {
      const { gate } = await setup(await (await target.fresh()).open());
      await expect(
        gate.propose(
          { id: 'x1', name: 'ship', arguments: { order: 'o' } },
          { ...session, signal: {} as AbortSignal },
        ),
      ).rejects.toThrow(/AbortSignal/);
      expect(await gate.get('x1')).toBeUndefined();
      await gate.close();
    });
  },
  { shared: true },
);
