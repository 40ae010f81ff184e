import { defineTool, inputHash, type ApproversCall } from '@toolgate/core';
import { readOpenAIChatStream } from '@toolgate/core/openai';
import { expect, it } from 'vitest';
import { createServerGate, type Ledger, type ServerGate, type ServerGateOptions } from '../../src/index.ts';
import { describeLedgers } from '../support/ledgers.ts';

type Wire = { iban: string; amount_cents: number };

function setup(
  ledger: Ledger,
  approvers: (call: ApproversCall<Wire>) => unknown,
  { approvals, ...options }: { approvals?: number } & Partial<ServerGateOptions> = {},
) {
  const runs: string[] = [];
  const asked: ApproversCall<Wire>[] = [];
  const wire = defineTool({
    name: 'wire',
    inputSchema: {
      type: 'object',
      properties: { iban: { type: 'string' }, amount_cents: { type: 'integer', minimum: 1 } },
      required: ['iban', 'amount_cents'],
      additionalProperties: false,
    },
    ...(approvals === undefined ? {} : { approvals }),
    approvers: (call) => {
      asked.push(call);
      return approvers(call) as string[];
    },
    execute: (input) => {
      runs.push(`${input.iban}:${input.amount_cents}`);
      return { sent: input.amount_cents };
    },
  });
  // Only the session's owner may see it (the default): the approvers see the call because they are asked.
  const gate = createServerGate({ tools: [wire], ledger, recover: false, ...options });
  return { gate, runs, asked };
}

const WIRE = { id: 'w1', name: 'wire', arguments: { iban: 'DE02', amount_cents: 500_000 } };

async function refusals(ledger: Ledger, code: string) {
  return (await ledger.eventsAfter(0))
    .filter((event) => event.callId === 'w1' && event.reason?.code === code)
    .map((event) => ({ actor: event.actor, message: event.reason?.message }));
}

