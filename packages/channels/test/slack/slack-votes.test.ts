import { defineTool, inputHash, type ToolCallRecord } from '@toolgate/core';
import {
  approvalLinks,
  createServerGate,
  toolgateHandler,
  type Ledger,
  type ServerGate,
} from '@toolgate/server';
import { createFakeClock, deferred } from '@toolgate/test-utils';
import { afterEach, expect, it } from 'vitest';
import { slackChannel } from '../../src/slack/index.ts';
import { bearer } from '../../../server/test/support/http.ts';
import { describeLedgers } from '../../../server/test/support/ledgers.ts';
import { buttonOf, clickRequest, fakeSlack, type FakeSlack } from '../support/fake-slack.ts';

const SECRET = 'a Slack signing secret';
const BASE = 'https://app.example/api/toolgate';
const SLACK_IDS: Record<string, string> = {
  manager_1: 'UMANAGER1',
  finance_1: 'UFINANCE1',
  alice: 'UALICE',
  outsider: 'UOUTSIDER',
};
const PRINCIPALS = Object.fromEntries(Object.entries(SLACK_IDS).map(([principal, id]) => [id, principal]));
const WIRE = { id: 'w1', name: 'wire', arguments: { iban: 'DE02', amount_cents: 500_000 } };

const opened: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of opened.splice(0)) await close();
});

async function setup(
  ledger: Ledger,
  { approvals = 1, ackMs, failFirst = [] }: { approvals?: number; ackMs?: number; failFirst?: string[] } = {},
) {
  const clock = createFakeClock();
  const slackApi = await fakeSlack();
  slackApi.failWith(...failFirst.filter((error) => error !== 'unmapped'));
  const runs: number[] = [];
  const wire = defineTool({
    name: 'wire',
    inputSchema: {
      type: 'object',
      properties: { iban: { type: 'string' }, amount_cents: { type: 'integer', minimum: 1 } },
      required: ['iban', 'amount_cents'],
      additionalProperties: false,
    },
    approvers: () => ['manager_1', 'finance_1'],
    approvals,
    remindAfterMs: 10_000,
    approvalTtlMs: 60_000,
    execute: (input: { iban: string; amount_cents: number }) => {
      runs.push(input.amount_cents);
      return { sent: input.amount_cents };
    },
  });
  const links = approvalLinks({ secret: 'a secret of thirty-two bytes or more', baseUrl: BASE, clock });
  const errors: unknown[] = [];
  /** One app server: its own Slack channel (its own memory of the cards it posted) and gate. */
  const serve = () => {
    const slack = slackChannel({
      token: 'xoxb-test-token',
      signingSecret: SECRET,
      apiUrl: slackApi.apiUrl,
      slackUserOf: (principal) =>
        principal === 'finance_1' && failFirst.includes('unmapped') ? undefined : SLACK_IDS[principal],
      principalOf: (slackUserId) => PRINCIPALS[slackUserId],
      gate: () => gate,
      ...(ackMs === undefined ? {} : { ackMs }),
    });
    const gate = createServerGate({
      tools: [wire],
      ledger,
      clock,
      recover: false,
      links,
      channels: [slack],
      onError: (error) => errors.push(error),
    });
    return { slack, gate };
  };
  const { slack, gate } = serve();
  const http = toolgateHandler(gate, { authenticate: bearer, basePath: '/api/toolgate', links });
  opened.push(async () => {
    await gate.close();
    await slackApi.close();
  });
  await gate.propose(WIRE, { session: 'chat_a', principal: 'alice' });
  await gate.recover();
  return { gate, slack, slackApi, clock, runs, ledger, http, links, serve };
}

/** The card posted to a Slack user, and a click on one of its buttons as that (or another) user. */
function click(slackApi: FakeSlack, to: string, actionId: string, as = to, responseId = `${as}-${actionId}`) {
  const card = slackApi.calls.find((call) => call.method === 'chat.postMessage' && call.channel === to);
  const value = card === undefined ? undefined : buttonOf(card.blocks, actionId)?.['value'];
  if (typeof value !== 'string') throw new Error(`no ${actionId} button on the card to ${to}`);
  return clickRequest(SECRET, { user: as, actionId, value, responseUrl: slackApi.responseUrl(responseId) });
}

