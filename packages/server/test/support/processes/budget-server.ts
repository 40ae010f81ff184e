// One app server of several sharing one ledger (`sqlite:<path>` or `postgres:<url>`), with one
// transfer budget of 10,000 cents a day per principal. Prints { ready: true }; on the line
// { op: 'go' } proposes `count` transfers of 1,000 cents at once (ids `<name>_<n>`), then prints
// { statuses, reasons, runs } (how many times its tool ran) and exits.
import { createInterface } from 'node:readline';
import { defineTool } from '@toolgate/core';
import { createServerGate } from '../../../src/index.ts';
import { ledgerAt } from '../crash-app.ts';

const [where = '', name = 'app', count = '20'] = process.argv.slice(2);
const ledger = await ledgerAt(where);
let runs = 0;
const transfer = defineTool({
  name: 'transfer',
  inputSchema: {
    type: 'object',
    properties: { amount_cents: { type: 'integer', minimum: 1 } },
    required: ['amount_cents'],
    additionalProperties: false,
  },
  execute: (input) => {
    runs += 1;
    return { sent: input.amount_cents };
  },
});
const gate = createServerGate({
  tools: [transfer],
  ledger,
  instance: name,
  budgets: [
    {
      name: 'transfers_per_day',
      per: 'principal',
      windowMs: 86_400_000,
      max: 10_000,
      measure: (input) => (input as { amount_cents: number }).amount_cents,
    },
  ],
});

const input = createInterface({ input: process.stdin });
console.log(JSON.stringify({ ready: true }));
const go = await new Promise<void>((resolve) =>
  input.on('line', (line) => (JSON.parse(line) as { op?: string }).op === 'go' && resolve()),
);
void go;
const calls = await Promise.all(
  Array.from({ length: Number(count) }, (_, index) =>
    gate.run(
      { id: `${name}_${index}`, name: 'transfer', arguments: { amount_cents: 1000 } },
      { session: `chat_${name}`, principal: 'alice' },
    ),
  ),
);
console.log(
  JSON.stringify({
    statuses: calls.map((call) => call.status),
    reasons: calls.map((call) => call.reason?.code ?? null),
    runs,
  }),
);
input.close();
await gate.close();
await ledger.close();