describeLedgers(
  'approvers: who is asked decides',
  (target) => {
    it('asks the principals approvers names, refuses a vote from anyone else, and runs on the asked one', async () => {
      const ledger = await (await target.fresh()).open();
      // mallory may read the chat, but was not asked; a stranger may not even see it.
      const { gate, runs, asked } = setup(ledger, () => ['manager_1'], {
        canSee: (principal, session) => principal === session.owner || principal === 'mallory',
      });
      const call = await gate.propose(WIRE, { session: 'chat_a', principal: 'alice' });
      expect(call).toMatchObject({
        status: 'awaiting_approval',
        approval: {
          required: 1,
          left: 1,
          approvedBy: [],
          asked: ['manager_1'],
          from: { principal: 'alice' },
        },
      });
      expect(asked).toEqual([
        { id: 'w1', name: 'wire', input: WIRE.arguments, principal: 'alice', session: 'chat_a' },
      ]);
      const hash = await inputHash(call.input);

      expect(await gate.approve('w1', { principal: 'mallory', inputHash: hash })).toEqual({
        ok: false,
        code: 'forbidden',
        message: '"mallory" was not asked to decide this call',
      });
      expect(await gate.deny('w1', { principal: 'mallory' })).toMatchObject({ ok: false, code: 'forbidden' });
      expect(await gate.approve('w1', { principal: 'stranger', inputHash: hash })).toMatchObject({
        ok: false,
        code: 'not_found',
      });
      expect((await gate.get('w1'))?.status).toBe('awaiting_approval');
      expect(runs).toEqual([]);

      // Being asked is leave to read and vote on the call, not to cancel it or read its session.
      expect(await gate.cancel('w1', { principal: 'manager_1' })).toMatchObject({
        ok: false,
        code: 'not_found',
      });
      expect((await gate.get('w1', { principal: 'manager_1' }))?.status).toBe('awaiting_approval');
      expect(await gate.calls('chat_a', 'manager_1')).toEqual([]);
      expect(await gate.approve('w1', { principal: 'manager_1', inputHash: hash })).toEqual({ ok: true });
      const done = await gate.settled('w1');
      expect(done).toMatchObject({
        status: 'committed',
        approval: { required: 1, left: 0, asked: ['manager_1'], approvedBy: [{ principal: 'manager_1' }] },
      });
      expect(runs).toEqual(['DE02:500000']);
      expect((await gate.toolResult('w1', 'openai-chat')).content).toBe('{"sent":500000}');
      expect(await refusals(ledger, 'forbidden')).toEqual([
        { actor: 'mallory', message: '"mallory" was not asked to decide this call' },
        { actor: 'mallory', message: '"mallory" was not asked to decide this call' },
        { actor: 'stranger', message: '"stranger" may not see session "chat_a"' },
        { actor: 'manager_1', message: '"manager_1" may not see session "chat_a"' },
      ]);
      const events = await ledger.eventsAfter(0);
      expect(events.find((event) => event.to === 'executing')?.actor).toBe('manager_1');
      expect(await ledger.verify()).toMatchObject({ ok: true });
      await gate.close();
    });

    it('refuses the requester approving their own call, even when approvers names them', async () => {
      const ledger = await (await target.fresh()).open();
      const { gate, runs } = setup(ledger, () => ['alice', 'manager_1']);
      const call = await gate.propose(WIRE, { session: 'chat_a', principal: 'alice' });
      expect(call.approval?.asked).toEqual(['manager_1']);
      const why = '"alice" asked for this call and may not approve it: another person must';
      expect(
        await gate.approve('w1', { principal: 'alice', inputHash: await inputHash(call.input) }),
      ).toEqual({
        ok: false,
        code: 'forbidden',
        message: why,
      });
      expect((await gate.get('w1'))?.status).toBe('awaiting_approval');
      expect(runs).toEqual([]);
      expect(await refusals(ledger, 'forbidden')).toEqual([{ actor: 'alice', message: why }]);
      expect(await ledger.verify()).toMatchObject({ ok: true });
      // Taking a call back stays the requester's: cancelling is not approving.
      expect(await gate.cancel('w1', { principal: 'alice' })).toEqual({ ok: true });
      await gate.close();
    });

    it('refuses the person an agent acts for, asked through propose or a turn', async () => {
      const ledger = await (await target.fresh()).open();
      const { gate, runs, asked } = setup(ledger, () => ['alice', 'bob']);
      const call = await gate.propose(WIRE, { session: 'chat_a', principal: 'agent_7', onBehalfOf: 'alice' });
      expect(call).toMatchObject({
        onBehalfOf: 'alice',
        approval: { asked: ['bob'], from: { principal: 'agent_7', onBehalfOf: 'alice' } },
      });
      expect(asked[0]).toMatchObject({ principal: 'agent_7', onBehalfOf: 'alice' });
      const hash = await inputHash(call.input);
      const why = '"alice" is the person this call was made for and may not approve it: another person must';
      expect(await gate.approve('w1', { principal: 'alice', inputHash: hash })).toEqual({
        ok: false,
        code: 'forbidden',
        message: why,
      });
      expect(await gate.approve('w1', { principal: 'agent_7', inputHash: hash })).toMatchObject({
        ok: false,
        code: 'forbidden',
      });
      expect(runs).toEqual([]);
      expect((await refusals(ledger, 'forbidden')).map((refusal) => refusal.actor)).toEqual([
        'alice',
        'agent_7',
      ]);

      const reader = readOpenAIChatStream(
        gate.turn({ session: 'chat_b', principal: 'agent_7', onBehalfOf: 'alice' }),
      );
      reader.push(toolCallChunk('w2', { iban: 'FR76', amount_cents: 900 }));
      reader.end();
      const [inTurn] = await reader.stopped();
      expect(inTurn).toMatchObject({
        status: 'awaiting_approval',
        onBehalfOf: 'alice',
        approval: { asked: ['bob'], from: { principal: 'agent_7', onBehalfOf: 'alice' } },
      });
      const turnHash = await inputHash(inTurn?.input);
      expect(await gate.approve('w2', { principal: 'alice', inputHash: turnHash })).toMatchObject({
        ok: false,
        code: 'forbidden',
      });
      expect(await gate.approve('w2', { principal: 'bob', inputHash: turnHash })).toEqual({ ok: true });
      expect((await reader.settled()).answers[0]?.calls[0]?.status).toBe('committed');
      expect(runs).toEqual(['FR76:900']);
      expect(await ledger.verify()).toMatchObject({ ok: true });
      await gate.close();
    });

    it("lets the requester approve under selfApproval: 'allow' when approvers names them", async () => {
      const ledger = await (await target.fresh()).open();
      const { gate, runs } = setup(ledger, () => ['alice'], { selfApproval: 'allow' });
      const call = await gate.propose(WIRE, { session: 'chat_a', principal: 'alice' });
      expect(call.approval?.asked).toEqual(['alice']);
      expect(
        await gate.approve('w1', { principal: 'alice', inputHash: await inputHash(call.input) }),
      ).toEqual({
        ok: true,
      });
      expect((await gate.settled('w1'))?.status).toBe('committed');
      expect(runs).toEqual(['DE02:500000']);
      await gate.close();
    });

    it('runs once n distinct approvers of those asked approved; a second vote of one is already_approved', async () => {
      const ledger = await (await target.fresh()).open();
      const { gate, runs } = setup(ledger, () => ['manager_1', 'manager_2', 'manager_3'], {
        approvals: 2,
        canSee: () => true,
      });
      const call = await gate.propose(WIRE, { session: 'chat_a', principal: 'alice' });
      const hash = await inputHash(call.input);
      expect(await gate.approve('w1', { principal: 'manager_1', inputHash: hash })).toEqual({
        ok: true,
        left: 1,
      });
      expect(await gate.approve('w1', { principal: 'manager_1', inputHash: hash })).toMatchObject({
        ok: false,
        code: 'already_approved',
      });
      expect(await gate.approve('w1', { principal: 'outsider', inputHash: hash })).toMatchObject({
        ok: false,
        code: 'forbidden',
      });
      expect(await gate.get('w1')).toMatchObject({
        status: 'awaiting_approval',
        approval: {
          required: 2,
          left: 1,
          asked: ['manager_1', 'manager_2', 'manager_3'],
          approvedBy: [{ principal: 'manager_1' }],
        },
      });
      expect(runs).toEqual([]);
      expect(await gate.approve('w1', { principal: 'manager_3', inputHash: hash })).toEqual({
        ok: true,
        left: 0,
      });
      expect(await gate.settled('w1')).toMatchObject({
        status: 'committed',
        approval: { left: 0, approvedBy: [{ principal: 'manager_1' }, { principal: 'manager_3' }] },
      });
      expect(runs).toEqual(['DE02:500000']);
      expect((await refusals(ledger, 'already_approved')).map((refusal) => refusal.actor)).toEqual([
        'manager_1',
      ]);
      expect((await refusals(ledger, 'forbidden')).map((refusal) => refusal.actor)).toEqual(['outsider']);
      await gate.close();
    });

    const nobody: [string, (call: ApproversCall<Wire>) => unknown, string][] = [
      [
        'throws',
        () => {
          throw new Error('the directory is down');
        },
        'nobody could be asked to approve this call: approvers threw: the directory is down',
      ],
      [
        'rejects',
        () => Promise.reject(new Error('the directory is down')),
        'nobody could be asked to approve this call: approvers threw: the directory is down',
      ],
      [
        'answers nothing',
        () => undefined,
        'nobody could be asked to approve this call: approvers answered nothing, not a list of principals',
      ],
      [
        'answers an empty list',
        () => [],
        'nobody could be asked to approve this call: approvers answered an empty list',
      ],
      [
        'answers a string',
        () => 'manager_1',
        'nobody could be asked to approve this call: approvers answered "manager_1", not a list of principals',
      ],
      [
        'answers a list holding a number',
        () => ['manager_1', 42],
        'nobody could be asked to approve this call: approvers answered a list holding 42, which is not a principal',
      ],
      [
        'names only the requester',
        () => ['alice'],
        'this call needs 1 distinct approver, and approvers named nobody besides the requester, who may not approve their own call',
      ],
    ];
    for (const [what, approvers, message] of nobody) {
      it(`rejects the call, and tells the model why, when approvers ${what}`, async () => {
        const ledger = await (await target.fresh()).open();
        const { gate, runs } = setup(ledger, approvers);
        const call = await gate.propose(WIRE, { session: 'chat_a', principal: 'alice' });
        expect(call).toMatchObject({ status: 'rejected', reason: { code: 'unauthorized', message } });
        expect((await gate.toolResult('w1', 'openai-chat')).content).toContain(message);
        const events = (await ledger.eventsAfter(0)).filter((event) => event.callId === 'w1');
        expect(events.at(-1)).toMatchObject({
          from: 'validated',
          to: 'rejected',
          actor: 'toolgate:approvers',
          reason: { code: 'unauthorized', message },
        });
        expect(
          await gate.approve('w1', { principal: 'alice', inputHash: await inputHash(WIRE.arguments) }),
        ).toMatchObject({
          ok: false,
        });
        expect(runs).toEqual([]);
        expect(await ledger.verify()).toMatchObject({ ok: true });
        await gate.close();
      });
    }

    it('rejects a call that needs more approvers than approvers names besides the requester', async () => {
      const ledger = await (await target.fresh()).open();
      const { gate } = setup(ledger, () => ['alice', 'manager_1'], { approvals: 2 });
      expect(await gate.propose(WIRE, { session: 'chat_a', principal: 'alice' })).toMatchObject({
        status: 'rejected',
        reason: {
          code: 'unauthorized',
          message:
            'this call needs 2 distinct approvers, and approvers named only 1 besides the requester, who may not approve their own call',
        },
      });
      await gate.close();
    });

    it("rejects the call when approvers does not answer within the tool's timeoutMs, and the ledger goes on", async () => {
      const ledger = await (await target.fresh()).open();
      const slow = defineTool({
        name: 'wire',
        inputSchema: { type: 'object' },
        timeoutMs: 20,
        approvers: ({ input }) =>
          (input as { amount_cents: number }).amount_cents > 1000
            ? new Promise<string[]>(() => undefined)
            : ['manager_1'],
        execute: () => ({ sent: true }),
      });
      const gate = createServerGate({ tools: [slow], ledger, recover: false });
      const message = 'nobody could be asked to approve this call: approvers did not answer within 20 ms';
      expect(await gate.propose(WIRE, { session: 'chat_a', principal: 'alice' })).toMatchObject({
        status: 'rejected',
        reason: { code: 'unauthorized', message },
      });
      expect((await gate.toolResult('w1', 'openai-chat')).content).toContain(message);
      const small = { id: 'w2', name: 'wire', arguments: { iban: 'DE02', amount_cents: 5 } };
      expect(await gate.propose(small, { session: 'chat_a', principal: 'alice' })).toMatchObject({
        status: 'awaiting_approval',
        approval: { asked: ['manager_1'] },
      });
      await gate.close();
    });

    it('rejects the call at once when approvers reads the gate, which would wait for the transaction awaiting it', async () => {
      const ledger = await (await target.fresh()).open();
      const wire = defineTool({
        name: 'wire',
        inputSchema: { type: 'object' },
        // Long enough for no test run to reach, short enough to show a wait instead of a refusal.
        timeoutMs: 3_000,
        approvers: async ({ session }): Promise<string[]> => {
          const earlier: unknown[] = await gate.calls(session, 'alice');
          return earlier.length === 0 ? ['manager_1'] : ['manager_2'];
        },
        execute: () => ({ sent: true }),
      });
      const gate: ServerGate = createServerGate({ tools: [wire], ledger, recover: false });
      const message =
        "nobody could be asked to approve this call: approvers threw: ledger.snapshot was called by code a ledger transaction awaits (a tool's `approvers`): it may not use the ledger, as on SQLite it would wait forever for the connection that transaction holds.";
      expect(await gate.propose(WIRE, { session: 'chat_a', principal: 'alice' })).toMatchObject({
        status: 'rejected',
        reason: { code: 'unauthorized', message },
      });
      // The ledger goes on: the same read outside the transaction answers.
      expect(await gate.calls('chat_a', 'alice')).toMatchObject([{ id: 'w1', status: 'rejected' }]);
      expect(await ledger.verify()).toMatchObject({ ok: true });
      await gate.close();
    });

    it('asks the approvers of a compensation about the call it undoes', async () => {
      const ledger = await (await target.fresh()).open();
      const undone: unknown[] = [];
      const seen: unknown[] = [];
      const refundable = defineTool({
        name: 'wire',
        inputSchema: { type: 'object' },
        approvers: ({ input, principal }) => {
          seen.push({ input, principal });
          return ['manager_1'];
        },
        execute: () => ({ sent: 500_000 }),
        compensate: (output) => {
          undone.push(output);
          return { returned: true };
        },
      });
      const gate = createServerGate({ tools: [refundable], ledger, recover: false });
      const call = await gate.propose(WIRE, { session: 'chat_a', principal: 'alice' });
      await gate.approve('w1', { principal: 'manager_1', inputHash: await inputHash(call.input) });
      expect((await gate.settled('w1'))?.status).toBe('committed');
      expect(await gate.compensate('w1', { principal: 'alice', reason: 'sent twice' })).toEqual({ ok: true });
      const undo = await gate.get('w1:compensate');
      expect(undo).toMatchObject({
        status: 'awaiting_approval',
        approval: { asked: ['manager_1'], from: { principal: 'alice' } },
      });
      expect(seen).toEqual([
        { input: WIRE.arguments, principal: 'alice' },
        { input: WIRE.arguments, principal: 'alice' },
      ]);
      const hash = await inputHash(undo?.input);
      expect(await gate.approve('w1:compensate', { principal: 'alice', inputHash: hash })).toMatchObject({
        ok: false,
        code: 'forbidden',
      });
      expect(await gate.approve('w1:compensate', { principal: 'manager_1', inputHash: hash })).toEqual({
        ok: true,
      });
      expect((await gate.settled('w1:compensate'))?.status).toBe('committed');
      expect(undone).toEqual([{ sent: 500_000 }]);
      await gate.close();
    });

    it('keeps a canApprove the app gave: an asked principal it refuses may not decide', async () => {
      const ledger = await (await target.fresh()).open();
      const { gate, runs } = setup(ledger, () => ['manager_1', 'intern_1'], {
        canApprove: (principal) => principal.startsWith('manager_'),
      });
      const call = await gate.propose(WIRE, { session: 'chat_a', principal: 'alice' });
      const hash = await inputHash(call.input);
      expect(await gate.approve('w1', { principal: 'intern_1', inputHash: hash })).toMatchObject({
        ok: false,
        code: 'forbidden',
        message: '"intern_1" may not approve this call',
      });
      expect(runs).toEqual([]);
      expect(await gate.approve('w1', { principal: 'manager_1', inputHash: hash })).toEqual({ ok: true });
      expect((await gate.settled('w1'))?.status).toBe('committed');
      await gate.close();
    });
  },
  { shared: true },
);

