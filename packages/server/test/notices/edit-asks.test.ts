import { defineTool, inputHash } from '@toolgate/core';
import { createFakeClock } from '@toolgate/test-utils';
import { afterEach, expect, it } from 'vitest';
import {
  approvalLinks,
  createServerGate,
  toolgateHandler,
  type Channel,
  type Notice,
} from '../../src/index.ts';
import { bearer, serve } from '../support/http.ts';
import { describeLedgers, type Target } from '../support/ledgers.ts';

type Wire = { iban: string; amount_cents: number };

const WIRE = { id: 'w1', name: 'wire', arguments: { iban: 'DE02', amount_cents: 500_000 } };
const EDITED = { iban: 'DE02', amount_cents: 400_000 };

const opened: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of opened.splice(0)) await close();
});

/** A gate asking three approvers for two approvals, with links, a recording channel and an HTTP server. */
async function served(target: Target) {
  const ledger = await (await target.fresh()).open();
  const clock = createFakeClock();
  const runs: number[] = [];
  const seen: Notice[] = [];
  const channel: Channel = {
    name: 'test',
    deliver: (notice) => {
      seen.push(notice);
      return Promise.resolve();
    },
  };
  const wire = defineTool({
    name: 'wire',
    inputSchema: {
      type: 'object',
      properties: { iban: { type: 'string' }, amount_cents: { type: 'integer', minimum: 1 } },
      required: ['iban', 'amount_cents'],
      additionalProperties: false,
    },
    approvers: () => ['manager_1', 'finance_1', 'ops_1'],
    approvals: 2,
    execute: (input: Wire) => {
      runs.push(input.amount_cents);
      return { sent: input.amount_cents };
    },
  });
  const links = approvalLinks({
    secret: 'a secret of thirty-two bytes or more',
    baseUrl: 'https://app.example/api/toolgate',
    clock,
  });
  const gate = createServerGate({ tools: [wire], ledger, recover: false, clock, links, channels: [channel] });
  const server = await serve(
    toolgateHandler(gate, { authenticate: bearer, basePath: '/api/toolgate', links }),
  );
  opened.push(async () => {
    await server.close();
    await gate.close();
  });
  const local = (url: string | undefined) => (url ?? '').replace('https://app.example', server.origin);
  return { ledger, gate, clock, runs, seen, local };
}

async function vote(url: string, choice: 'approve' | 'deny') {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ vote: choice }).toString(),
  });
  return { status: response.status, text: await response.text() };
}

const heading = (html: string) => /<h1>(.*?)<\/h1>/.exec(html)?.[1];

describeLedgers("an approver's edit asks the others again", (target) => {
  it('sends each principal still asked a new asked notice with the edited input and a link for it; the old link is refused 409 and the new one decides', async () => {
    const { gate, clock, runs, seen, local } = await served(target);
    await gate.propose(WIRE, { session: 'chat_a', principal: 'alice' });
    await gate.recover();
    const first = new Map(seen.map((notice) => [notice.to, notice]));
    expect([...first.keys()].sort()).toEqual(['finance_1', 'manager_1', 'ops_1']);

    // finance_1 approves what the model proposed; then manager_1 changes the amount and approves that.
    const proposedHash = await inputHash(WIRE.arguments);
    expect(await gate.approve('w1', { principal: 'finance_1', inputHash: proposedHash })).toEqual({
      ok: true,
      left: 1,
    });
    clock.advance(1000);
    expect(
      await gate.approve('w1', { principal: 'manager_1', inputHash: proposedHash, input: EDITED }),
    ).toEqual({ ok: true, left: 1 });
    await gate.recover();

    const again = seen.slice(3);
    // The editor approved the edited input; the two others (finance_1's approval was of another input) are asked again.
    expect(again.map((notice) => [notice.kind, notice.to]).sort()).toEqual([
      ['asked', 'finance_1'],
      ['asked', 'ops_1'],
    ]);
    for (const notice of again) {
      expect(notice.call.input).toEqual(EDITED);
      expect(notice.call.edit).toMatchObject({ by: 'manager_1', proposed: WIRE.arguments });
      expect(notice.from).toEqual({ principal: 'alice' });
      const before = first.get(notice.to);
      expect(notice.id).not.toBe(before?.id);
      expect(notice.link).toMatch(/^https:\/\/app\.example\/api\/toolgate\/links\//);
      expect(notice.link).not.toBe(before?.link);
    }
    // Each notice is delivered once: another sweep sends nothing more.
    await gate.recover();
    expect(seen).toHaveLength(5);

    // The inbox shows the edited input to those asked, and no longer to the editor.
    expect((await gate.awaiting('ops_1')).map((call) => call.input)).toEqual([EDITED]);
    expect((await gate.awaiting('finance_1')).map((call) => call.input)).toEqual([EDITED]);
    expect(await gate.awaiting('manager_1')).toEqual([]);
    const moves = gate.awaitingMoves('ops_1', { after: 0 });
    const inputs: unknown[] = [];
    for await (const move of moves) {
      inputs.push(move.record.input);
      if (move.record.edit !== undefined) break;
    }
    expect(inputs.at(-1)).toEqual(EDITED);

    const stale = await vote(local(first.get('ops_1')?.link), 'approve');
    expect(stale.status).toBe(409);
    expect(heading(stale.text)).toBe('The input has changed');
    expect(stale.text).toContain('the new input comes with a new link');
    expect((await gate.get('w1'))?.status).toBe('awaiting_approval');
    expect(runs).toEqual([]);

    const fresh = again.find((notice) => notice.to === 'ops_1');
    expect((await vote(local(fresh?.link), 'approve')).status).toBe(200);
    expect(await gate.settled('w1')).toMatchObject({
      status: 'committed',
      output: { sent: 400_000 },
      approval: { approvedBy: [{ principal: 'manager_1' }, { principal: 'ops_1' }] },
    });
    expect(runs).toEqual([400_000]);
  });

  it('an approval without an edit asks nobody again', async () => {
    const { gate, seen } = await served(target);
    await gate.propose(WIRE, { session: 'chat_a', principal: 'alice' });
    expect(
      await gate.approve('w1', { principal: 'finance_1', inputHash: await inputHash(WIRE.arguments) }),
    ).toEqual({ ok: true, left: 1 });
    await gate.recover();
    expect(seen.map((notice) => notice.kind)).toEqual(['asked', 'asked', 'asked']);
  });
});
