import { createHash } from 'node:crypto';
import { defineTool, inputHash } from '@toolgate/core';
import { canonicalJson } from '@toolgate/core/kit';
import { createFakeClock } from '@toolgate/test-utils';
import { afterEach, expect, it } from 'vitest';
import { approvalLinks, createServerGate, toolgateHandler, type Ledger } from '../../src/index.ts';
import { bearer, serve } from '../support/http.ts';
import { describeLedgers, type Target } from '../support/ledgers.ts';
import { wireSchema } from '../support/processes/wire-app.ts';

type Wire = { iban: string; amount_cents: number; memo?: string };

const opened: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of opened.splice(0)) await close();
});

const LINK_TTL = 60 * 60 * 1000;
const MEMO = `<script>alert("x")</script> & 'quotes' ${'long memo '.repeat(500)}end of memo`;
const WIRE = { id: 'w1', name: 'wire', arguments: { iban: 'DE02', amount_cents: 500_000, memo: MEMO } };

async function served(
  target: Target,
  { approvals = 1, linkNeedsLogin = false }: { approvals?: number; linkNeedsLogin?: boolean } = {},
) {
  const ledger = await (await target.fresh()).open();
  const clock = createFakeClock();
  const runs: string[] = [];
  const wire = defineTool({
    name: 'wire',
    inputSchema: wireSchema,
    approvals,
    approvers: () => ['manager_1', 'finance_1'],
    execute: (input: Wire) => {
      runs.push(`${input.iban}:${input.amount_cents}`);
      return { sent: input.amount_cents };
    },
  });
  const links = approvalLinks({
    secret: 'a secret of thirty-two bytes or more',
    baseUrl: 'https://app.example/api/toolgate',
    ttlMs: LINK_TTL,
    clock,
  });
  const gate = createServerGate({ tools: [wire], ledger, recover: false, clock, links });
  const server = await serve(
    toolgateHandler(gate, { authenticate: bearer, basePath: '/api/toolgate', links, linkNeedsLogin }),
  );
  opened.push(async () => {
    await server.close();
    await gate.close();
  });
  const call = await gate.propose(WIRE, { session: 'chat_a', principal: 'alice' });
  expect(call.status).toBe('awaiting_approval');
  /** The link the gate makes, served by this test's server (the token signs claims, not the host). */
  const local = (url: string) => url.replace('https://app.example', server.origin);
  const linkOf = (principal: string, id = 'w1') =>
    local(links.urlOf(links.sign({ callId: id, principal, inputHash: hashOf(call.input) })));
  return {
    ledger,
    gate,
    links,
    clock,
    runs,
    call,
    local,
    linkOf,
    link: (principal: string) => local(gate.linkFor(call, principal) as string),
  };
}

const hashOf = (input: unknown) => createHash('sha256').update(canonicalJson(input)).digest('hex');

async function open(url: string, method = 'GET', headers: Record<string, string> = {}) {
  const response = await fetch(url, { method, headers });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

async function vote(url: string, form: Record<string, string>, headers: Record<string, string> = {}) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(form).toString(),
  });
  return { status: response.status, text: await response.text() };
}

async function voteJson(url: string, body: unknown) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, text: await response.text() };
}

/** The page's heading: what a person reads first. */
const heading = (html: string) => /<h1>(.*?)<\/h1>/.exec(html)?.[1];

async function refusals(ledger: Ledger, callId = 'w1'): Promise<{ actor: string; reason: unknown }[]> {
  return (await ledger.eventsAfter(0))
    .filter(
      (event) =>
        event.callId === callId &&
        event.from === event.to &&
        event.reason !== undefined &&
        // Notes of the votes that counted, not refusals.
        !['approved', 'edited'].includes(event.reason.code),
    )
    .map((event) => ({ actor: event.actor, reason: event.reason }));
}