function toolCallChunk(id: string, args: unknown) {
  return {
    id: 'chatcmpl_1',
    object: 'chat.completion.chunk',
    created: 0,
    model: 'gpt-4.1',
    choices: [
      {
        index: 0,
        delta: {
          tool_calls: [
            { index: 0, id, type: 'function', function: { name: 'wire', arguments: JSON.stringify(args) } },
          ],
        },
        finish_reason: 'tool_calls',
      },
    ],
  };
}

it('refuses approvers that is not a function at definition, and a bad selfApproval or onBehalfOf at once', async () => {
  const config = { name: 'wire', inputSchema: { type: 'object' } as const, execute: () => 1 };
  expect(() => defineTool({ ...config, approvers: ['manager_1'] as never })).toThrow(
    'defineTool("wire"): `approvers` must be a function of the call that answers the principals asked to decide it',
  );
  expect(defineTool({ ...config, approvers: () => ['manager_1'] }).needsApproval).toBe(true);
  expect(defineTool({ ...config, approvers: () => ['manager_1'], needsApproval: false }).needsApproval).toBe(
    false,
  );
  const { sqliteLedger } = await import('../../src/index.ts');
  const ledger = await sqliteLedger({ path: ':memory:' });
  const tool = defineTool({ ...config, approvers: () => ['manager_1'] });
  expect(() => createServerGate({ tools: [tool], ledger, selfApproval: 'never' as never })).toThrow(
    "createServerGate: `selfApproval` must be 'forbid' or 'allow' (got \"never\").",
  );
  const gate = createServerGate({ tools: [tool], ledger, recover: false });
  expect(() => gate.propose(WIRE, { session: 'chat_a', principal: 'agent_7', onBehalfOf: '' })).toThrow(
    'serverGate.propose: `onBehalfOf` must be a non-empty string',
  );
  await gate.close();
  await ledger.close();
});
