import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineTool, type Clock } from '@toolgate/core';
import { createServerGate, sqliteLedger, type Ledger, type ServerGate } from '@toolgate/server';
import { afterAll, afterEach } from 'vitest';

const directory = mkdtempSync(join(tmpdir(), 'toolgate-agents-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
const open: { gates: ServerGate[]; ledgers: Ledger[] } = { gates: [], ledgers: [] };
afterEach(async () => {
  await Promise.all(open.gates.splice(0).map((gate) => gate.close()));
  await Promise.all(open.ledgers.splice(0).map((ledger) => ledger.close()));
});
let files = 0;

/** A payments gate over a SQLite file; `payments` is what really ran. */
export async function paymentsGate(options: { clock?: Clock; approvalTtlMs?: number } = {}) {
  const payments: { to: string; amount_cents: number }[] = [];
  const pay = defineTool({
    name: 'pay',
    description: 'Pay someone. A person approves each payment.',
    inputSchema: {
      type: 'object',
      properties: { to: { type: 'string' }, amount_cents: { type: 'integer', minimum: 1 } },
      required: ['to', 'amount_cents'],
      additionalProperties: false,
    },
    needsApproval: true,
    execute: ({ to, amount_cents }) => {
      payments.push({ to, amount_cents });
      return { paid_cents: amount_cents, to, receipt: `rcpt_${payments.length}` };
    },
  });
  const ledger = await sqliteLedger({ path: join(directory, `ledger-${++files}.db`) });
  const gate = createServerGate({ tools: [pay], ledger, recover: false, ...options });
  open.gates.push(gate);
  open.ledgers.push(ledger);
  return { gate, payments };
}
