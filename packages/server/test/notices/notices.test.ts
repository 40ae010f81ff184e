import { defineTool, inputHash } from '@toolgate/core';
import { createFakeClock, deferred, errorLog } from '@toolgate/test-utils';
import { expect, it } from 'vitest';
import {
  approvalLinks,
  createServerGate,
  type Channel,
  type Ledger,
  type Notice,
  type ServerGateOptions,
} from '../../src/index.ts';
import { describeLedgers } from '../support/ledgers.ts';

const SECOND = 1000;
const WIRE = { id: 'w1', name: 'wire', arguments: { iban: 'DE02', amount_cents: 500_000 } };

type Answer = 'ok' | 'throw' | 'hang' | 'garbage';

/** A channel that records what it is given and answers as told (`ok` once the script is used up). */
function recordingChannel(name = 'test', { update = true, script = [] as Answer[] } = {}) {
  const seen: { via: 'deliver' | 'update'; notice: Notice; ref?: string }[] = [];
  const hung: AbortSignal[] = [];
  const reached = { next: deferred() };
  // Resolves with what the channel answers: its own answer, or `ok`'s.
  const answer = async <T>(signal: AbortSignal, ok: T): Promise<T> => {
    const next = script.shift() ?? 'ok';
    reached.next.resolve();
    reached.next = deferred();
    if (next === 'throw') throw new Error('502 from the chat service');
    if (next === 'garbage') return 'sent' as never;
    if (next === 'hang') {
      hung.push(signal);
      return new Promise(() => undefined);
    }
    return ok;
  };
  const channel: Channel = {
    name,
    async deliver(notice, { signal }) {
      seen.push({ via: 'deliver', notice });
      return answer(signal, { ref: `msg-${notice.to}` });
    },
    ...(update
      ? {
          async update(notice: Notice, ref: string, { signal }: { signal: AbortSignal }) {
            seen.push({ via: 'update', notice, ref });
            await answer(signal, undefined);
          },
        }
      : {}),
  };
  return { channel, seen, hung, reached };
}

function setup(ledger: Ledger, channels: Channel[], options: Partial<ServerGateOptions> = {}) {
  const clock = createFakeClock();
  const wire = defineTool({
    name: 'wire',
    inputSchema: {
      type: 'object',
      properties: { iban: { type: 'string' }, amount_cents: { type: 'integer', minimum: 1 } },
      required: ['iban', 'amount_cents'],
      additionalProperties: false,
    },
    approvers: () => ['manager_1', 'finance_1'],
    approvals: 2,
    remindAfterMs: SECOND,
    escalate: [{ afterMs: 2 * SECOND, approvers: ['director_1'] }],
    approvalTtlMs: 5 * SECOND,
    execute: (input) => ({ sent: input.amount_cents }),
  });
  const gate = createServerGate({ tools: [wire], ledger, clock, recover: false, channels, ...options });
  return { gate, clock };
}

/** The notice events of w1 in the hash chain, in order. */
async function noticeEvents(ledger: Ledger) {
  return (await ledger.eventsAfter(0))
    .filter((event) => event.callId === 'w1' && event.reason?.code?.startsWith('notice_'))
    .map((event) => ({ actor: event.actor, code: event.reason?.code, message: event.reason?.message }));
}

const KINDS = ['asked', 'reminder', 'escalated', 'decided', 'expired'];

/** What a channel was given, by kind, then principal: the notices of one moment go out at once, in no set order. */
const summary = (seen: ReturnType<typeof recordingChannel>['seen']) =>
  seen
    .map(({ via, notice, ref }) => ({
      via,
      kind: notice.kind,
      to: notice.to,
      status: notice.call.status,
      ...(ref === undefined ? {} : { ref }),
    }))
    .sort((a, b) => KINDS.indexOf(a.kind) - KINDS.indexOf(b.kind) || a.to.localeCompare(b.to));

