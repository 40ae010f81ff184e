import { cancel, defineTool } from '@toolgate/core';
import type { Kysely } from 'kysely';
import { expect, it, vi } from 'vitest';
import { createServerGate, transactionOf, type Ledger } from '../../src/index.ts';
import { describeLedgers } from '../support/ledgers.ts';

interface Bank {
  transfers: { call_id: string; to_email: string; amount_cents: number };
}

async function withBank(ledger: Ledger): Promise<Kysely<Bank>> {
  const db = ledger.db as unknown as Kysely<Bank>;
  await db.schema
    .createTable('transfers')
    .ifNotExists()
    .addColumn('call_id', 'text', (col) => col.primaryKey())
    .addColumn('to_email', 'text', (col) => col.notNull())
    .addColumn('amount_cents', 'integer', (col) => col.notNull())
    .execute();
  // PostgreSQL keeps one database per test file: start each test with no transfers.
  await db.deleteFrom('transfers').execute();
  return db;
}

type Ending = 'return' | 'throw' | 'bad_output' | 'cancel' | 'wait';

function transferTool(ending: () => Ending, started: (signal: AbortSignal) => void = () => undefined) {
  return defineTool({
    name: 'transfer',
    transactional: true,
    inputSchema: {
      type: 'object',
      properties: { to: { type: 'string' }, amount_cents: { type: 'integer', minimum: 1 } },
      required: ['to', 'amount_cents'],
      additionalProperties: false,
    },
    outputSchema: { type: 'object', properties: { sent: { type: 'integer' } }, required: ['sent'] },
    async execute(input, ctx) {
      const trx = transactionOf<Bank>(ctx);
      await trx
        .insertInto('transfers')
        .values({ call_id: ctx.call.id, to_email: input.to, amount_cents: input.amount_cents })
        .execute();
      started(ctx.signal);
      switch (ending()) {
        case 'throw':
          throw new Error('the bank refused');
        case 'bad_output':
          return { sent: 'all of it' } as never;
        case 'cancel':
          return cancel('over the daily limit');
        case 'wait':
          await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve));
          return { sent: input.amount_cents };
        default:
          return { sent: input.amount_cents };
      }
    },
  });
}

const proposal = (id: string) => ({
  id,
  name: 'transfer',
  arguments: { to: 'alice@example.com', amount_cents: 2000 },
});
const who = { session: 'bank', principal: 'alice' };

describeLedgers('transactional tools', (target) => {
  it("commits the tool's rows with the call's committed record", async () => {
    const ledger = await (await target.fresh()).open();
    const bank = await withBank(ledger);
    const gate = createServerGate({ tools: [transferTool(() => 'return')], ledger, recover: false });
    expect(await gate.run(proposal('t1'), who)).toMatchObject({
      status: 'committed',
      output: { sent: 2000 },
    });
    expect(await bank.selectFrom('transfers').selectAll().execute()).toEqual([
      { call_id: 't1', to_email: 'alice@example.com', amount_cents: 2000 },
    ]);
    expect(await gate.verify()).toMatchObject({ ok: true });
    await gate.close();
  });

  it.each([
    ['the tool throws', 'throw', { status: 'failed', reason: { code: 'tool_error' } }],
    [
      'its output does not match its schema',
      'bad_output',
      { status: 'failed', reason: { code: 'output_invalid' } },
    ],
    ['the tool cancels itself', 'cancel', { status: 'cancelled', reason: { code: 'tool_cancelled' } }],
  ] as const)('rolls its rows back when %s', async (_what, ending, expected) => {
    const ledger = await (await target.fresh()).open();
    const bank = await withBank(ledger);
    const gate = createServerGate({ tools: [transferTool(() => ending)], ledger, recover: false });
    expect(await gate.run(proposal('t2'), who)).toMatchObject(expected);
    expect(await bank.selectFrom('transfers').selectAll().execute()).toEqual([]);
    expect(await gate.verify()).toMatchObject({ ok: true });
    await gate.close();
  });

  it('rolls its rows back when a person cancels it while it runs', async () => {
    const ledger = await (await target.fresh()).open();
    const bank = await withBank(ledger);
    let signal: AbortSignal | undefined;
    const gate = createServerGate({
      tools: [
        transferTool(
          () => 'wait',
          (s) => (signal = s),
        ),
      ],
      ledger,
      recover: false,
    });
    expect((await gate.propose(proposal('t3'), who)).status).toBe('executing');
    await vi.waitFor(() => expect(signal).toBeDefined());
    expect(await gate.cancel('t3', { principal: 'alice' })).toEqual({ ok: true });
    expect(signal?.aborted).toBe(true);
    expect(await gate.settled('t3')).toMatchObject({
      status: 'cancelled',
      reason: { code: 'user_cancelled' },
    });
    expect(await bank.selectFrom('transfers').selectAll().execute()).toEqual([]);
    await gate.close();
  });

  it('refuses a transaction to a tool that is not declared transactional', async () => {
    const ledger = await (await target.fresh()).open();
    await withBank(ledger);
    const tool = defineTool({
      name: 'sneaky',
      inputSchema: { type: 'object' },
      execute: (_input, ctx) => transactionOf<Bank>(ctx) && 'wrote',
    });
    const gate = createServerGate({ tools: [tool], ledger, recover: false });
    expect(await gate.run({ id: 's1', name: 'sneaky', arguments: '{}' }, who)).toMatchObject({
      status: 'failed',
      reason: { code: 'tool_error', message: expect.stringContaining('declare it `transactional: true`') },
    });
    await gate.close();
  });
});
