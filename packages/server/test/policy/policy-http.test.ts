import { defineTool, inputHash } from '@toolgate/core';
import { afterEach, expect, it } from 'vitest';
import { createServerGate, sqliteLedger, toolgateHandler } from '../../src/index.ts';
import { bearer, post, serve, type Served } from '../support/http.ts';

const opened: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of opened.splice(0)) await close();
});

async function served(approvals = 1) {
  const ledger = await sqliteLedger({ path: ':memory:' });
  const wire = defineTool({
    name: 'wire',
    inputSchema: {
      type: 'object',
      properties: { amount_cents: { type: 'integer', minimum: 1 } },
      required: ['amount_cents'],
      additionalProperties: false,
    },
    needsApproval: true,
    approvals,
    execute: (input) => ({ sent: input.amount_cents }),
  });
  const gate = createServerGate({
    tools: [wire],
    ledger,
    recover: false,
    canSee: () => true,
    canApprove: (principal) => principal !== 'alice',
  });
  const server: Served = await serve(toolgateHandler(gate, { authenticate: bearer, basePath: '/api' }));
  opened.push(async () => {
    await server.close();
    await gate.close();
    await ledger.close();
  });
  const call = await gate.propose(
    { id: 'w1', name: 'wire', arguments: { amount_cents: 500_000 } },
    { session: 'chat_a', principal: 'alice' },
  );
  return { gate, url: `${server.origin}/api/calls/w1/approve`, hash: await inputHash(call.input) };
}

it('POST approve with { inputHash, input } runs the edited input; a bad edit is 409 invalid_edit with its issues', async () => {
  const { gate, url, hash } = await served();
  expect(await post(url, 'manager_1', { inputHash: hash, input: { amount_cents: 0 } })).toMatchObject({
    status: 409,
    body: { error: { code: 'invalid_edit', issues: [{ path: '/amount_cents' }] } },
  });
  expect(await post(url, 'manager_1', { inputHash: hash, input: { amount_cents: 400_000 } })).toMatchObject({
    status: 200,
    body: { ok: true },
  });
  expect(await gate.settled('w1')).toMatchObject({
    status: 'committed',
    output: { sent: 400_000 },
    edit: { by: 'manager_1', changes: [{ path: '/amount_cents', from: 500_000, to: 400_000 }] },
  });
});

it('POST approve on a call that needs two approvers answers how many are left', async () => {
  const { gate, url, hash } = await served(2);
  expect(await post(url, 'manager_1', { inputHash: hash })).toMatchObject({
    status: 200,
    body: { ok: true, left: 1 },
  });
  expect(await post(url, 'manager_1', { inputHash: hash })).toMatchObject({
    status: 409,
    body: { error: { code: 'already_approved' } },
  });
  expect(await post(url, 'manager_2', { inputHash: hash })).toMatchObject({
    status: 200,
    body: { ok: true, left: 0 },
  });
  expect((await gate.settled('w1'))?.status).toBe('committed');
});