describeLedgers('notices through channels', (target) => {
  it('asks each asked principal, then tells everyone asked how it ended, updating what each was shown', async () => {
    const ledger = await (await target.fresh()).open();
    const { channel, seen } = recordingChannel();
    const { gate } = setup(ledger, [channel]);
    await gate.propose(WIRE, { session: 'chat_a', principal: 'alice' });
    await gate.recover();
    expect(summary(seen)).toEqual([
      { via: 'deliver', kind: 'asked', to: 'finance_1', status: 'awaiting_approval' },
      { via: 'deliver', kind: 'asked', to: 'manager_1', status: 'awaiting_approval' },
    ]);
    const asked = seen.find(({ notice }) => notice.to === 'manager_1')?.notice;
    expect(asked).toMatchObject({ from: { principal: 'alice' }, call: { id: 'w1', input: WIRE.arguments } });
    expect(asked?.link).toBeUndefined();
    expect(new Set(seen.map(({ notice }) => notice.id)).size).toBe(2);

    expect(await gate.deny('w1', { principal: 'finance_1', reason: 'wrong account' })).toEqual({ ok: true });
    await gate.recover();
    await gate.recover();
    expect(summary(seen).slice(2)).toEqual([
      { via: 'update', kind: 'decided', to: 'finance_1', status: 'cancelled', ref: 'msg-finance_1' },
      { via: 'update', kind: 'decided', to: 'manager_1', status: 'cancelled', ref: 'msg-manager_1' },
    ]);
    expect(await noticeEvents(ledger)).toHaveLength(4);
    expect(await noticeEvents(ledger)).toContainEqual({
      actor: 'toolgate:test',
      code: 'notice_delivered',
      message: `notice ${asked?.id} (asked) to "manager_1" through "test" delivered (ref "msg-manager_1")`,
    });
    expect(await ledger.verify()).toMatchObject({ ok: true });
    await gate.close();
  });

  it('reminds only those who have not approved, tells the principals an escalation added, and tells everyone when it expired', async () => {
    const ledger = await (await target.fresh()).open();
    const { channel, seen } = recordingChannel('mail', { update: false });
    const { gate, clock } = setup(ledger, [channel]);
    const call = await gate.propose(WIRE, { session: 'chat_a', principal: 'alice' });
    await gate.recover();
    const hash = await inputHash(call.input);
    expect(await gate.approve('w1', { principal: 'manager_1', inputHash: hash })).toEqual({
      ok: true,
      left: 1,
    });
    clock.advance(SECOND);
    await gate.recover();
    clock.advance(SECOND);
    await gate.recover();
    clock.advance(3 * SECOND);
    await gate.recover();
    await gate.recover();
    expect(summary(seen)).toEqual([
      { via: 'deliver', kind: 'asked', to: 'finance_1', status: 'awaiting_approval' },
      { via: 'deliver', kind: 'asked', to: 'manager_1', status: 'awaiting_approval' },
      { via: 'deliver', kind: 'reminder', to: 'finance_1', status: 'awaiting_approval' },
      { via: 'deliver', kind: 'escalated', to: 'director_1', status: 'awaiting_approval' },
      { via: 'deliver', kind: 'expired', to: 'director_1', status: 'cancelled' },
      { via: 'deliver', kind: 'expired', to: 'finance_1', status: 'cancelled' },
      { via: 'deliver', kind: 'expired', to: 'manager_1', status: 'cancelled' },
    ]);
    expect(seen.find(({ notice }) => notice.kind === 'escalated')?.notice.call.approval?.asked).toEqual([
      'manager_1',
      'finance_1',
      'director_1',
    ]);
    await gate.close();
  });

  it('a channel that throws, hangs or answers garbage leaves the call waiting; the notice is tried again with the same id until taken', async () => {
    const ledger = await (await target.fresh()).open();
    const log = errorLog();
    const { channel, seen, hung, reached } = recordingChannel('chat', {
      script: ['throw', 'hang', 'garbage'],
    });
    const { gate, clock } = setup(ledger, [channel], {
      onError: log.onError,
      leaseMs: 4 * SECOND,
      tools: [
        defineTool({
          name: 'wire',
          inputSchema: { type: 'object' },
          approvers: () => ['manager_1'],
          execute: () => 'sent',
        }),
      ],
    });
    await gate.propose(WIRE, { session: 'chat_a', principal: 'alice' });
    await gate.recover(); // throws: tried again in 1 s
    clock.advance(SECOND);
    const hanging = gate.recover();
    await reached.next.promise;
    clock.advance(2 * SECOND); // half a lease: the channel's signal aborts
    await hanging;
    expect(hung[0]?.aborted).toBe(true);
    clock.advance(2 * SECOND);
    await gate.recover(); // garbage: tried again in 4 s
    expect(await gate.get('w1')).toMatchObject({ status: 'awaiting_approval' });
    clock.advance(4 * SECOND);
    await gate.recover();
    expect(seen.map(({ notice }) => notice.id)).toEqual(Array(4).fill(seen[0]?.notice.id));
    const id = seen[0]?.notice.id as string;
    const about = `notice ${id} (asked) to "manager_1" through "chat"`;
    expect(await noticeEvents(ledger)).toEqual([
      {
        actor: 'toolgate:chat',
        code: 'notice_failed',
        message: `${about} not delivered (attempt 1): the channel threw: 502 from the chat service; tried again in 1000 ms`,
      },
      {
        actor: 'toolgate:chat',
        code: 'notice_failed',
        message: `${about} not delivered (attempt 2): the channel did not answer within 2000 ms; tried again in 2000 ms`,
      },
      {
        actor: 'toolgate:chat',
        code: 'notice_failed',
        message: `${about} not delivered (attempt 3): the channel answered something else than nothing or { ref }; tried again in 4000 ms`,
      },
      {
        actor: 'toolgate:chat',
        code: 'notice_delivered',
        message: `${about} delivered (ref "msg-manager_1")`,
      },
    ]);
    expect(log.messages()).toHaveLength(3);
    expect(await gate.get('w1')).toMatchObject({ status: 'awaiting_approval' });
    await gate.close();
  });

  it('carries the confirm-page link of the principal it asks, when the gate has links', async () => {
    const ledger = await (await target.fresh()).open();
    const { channel, seen } = recordingChannel();
    const links = approvalLinks({
      secret: 'x'.repeat(32),
      baseUrl: 'https://app.example/api/toolgate',
      clock: createFakeClock(),
    });
    const { gate } = setup(ledger, [channel], { links });
    const call = await gate.propose(WIRE, { session: 'chat_a', principal: 'alice' });
    await gate.recover();
    const linkTo = (principal: string) => seen.find(({ notice }) => notice.to === principal)?.notice.link;
    expect(linkTo('manager_1')).toBe(gate.linkFor(call, 'manager_1'));
    expect(linkTo('finance_1')).toBe(gate.linkFor(call, 'finance_1'));
    expect(linkTo('manager_1')).not.toBe(linkTo('finance_1'));
    expect(linkTo('manager_1')).toMatch(/^https:\/\/app\.example\/api\/toolgate\/links\//);
    await gate.close();
  });
});

describeLedgers(
  'notices on two gates sharing one ledger',
  (target) => {
    it('each notice is delivered once when both deliver at once', async () => {
      const store = await target.fresh();
      const one = recordingChannel();
      const two = recordingChannel();
      const first = setup(await store.open(), [one.channel]);
      const second = setup(await store.open(), [two.channel]);
      await first.gate.propose(WIRE, { session: 'chat_a', principal: 'alice' });
      await Promise.all([first.gate.recover(), second.gate.recover()]);
      await Promise.all([first.gate.recover(), second.gate.recover()]);
      const delivered = [...one.seen, ...two.seen].map(({ notice }) => `${notice.kind}:${notice.to}`);
      expect(delivered.sort()).toEqual(['asked:finance_1', 'asked:manager_1']);
      await first.gate.close();
      await second.gate.close();
    });

    it('a gate closed while its channel hangs writes nothing; another delivers the notice, with the same id, once the claim runs out', async () => {
      const store = await target.fresh();
      const stuck = recordingChannel('chat', { script: ['hang'] });
      const fine = recordingChannel('chat');
      const first = setup(await store.open(), [stuck.channel], { leaseMs: 60 * SECOND });
      const second = setup(await store.open(), [fine.channel], { leaseMs: 60 * SECOND });
      await first.gate.propose({ ...WIRE, name: 'wire' }, { session: 'chat_a', principal: 'alice' });
      const hanging = first.gate.recover();
      await stuck.reached.next.promise;
      await first.gate.close();
      await hanging;
      expect(stuck.hung[0]?.aborted).toBe(true);
      // The one that hung is neither delivered nor failed: its claim runs out.
      const hung = stuck.seen[0]?.notice as Notice;
      const ledger = await store.open();
      const about = (id: string) => async () =>
        (await noticeEvents(ledger))
          .filter((event) => event.message?.includes(id))
          .map((event) => event.code);
      expect(await about(hung.id)()).toEqual([]);
      await second.gate.recover();
      expect(fine.seen.map(({ notice }) => notice.id)).not.toContain(hung.id);
      second.clock.advance(60 * SECOND);
      await second.gate.recover();
      expect(fine.seen.filter(({ notice }) => notice.id === hung.id)).toHaveLength(1);
      expect(await about(hung.id)()).toEqual(['notice_delivered']);
      expect((await noticeEvents(ledger)).map((event) => event.code)).not.toContain('notice_failed');
      await second.gate.close();
    });
  },
  { shared: true },
);

it('refuses channels without a name or deliver, or two with one name, when the gate is created', async () => {
  const { sqliteLedger } = await import('../../src/index.ts');
  const ledger = await sqliteLedger({ path: ':memory:' });
  const deliver = () => Promise.resolve();
  expect(() => createServerGate({ ledger, tools: [], channels: [{ name: '', deliver }] })).toThrow(
    'createServerGate: each channel needs a `name` and a `deliver(notice, { signal })` function.',
  );
  expect(() =>
    createServerGate({
      ledger,
      tools: [],
      channels: [
        { name: 'hook', deliver },
        { name: 'hook', deliver },
      ],
    }),
  ).toThrow('createServerGate: two channels are named "hook"; each needs a name of its own.');
  await ledger.close();
});