describeLedgers('approval links over HTTP', (target) => {
  it('GET and HEAD show the whole input, its digest, who asks and who the link is for, and decide nothing', async () => {
    const { ledger, gate, runs, link, call, clock } = await served(target);
    const url = link('manager_1');
    const before = await ledger.head();
    const page = await open(url);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.headers.get('x-robots-tag')).toMatch(/noindex/);
    expect(page.headers.get('content-security-policy')).toMatch(
      /default-src 'none'; style-src 'sha256-[A-Za-z0-9+/=]+'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'/,
    );
    expect(page.text).toContain('<html lang="en">');
    expect(heading(page.text)).toBe('Approve wire?');
    const escaped = (text: string) =>
      text
        .replaceAll('&', '&amp;')
        .replaceAll('<', '&lt;')
        .replaceAll('>', '&gt;')
        .replaceAll('"', '&quot;')
        .replaceAll("'", '&#39;');
    // The input whole, pretty-printed and escaped: the memo's 5,000 characters are all there.
    expect(page.text).toContain(escaped(JSON.stringify(call.input, null, 2)));
    expect(page.text).not.toContain('<script');
    expect(page.text).toContain(await inputHash(call.input));
    expect(page.text).toMatch(/<dt>Asked by<\/dt><dd>alice<\/dd>/);
    expect(page.text).toMatch(/<dt>This link is for<\/dt><dd>manager_1<\/dd>/);
    expect(page.text).toContain(`datetime="${new Date(clock.now() + LINK_TTL).toISOString()}"`);
    expect(page.text).toContain('<form method="post">');
    expect(page.text).toContain('<label for="reason">Reason for denying (optional)</label>');
    expect(page.text).not.toMatch(/<script|onclick|javascript:/i);

    const head = await open(url, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    expect(head.headers.get('cache-control')).toBe('no-store');

    expect((await gate.get('w1'))?.status).toBe('awaiting_approval');
    expect(runs).toEqual([]);
    expect(await ledger.head()).toBe(before);
    expect((await open(url, 'PUT')).status).toBe(405);
  });

  it('a POST approves once and the tool runs once; the second POST is refused with a page that says so, and audited', async () => {
    const { ledger, gate, runs, link } = await served(target);
    const url = link('manager_1');
    const first = await vote(url, { vote: 'approve', callId: 'w1' });
    expect(first.status).toBe(200);
    expect(heading(first.text)).toBe('Approved');
    expect(first.text).toContain('You approved this call. It runs now.');
    expect(await gate.settled('w1')).toMatchObject({ status: 'committed', output: { sent: 500_000 } });
    expect((await ledger.eventsAfter(0)).find((event) => event.to === 'executing')?.actor).toBe('manager_1');

    const again = await vote(url, { vote: 'approve', callId: 'w1' });
    expect(again.status).toBe(409);
    expect(heading(again.text)).toBe('Already decided');
    expect(runs).toEqual(['DE02:500000']);
    expect(await refusals(ledger)).toEqual([
      {
        actor: 'manager_1',
        reason: {
          code: 'settled',
          message: 'the call has already ended',
          channel: 'links',
          principal: 'manager_1',
        },
      },
    ]);
    // The page now says there is nothing left to decide, and offers no form.
    const page = await open(url);
    expect(page.text).toContain('Nothing to decide: this call is committed.');
    expect(page.text).not.toContain('<form');
    expect(await ledger.verify()).toMatchObject({ ok: true });
  });

  it('a JSON vote denies with the reason given, and nothing runs', async () => {
    const { gate, runs, link } = await served(target);
    const answer = await voteJson(link('finance_1'), { vote: 'deny', reason: 'wrong account' });
    expect(answer.status).toBe(200);
    expect(heading(answer.text)).toBe('Denied');
    expect(await gate.get('w1')).toMatchObject({
      status: 'cancelled',
      reason: { code: 'approval_denied', message: 'wrong account' },
    });
    expect(runs).toEqual([]);
    expect((await voteJson(link('finance_1'), { vote: 'maybe' })).status).toBe(400);
  });

  it('two links make a quorum of two: the first approval waits, a repeat is refused, the second runs the call once', async () => {
    const { ledger, gate, runs, link, clock } = await served(target, { approvals: 2 });
    const manager = link('manager_1');
    const first = await vote(manager, { vote: 'approve' });
    expect(first.status).toBe(200);
    expect(first.text).toContain(
      'Your approval is recorded. 1 more approval is needed before the call runs.',
    );
    expect((await gate.get('w1'))?.status).toBe('awaiting_approval');
    expect(runs).toEqual([]);
    expect((await open(manager)).text).toContain(
      'You have approved this input. The call waits for the others.',
    );

    const repeat = await vote(manager, { vote: 'approve' });
    expect(repeat.status).toBe(409);
    expect(heading(repeat.text)).toBe('You have already approved');
    expect(await refusals(ledger)).toContainEqual({
      actor: 'manager_1',
      reason: expect.objectContaining({ code: 'already_approved' }) as unknown,
    });

    clock.advance(1000);
    expect((await vote(link('finance_1'), { vote: 'approve' })).status).toBe(200);
    expect(await gate.settled('w1')).toMatchObject({
      status: 'committed',
      approval: {
        left: 0,
        approvedBy: [
          { principal: 'manager_1', via: { channel: 'links' } },
          { principal: 'finance_1', via: { channel: 'links' } },
        ],
      },
    });
    expect(runs).toEqual(['DE02:500000']);
  });

  it('a link made before an edit is refused as stale, to approve and to deny, and its page offers no form', async () => {
    const { ledger, gate, runs, link, call, local } = await served(target, { approvals: 2 });
    const old = link('finance_1');
    const edited = { ...(call.input as Wire), amount_cents: 400_000 };
    expect(
      await gate.approve('w1', {
        principal: 'manager_1',
        inputHash: await inputHash(call.input),
        input: edited,
      }),
    ).toEqual({ ok: true, left: 1 });

    const approve = await vote(old, { vote: 'approve' });
    expect(approve.status).toBe(409);
    expect(heading(approve.text)).toBe('The input has changed');
    const deny = await vote(old, { vote: 'deny', reason: 'no' });
    expect(deny.status).toBe(409);
    expect(heading(deny.text)).toBe('The input has changed');
    const page = await open(old);
    expect(page.text).toContain('This link was made for an input the call no longer holds');
    expect(page.text).not.toContain('<form');
    expect(await refusals(ledger)).toEqual([
      {
        // Refused by the gate, audited once, naming the channel the vote came through.
        actor: 'finance_1',
        reason: expect.objectContaining({
          code: 'stale',
          channel: 'links',
          principal: 'finance_1',
        }) as unknown,
      },
      {
        actor: 'finance_1',
        reason: {
          code: 'stale',
          message: 'the denial names other arguments than the call holds',
          channel: 'links',
          principal: 'finance_1',
        },
      },
    ]);
    expect((await gate.get('w1'))?.status).toBe('awaiting_approval');
    expect(runs).toEqual([]);

    // The edited call's own link for finance_1 (the one the edit's notice carries).
    const fresh = local(gate.linkFor((await gate.get('w1')) ?? call, 'finance_1') as string);
    expect((await vote(fresh, { vote: 'approve' })).status).toBe(200);
    expect(await gate.settled('w1')).toMatchObject({ status: 'committed', output: { sent: 400_000 } });
    expect(runs).toEqual(['DE02:400000']);
  });

  it('a changed byte, a forged or a truncated token is refused 403 and audited as an event of the channel, never of a call', async () => {
    const { ledger, gate, runs, link } = await served(target);
    const url = link('manager_1');
    const token = url.slice(url.lastIndexOf('/') + 1);
    const base = url.slice(0, url.lastIndexOf('/') + 1);
    const flipped = token.slice(0, 10) + (token[10] === 'A' ? 'B' : 'A') + token.slice(11);
    const forged = `${Buffer.from(JSON.stringify({ callId: 'w1', principal: 'manager_1' })).toString('base64url')}.${'x'.repeat(43)}`;
    for (const bad of [flipped, forged, token.slice(0, -5)]) {
      expect((await open(base + bad)).status).toBe(403);
      const refused = await vote(base + bad, { vote: 'approve' });
      expect(refused.status).toBe(403);
      expect(heading(refused.text)).toBe('This link is not valid');
    }
    const channel = (await ledger.eventsAfter(0)).filter((event) => event.callId === '');
    expect(channel).toHaveLength(3);
    expect(channel[0]).toMatchObject({
      session: '',
      actor: 'toolgate:links',
      reason: { code: 'invalid_link', channel: 'links' },
    });
    expect(await refusals(ledger)).toEqual([]);
    expect((await gate.get('w1'))?.status).toBe('awaiting_approval');
    expect(runs).toEqual([]);
    expect(await ledger.verify()).toMatchObject({ ok: true });
  });

  it('a signed link to a call the ledger does not hold shows nothing, and each vote on it is refused 404 and audited as an event of the channel', async () => {
    const { ledger, gate, runs, linkOf } = await served(target);
    const ghost = linkOf('manager_1', 'ghost');
    const shown = await open(ghost);
    expect(shown.status).toBe(404);
    expect(heading(shown.text)).toBe('Call not found');
    for (const form of [{ vote: 'approve' }, { vote: 'deny' }]) {
      const refused = await vote(ghost, form);
      expect(refused.status).toBe(404);
      expect(heading(refused.text)).toBe('Call not found');
    }
    const channel = (await ledger.eventsAfter(0)).filter((event) => event.callId === '');
    expect(channel.map((event) => [event.actor, event.reason])).toEqual([
      [
        'manager_1',
        expect.objectContaining({ code: 'not_found', channel: 'links', principal: 'manager_1' }) as unknown,
      ],
      [
        'manager_1',
        expect.objectContaining({ code: 'not_found', channel: 'links', principal: 'manager_1' }) as unknown,
      ],
    ]);
    expect(await refusals(ledger, 'ghost')).toEqual([]);
    expect((await gate.get('w1'))?.status).toBe('awaiting_approval');
    expect(runs).toEqual([]);
  });

  it('an expired link is refused 410 and audited on its call, and nothing runs', async () => {
    const { ledger, gate, runs, link, clock } = await served(target);
    const url = link('manager_1');
    clock.advance(LINK_TTL);
    expect((await open(url)).status).toBe(410);
    const refused = await vote(url, { vote: 'approve' });
    expect(refused.status).toBe(410);
    expect(heading(refused.text)).toBe('This link has expired');
    expect(await refusals(ledger)).toEqual([
      {
        actor: 'manager_1',
        reason: expect.objectContaining({
          code: 'link_expired',
          channel: 'links',
          principal: 'manager_1',
        }) as unknown,
      },
    ]);
    expect((await gate.get('w1'))?.status).toBe('awaiting_approval');
    expect(runs).toEqual([]);
  });

  it('a link for a principal who was not asked, or for the requester, decides nothing and is audited', async () => {
    const { ledger, gate, runs, linkOf } = await served(target);
    const shown = await open(linkOf('mallory'));
    expect(shown.text).toContain('mallory was not asked to decide this call.');
    expect(shown.text).not.toContain('<form');
    const stranger = await vote(linkOf('mallory'), { vote: 'approve' });
    expect(stranger.status).toBe(404);
    const self = await vote(linkOf('alice'), { vote: 'approve' });
    expect(self.status).toBe(403);
    expect(self.text).toContain('asked for this call and may not approve it');
    expect(await refusals(ledger)).toEqual([
      {
        actor: 'mallory',
        reason: {
          code: 'forbidden',
          message: '"mallory" may not see session "chat_a"',
          channel: 'links',
          principal: 'mallory',
        },
      },
      {
        actor: 'alice',
        reason: {
          code: 'forbidden',
          message: '"alice" asked for this call and may not approve it: another person must',
          channel: 'links',
          principal: 'alice',
        },
      },
    ]);
    expect((await gate.get('w1'))?.status).toBe('awaiting_approval');
    expect(runs).toEqual([]);
  });

  it('shows an agent’s call as asked by the agent on behalf of its person, who may not approve it by link', async () => {
    const { ledger, gate, runs, local } = await served(target);
    const call = await gate.propose(
      { ...WIRE, id: 'w2' },
      { session: 'chat_b', principal: 'agent_7', onBehalfOf: 'bob' },
    );
    const page = await open(local(gate.linkFor(call, 'manager_1') as string));
    expect(page.text).toMatch(/<dt>Asked by<\/dt><dd>agent_7<\/dd><dt>On behalf of<\/dt><dd>bob<\/dd>/);
    const self = await vote(local(gate.linkFor(call, 'bob') as string), { vote: 'approve' });
    expect(self.status).toBe(403);
    expect(self.text).toContain('is the person this call was made for and may not approve it');
    expect(await refusals(ledger, 'w2')).toEqual([
      {
        actor: 'bob',
        reason: {
          code: 'forbidden',
          message: '"bob" is the person this call was made for and may not approve it: another person must',
          channel: 'links',
          principal: 'bob',
        },
      },
    ]);
    expect((await gate.get('w2'))?.status).toBe('awaiting_approval');
    expect(runs).toEqual([]);
  });

  it('a vote naming another call than its link is refused and audited on the link’s call; neither call moves', async () => {
    const { ledger, gate, runs, link } = await served(target);
    await gate.propose({ ...WIRE, id: 'w2' }, { session: 'chat_a', principal: 'alice' });
    const refused = await vote(link('manager_1'), { vote: 'approve', callId: 'w2' });
    expect(refused.status).toBe(409);
    expect(heading(refused.text)).toBe('This form was for another call');
    expect(await refusals(ledger)).toEqual([
      {
        actor: 'manager_1',
        reason: expect.objectContaining({ code: 'wrong_call', channel: 'links' }) as unknown,
      },
    ]);
    expect((await gate.get('w1'))?.status).toBe('awaiting_approval');
    expect((await gate.get('w2'))?.status).toBe('awaiting_approval');
    expect(runs).toEqual([]);
  });

  it('with linkNeedsLogin, a vote needs the link’s own principal signed in', async () => {
    const { ledger, gate, runs, link } = await served(target, { linkNeedsLogin: true });
    const url = link('manager_1');
    expect((await open(url)).status).toBe(401);
    expect((await vote(url, { vote: 'approve' })).status).toBe(401);
    const other = await vote(url, { vote: 'approve' }, { authorization: 'Bearer finance_1' });
    expect(other.status).toBe(403);
    expect(heading(other.text)).toBe('This link is for someone else');
    expect(await refusals(ledger)).toEqual([
      {
        actor: 'finance_1',
        reason: expect.objectContaining({ code: 'wrong_principal', channel: 'links' }) as unknown,
      },
    ]);
    expect(runs).toEqual([]);
    expect((await open(url, 'GET', { authorization: 'Bearer manager_1' })).status).toBe(200);
    expect((await vote(url, { vote: 'approve' }, { authorization: 'Bearer manager_1' })).status).toBe(200);
    expect(await gate.settled('w1')).toMatchObject({ status: 'committed' });
    expect(runs).toEqual(['DE02:500000']);
  });
});