/** What the handler told the clicking person, by response id. */
const told = (slackApi: FakeSlack, id: string) =>
  slackApi.responses.filter((response) => response.id === id).map((response) => response.body['text']);

/** The refused votes in the audit trail written by the Slack channel. */
async function slackRefusals(ledger: Ledger) {
  return (await ledger.eventsAfter(0))
    .filter((event) => (event.reason as { channel?: string } | undefined)?.channel === 'slack')
    .map((event) => ({ callId: event.callId, actor: event.actor, reason: event.reason }));
}

/** Every refusal of a call in the audit trail (`from === to`, not a vote that counted), whoever wrote it. */
async function refusalsOf(ledger: Ledger, callId: string) {
  return (await ledger.eventsAfter(0))
    .filter(
      (event) =>
        event.callId === callId &&
        event.from === event.to &&
        event.reason !== undefined &&
        // Not a vote that counted, nor the gate's own note of a notice.
        !['approved', 'edited'].includes(event.reason.code) &&
        !event.actor.startsWith('toolgate:'),
    )
    .map((event) => ({ callId: event.callId, actor: event.actor, reason: event.reason }));
}

/** Whether a card still offers a button to press. */
const live = (blocks: readonly Record<string, unknown>[]) =>
  blocks.some((block) => block['type'] === 'actions');

