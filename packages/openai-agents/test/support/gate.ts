import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineTool, type Clock, type ToolDefinition } from '@toolgate/core';
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

/** A payments gate over a SQLite file (or a gate of the given tools); `payments` is what really ran. */
export async function paymentsGate(
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- any tools
  options: { clock?: Clock; approvalTtlMs?: number; tools?: readonly ToolDefinition<any, any, any>[] } = {},
) {
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
  const { tools = [pay], ...rest } = options;
  const gate = createServerGate({ tools, ledger, recover: false, ...rest });
  open.gates.push(gate);
  open.ledgers.push(ledger);
  return { gate, payments };
}