describeLedgers(
  'Slack cards and clicks',
  (target) => {
    it('posts each asked approver a card with the whole input, its digest, buttons bound to the call and that digest, and the confirm page', async () => {
      const { slackApi } = await setup(await (await target.fresh()).open());
      const posted = slackApi.calls.filter((call) => call.method === 'chat.postMessage');
      expect(posted.map((call) => call.channel).sort()).toEqual(['UFINANCE1', 'UMANAGER1']);
      expect(posted.every((call) => call.token === 'xoxb-test-token')).toBe(true);
      const card = posted.find((call) => call.channel === 'UMANAGER1');
      const json = JSON.stringify(card?.blocks);
      const hash = await inputHash(WIRE.arguments);
      expect(card?.text).toContain('Approve wire?');
      expect(json).toContain(JSON.stringify(JSON.stringify(WIRE.arguments, null, 2)).slice(1, -1));
      expect(json).toContain(hash);
      expect(buttonOf(card?.blocks ?? [], 'toolgate_approve')?.['value']).toBe(
        JSON.stringify({ call: 'w1', hash }),
      );
      expect(String(buttonOf(card?.blocks ?? [], 'toolgate_open')?.['url'])).toMatch(
        /^https:\/\/app\.example\/api\/toolgate\/links\//u,
      );
    });

    it('decides an Approve click as the mapped principal, tells them, and updates every card of the call to the end with no buttons', async () => {
      const { gate, slack, slackApi, runs } = await setup(await (await target.fresh()).open());
      const response = await slack.handler(click(slackApi, 'UMANAGER1', 'toolgate_approve'));
      expect(response.status).toBe(200);
      await gate.settled('w1');
      // The record says who approved, and where: Slack, and the Slack account that clicked.
      expect(await gate.get('w1')).toMatchObject({
        status: 'committed',
        approval: { approvedBy: [{ principal: 'manager_1', via: { channel: 'slack', user: 'UMANAGER1' } }] },
      });
      expect(runs).toEqual([500_000]);
      expect(told(slackApi, 'UMANAGER1-toolgate_approve')).toEqual(['You approved this call. It runs now.']);
      await gate.recover();
      const updates = slackApi.calls.filter((call) => call.method === 'chat.update');
      expect(updates.map((call) => call.channel).sort()).toEqual(['DFINANCE1', 'DMANAGER1']);
      for (const update of updates) {
        expect(update.text).toMatch(/^wire: Approved\. Approved by manager_1; it (ran|is running)\.$/u);
        expect(live(update.blocks)).toBe(false);
      }
    });

    it('decides a Deny click as the mapped principal, naming them in the reason each card shows', async () => {
      const { gate, slack, slackApi, runs } = await setup(await (await target.fresh()).open());
      expect((await slack.handler(click(slackApi, 'UFINANCE1', 'toolgate_deny'))).status).toBe(200);
      const call = await gate.get('w1');
      expect(call).toMatchObject({
        status: 'cancelled',
        reason: { code: 'approval_denied', message: 'denied in Slack by finance_1' },
      });
      expect(runs).toEqual([]);
      await gate.recover();
      const updates = slackApi.calls.filter((call) => call.method === 'chat.update');
      expect(updates).toHaveLength(2);
      expect(
        updates.every(
          (update) => update.text.includes('Denied: denied in Slack by finance_1') && !live(update.blocks),
        ),
      ).toBe(true);
    });

    it('posts a reminder card, and updates both the first card and the reminder when the call ends', async () => {
      const { gate, slack, slackApi, clock } = await setup(await (await target.fresh()).open());
      clock.advance(10_000);
      await gate.recover();
      const toManager = slackApi.calls.filter(
        (call) => call.method === 'chat.postMessage' && call.channel === 'UMANAGER1',
      );
      expect(toManager.map((call) => call.text.split('?')[0])).toEqual([
        'Approve wire',
        'Reminder: approve wire',
      ]);
      await slack.handler(click(slackApi, 'UFINANCE1', 'toolgate_deny'));
      await gate.recover();
      const updated = slackApi.calls.filter(
        (call) => call.method === 'chat.update' && call.channel === 'DMANAGER1',
      );
      expect(new Set(updated.map((call) => call.ts)).size).toBe(2);
      expect(updated.every((call) => call.text.startsWith('wire: Denied.') && !live(call.blocks))).toBe(true);
    });

    it('updates the first card too when another app server posted the reminder', async () => {
      const { gate, slackApi, clock, serve } = await setup(await (await target.fresh()).open());
      await gate.close();
      const other = serve();
      opened.unshift(() => other.gate.close());
      clock.advance(10_000);
      await other.gate.recover();
      const toManager = slackApi.calls.filter(
        (call) => call.method === 'chat.postMessage' && call.channel === 'UMANAGER1',
      );
      expect(toManager.map((call) => call.text.split('?')[0])).toEqual([
        'Approve wire',
        'Reminder: approve wire',
      ]);
      await other.slack.handler(click(slackApi, 'UFINANCE1', 'toolgate_deny'));
      await other.gate.recover();
      const updated = slackApi.calls.filter(
        (call) => call.method === 'chat.update' && call.channel === 'DMANAGER1',
      );
      expect(new Set(updated.map((call) => call.ts)).size).toBe(2);
      expect(updated.every((call) => call.text.startsWith('wire: Denied.') && !live(call.blocks))).toBe(true);
    });

    it('updates every card to say the call expired when nobody decided in time', async () => {
      const { gate, slackApi, clock } = await setup(await (await target.fresh()).open());
      clock.advance(60_000);
      await gate.recover();
      await gate.recover();
      expect(await gate.get('w1')).toMatchObject({
        status: 'cancelled',
        reason: { code: 'approval_expired' },
      });
      const updates = slackApi.calls.filter((call) => call.method === 'chat.update');
      expect(new Set(updates.map((call) => `${call.channel}/${call.ts}`)).size).toBe(4);
      expect(
        updates.every(
          (call) =>
            call.text === 'wire: Expired. Nobody decided in time; it was cancelled and will not run.' &&
            !live(call.blocks),
        ),
      ).toBe(true);
    });

    it('ends the call once when a Slack approve and a link deny arrive together, and both cards show that one end', async () => {
      const { gate, slack, slackApi, runs, links, http } = await setup(await (await target.fresh()).open());
      const call = (await gate.get('w1')) as ToolCallRecord;
      const deny = new Request(links.linkFor(call, 'finance_1'), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'vote=deny',
      });
      const [clicked, denied] = await Promise.all([
        slack.handler(click(slackApi, 'UMANAGER1', 'toolgate_approve')),
        http(deny),
      ]);
      expect(clicked.status).toBe(200);
      await gate.settled('w1');
      const ended = await gate.get('w1');
      const approved = ended?.status === 'committed';
      expect(ended?.status).toBe(approved ? 'committed' : 'cancelled');
      expect(denied.status).toBe(approved ? 409 : 200);
      expect(runs).toEqual(approved ? [500_000] : []);
      expect(told(slackApi, 'UMANAGER1-toolgate_approve')).toEqual([
        expect.stringMatching(approved ? /^You approved this call/u : /already (decided|ended)/u),
      ]);
      await gate.recover();
      const updates = slackApi.calls.filter((call) => call.method === 'chat.update');
      expect(updates.map((update) => update.channel).sort()).toEqual(['DFINANCE1', 'DMANAGER1']);
      const end = approved ? /^wire: Approved\. Approved by manager_1;/u : /^wire: Denied\. Denied: /u;
      for (const update of updates) {
        expect(update.text).toMatch(end);
        expect(live(update.blocks)).toBe(false);
      }
    });

    it('lets one of two approvers clicking at once on a 1-of-2 call decide it; the other is told it was decided, and it runs once', async () => {
      const { gate, slack, slackApi, runs, ledger } = await setup(await (await target.fresh()).open());
      const answers = await Promise.all([
        slack.handler(click(slackApi, 'UMANAGER1', 'toolgate_approve')),
        slack.handler(click(slackApi, 'UFINANCE1', 'toolgate_approve')),
      ]);
      expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
      await gate.settled('w1');
      expect((await gate.get('w1'))?.status).toBe('committed');
      expect(runs).toEqual([500_000]);
      const said = [
        ...told(slackApi, 'UMANAGER1-toolgate_approve'),
        ...told(slackApi, 'UFINANCE1-toolgate_approve'),
      ].sort();
      expect(said).toEqual([
        expect.stringMatching(/already (decided|ended)/u),
        'You approved this call. It runs now.',
      ]);
      expect((await slackRefusals(ledger)).map(({ reason }) => (reason as { code: string }).code)).toEqual([
        expect.stringMatching(/^(not_awaiting|settled)$/u),
      ]);
    });

    it('counts a redelivered click once: the same request again decides nothing more and writes nothing more', async () => {
      const { gate, slack, slackApi, ledger } = await setup(await (await target.fresh()).open(), {
        approvals: 2,
      });
      const first = click(slackApi, 'UMANAGER1', 'toolgate_approve');
      const again = first.clone();
      expect((await slack.handler(first)).status).toBe(200);
      const events = (await ledger.eventsAfter(0)).length;
      expect((await slack.handler(again)).status).toBe(200);
      expect((await ledger.eventsAfter(0)).length).toBe(events);
      expect((await gate.get('w1'))?.approval).toMatchObject({
        left: 1,
        approvedBy: [{ principal: 'manager_1' }],
      });
      expect(told(slackApi, 'UMANAGER1-toolgate_approve')).toEqual([
        'Your approval is recorded. 1 more approval is needed before it runs.',
      ]);
    });

    it('keeps where each vote of a quorum came from: a Slack click names Slack and the account, the app’s page nothing', async () => {
      const { gate, slack, slackApi, clock } = await setup(await (await target.fresh()).open(), {
        approvals: 2,
      });
      expect((await slack.handler(click(slackApi, 'UMANAGER1', 'toolgate_approve'))).status).toBe(200);
      clock.advance(1000);
      const call = await gate.get('w1');
      expect(
        await gate.approve('w1', { principal: 'finance_1', inputHash: await inputHash(call?.input) }),
      ).toEqual({ ok: true, left: 0 });
      await gate.settled('w1');
      await gate.recover();
      expect((await gate.get('w1'))?.approval?.approvedBy).toEqual([
        {
          principal: 'manager_1',
          at: expect.any(Number) as unknown,
          via: { channel: 'slack', user: 'UMANAGER1' },
        },
        { principal: 'finance_1', at: expect.any(Number) as unknown },
      ]);
    });

    it('leaves the call waiting when Slack refuses a card, and posts it on a later try', async () => {
      const { gate, slackApi, ledger, clock } = await setup(await (await target.fresh()).open(), {
        failFirst: ['ratelimited', 'ratelimited'],
      });
      expect(slackApi.calls).toEqual([]);
      expect((await gate.get('w1'))?.status).toBe('awaiting_approval');
      const failed = (await ledger.eventsAfter(0)).filter((event) => event.reason?.code === 'notice_failed');
      expect(failed.map((event) => event.reason?.message)).toEqual([
        expect.stringMatching(/ratelimited/u),
        expect.stringMatching(/ratelimited/u),
      ]);
      clock.advance(2000);
      await gate.recover();
      expect(slackApi.calls.map((call) => call.channel).sort()).toEqual(['UFINANCE1', 'UMANAGER1']);
    });

    it('fails the delivery to a principal with no Slack user, audited, and the call keeps waiting', async () => {
      const { gate, slackApi, ledger } = await setup(await (await target.fresh()).open(), {
        failFirst: ['unmapped'],
      });
      expect(slackApi.calls.map((call) => call.channel)).toEqual(['UMANAGER1']);
      const failed = (await ledger.eventsAfter(0)).filter((event) => event.reason?.code === 'notice_failed');
      expect(failed.map((event) => event.reason?.message)).toEqual([
        expect.stringMatching(/no Slack user for principal "finance_1"/u),
      ]);
      expect((await gate.get('w1'))?.status).toBe('awaiting_approval');
    });

    it('refuses a click whose signature does not hold with 401, audited as an event of the channel naming no call', async () => {
      const { gate, slack, slackApi, ledger } = await setup(await (await target.fresh()).open());
      const genuine = click(slackApi, 'UMANAGER1', 'toolgate_approve');
      const body = await genuine.text();
      const forged = new Request(genuine.url, {
        method: 'POST',
        headers: {
          'x-slack-request-timestamp': genuine.headers.get('x-slack-request-timestamp') ?? '',
          'x-slack-signature': `v0=${'0'.repeat(64)}`,
        },
        body,
      });
      expect((await slack.handler(forged)).status).toBe(401);
      expect((await gate.get('w1'))?.status).toBe('awaiting_approval');
      expect(await slackRefusals(ledger)).toEqual([
        {
          callId: '',
          actor: 'toolgate:slack',
          reason: {
            code: 'invalid_signature',
            channel: 'slack',
            message: 'X-Slack-Signature does not match the body and the signing secret',
          },
        },
      ]);
      expect(slackApi.responses).toEqual([]);
    });

    it('refuses a click signed more than five minutes ago as a possible replay, audited', async () => {
      const { gate, slack, slackApi, ledger } = await setup(await (await target.fresh()).open());
      const card = slackApi.calls.find((call) => call.channel === 'UMANAGER1');
      const value = String(buttonOf(card?.blocks ?? [], 'toolgate_approve')?.['value']);
      const old = Math.floor(Date.now() / 1000) - 6 * 60;
      const replay = clickRequest(
        SECRET,
        { user: 'UMANAGER1', actionId: 'toolgate_approve', value, responseUrl: slackApi.responseUrl('r') },
        old,
      );
      expect((await slack.handler(replay)).status).toBe(401);
      expect((await gate.get('w1'))?.status).toBe('awaiting_approval');
      const [refusal] = await slackRefusals(ledger);
      expect(refusal?.reason).toMatchObject({
        code: 'invalid_signature',
        message: expect.stringMatching(/more than 5 minutes/u),
      });
    });

    it('refuses a click from a Slack user who maps to no principal, telling them, audited with their Slack id', async () => {
      const { gate, slack, slackApi, ledger } = await setup(await (await target.fresh()).open());
      expect(
        (await slack.handler(click(slackApi, 'UMANAGER1', 'toolgate_approve', 'USTRANGER'))).status,
      ).toBe(200);
      expect((await gate.get('w1'))?.status).toBe('awaiting_approval');
      expect(told(slackApi, 'USTRANGER-toolgate_approve')[0]).toMatch(/not linked to anyone this app knows/u);
      expect(await slackRefusals(ledger)).toEqual([
        {
          callId: 'w1',
          actor: 'toolgate:slack',
          reason: {
            code: 'forbidden',
            channel: 'slack',
            user: 'USTRANGER',
            message: 'Slack user USTRANGER maps to no principal',
          },
        },
      ]);
    });

    it('refuses a click from a mapped principal the call did not ask', async () => {
      const { gate, slack, slackApi, ledger } = await setup(await (await target.fresh()).open());
      await slack.handler(click(slackApi, 'UMANAGER1', 'toolgate_approve', 'UOUTSIDER'));
      expect((await gate.get('w1'))?.status).toBe('awaiting_approval');
      // The gate does not tell a principal it did not ask that the call exists.
      expect(told(slackApi, 'UOUTSIDER-toolgate_approve')).toEqual([
        'There is no such call, or you are not one of those asked to decide it. Nothing was decided.',
      ]);
      // One event: the gate's own refusal, naming Slack and the clicking user (what the person was
      // told hides the call; the trail says why).
      expect(await refusalsOf(ledger, 'w1')).toMatchObject([
        {
          callId: 'w1',
          actor: 'outsider',
          reason: { code: 'forbidden', channel: 'slack', user: 'UOUTSIDER', principal: 'outsider' },
        },
      ]);
    });

    it('refuses a signed click naming a call the ledger does not hold, audited once as an event of the channel', async () => {
      const { slack, slackApi, ledger } = await setup(await (await target.fresh()).open());
      const hash = await inputHash(WIRE.arguments);
      await slack.handler(
        clickRequest(SECRET, {
          user: 'UMANAGER1',
          actionId: 'toolgate_approve',
          value: JSON.stringify({ call: 'w_gone', hash }),
          responseUrl: slackApi.responseUrl('gone'),
        }),
      );
      expect(told(slackApi, 'gone')).toEqual([
        'There is no such call, or you are not one of those asked to decide it. Nothing was decided.',
      ]);
      expect(await slackRefusals(ledger)).toMatchObject([
        {
          callId: '',
          actor: 'manager_1',
          reason: { code: 'not_found', channel: 'slack', user: 'UMANAGER1', principal: 'manager_1' },
        },
      ]);
    });

    it('refuses the requester approving their own call from a card', async () => {
      const { gate, slack, slackApi, ledger } = await setup(await (await target.fresh()).open());
      await slack.handler(click(slackApi, 'UMANAGER1', 'toolgate_approve', 'UALICE'));
      expect((await gate.get('w1'))?.status).toBe('awaiting_approval');
      expect(await refusalsOf(ledger, 'w1')).toMatchObject([
        {
          callId: 'w1',
          actor: 'alice',
          reason: { code: 'forbidden', channel: 'slack', user: 'UALICE', principal: 'alice' },
        },
      ]);
    });

    it('refuses Approve and Deny from a card of an input the call no longer holds (stale), and the call keeps waiting', async () => {
      const { gate, slack, slackApi, ledger } = await setup(await (await target.fresh()).open());
      const old = JSON.stringify({ call: 'w1', hash: await inputHash({ iban: 'DE02', amount_cents: 1 }) });
      for (const actionId of ['toolgate_approve', 'toolgate_deny'])
        await slack.handler(
          clickRequest(SECRET, {
            user: 'UMANAGER1',
            actionId,
            value: old,
            responseUrl: slackApi.responseUrl(actionId),
          }),
        );
      expect((await gate.get('w1'))?.status).toBe('awaiting_approval');
      expect(told(slackApi, 'toolgate_approve')[0]).toMatch(/input changed after this card was posted/u);
      expect(told(slackApi, 'toolgate_deny')[0]).toMatch(/input changed after this card was posted/u);
      // Approve refused by the gate, Deny by the channel: each once, each naming Slack and the user.
      expect(await refusalsOf(ledger, 'w1')).toMatchObject([
        { reason: { code: 'stale', channel: 'slack', user: 'UMANAGER1', principal: 'manager_1' } },
        { reason: { code: 'stale', channel: 'slack', user: 'UMANAGER1', principal: 'manager_1' } },
      ]);
    });

    it('refuses a click on a call decided elsewhere, and one that expired, saying which', async () => {
      const { gate, slack, slackApi, ledger, clock } = await setup(await (await target.fresh()).open());
      await gate.propose({ ...WIRE, id: 'w2' }, { session: 'chat_a', principal: 'alice' });
      await gate.recover();
      await gate.deny('w1', { principal: 'finance_1' });
      await slack.handler(click(slackApi, 'UMANAGER1', 'toolgate_approve', 'UMANAGER1', 'decided'));
      expect(told(slackApi, 'decided')).toEqual(['This call has already ended. Nothing was changed.']);
      clock.advance(61_000);
      const card = slackApi.calls.filter(
        (call) => call.channel === 'UMANAGER1' && call.method === 'chat.postMessage',
      )[1];
      const value = String(buttonOf(card?.blocks ?? [], 'toolgate_approve')?.['value']);
      expect(JSON.parse(value)).toMatchObject({ call: 'w2' });
      await slack.handler(
        clickRequest(SECRET, {
          user: 'UMANAGER1',
          actionId: 'toolgate_approve',
          value,
          responseUrl: slackApi.responseUrl('expired'),
        }),
      );
      expect(await gate.get('w2')).toMatchObject({
        status: 'cancelled',
        reason: { code: 'approval_expired' },
      });
      expect(told(slackApi, 'expired')[0]).toMatch(/expired|already ended/u);
      const codes = (await slackRefusals(ledger)).map(
        ({ callId, reason }) => `${callId}:${(reason as { code: string }).code}`,
      );
      expect(codes[0]).toBe('w1:settled');
      expect(codes[1]).toMatch(/^w2:(expired|settled|not_awaiting)$/u);
    });

    it('answers Slack within the ack time while the vote is still being decided, and tells the person once it is', async () => {
      const { gate, slackApi } = await setup(await (await target.fresh()).open());
      const slow = deferred();
      const slowGate: ServerGate = {
        ...gate,
        approve: async (id, options) => {
          await slow.promise;
          return gate.approve(id, options);
        },
      };
      const slack = slackChannel({
        token: 'xoxb-test-token',
        signingSecret: SECRET,
        apiUrl: slackApi.apiUrl,
        slackUserOf: (principal) => SLACK_IDS[principal],
        principalOf: (slackUserId) => PRINCIPALS[slackUserId],
        gate: () => slowGate,
        ackMs: 10,
      });
      const answer = await slack.handler(click(slackApi, 'UMANAGER1', 'toolgate_approve'));
      expect(answer.status).toBe(200);
      expect((await gate.get('w1'))?.status).toBe('awaiting_approval');
      expect(told(slackApi, 'UMANAGER1-toolgate_approve')).toEqual([]);
      slow.resolve();
      await expect
        .poll(() => told(slackApi, 'UMANAGER1-toolgate_approve'))
        .toEqual(['You approved this call. It runs now.']);
      expect((await gate.settled('w1'))?.status).toBe('committed');
    });
  },
  { shared: true },
);
