// An app server with one feed client that goes away: the handler served on loopback, a feed opened
// with fetch that sees a move and is aborted; once the server has let that connection go, the gate,
// the server and the ledger (`sqlite:<path>` or `postgres:<url>`) are closed and `{ closed: true }`
// is printed. Nothing may be left open then: the process has to end by itself.
import { defineTool } from '@toolgate/core';
import { createServerGate, postgresLedger, sqliteLedger, toolgateHandler } from '../../../src/index.ts';
import { bearer, openFeed, serve } from '../http.ts';

const [where = ''] = process.argv.slice(2);
const ledger = where.startsWith('sqlite:')
  ? await sqliteLedger({ path: where.slice('sqlite:'.length) })
  : await postgresLedger({ connectionString: where.slice('postgres:'.length) });
const charge = defineTool({
  name: 'charge',
  inputSchema: {
    type: 'object',
    properties: { amount_cents: { type: 'integer' } },
    required: ['amount_cents'],
  },
  needsApproval: true,
  execute: (input) => ({ charged: input.amount_cents }),
});
// The sweep that recovers calls runs every `leaseMs`: that timer is the gate's until `close()`.
const gate = createServerGate({ tools: [charge], ledger });
const served = await serve(toolgateHandler(gate, { authenticate: bearer, heartbeatMs: 50 }));
const feed = await openFeed(`${served.origin}/api/toolgate/sessions/s1/events`, { principal: 'alice' });
await gate.propose(
  { id: 'c1', name: 'charge', arguments: { amount_cents: 100 } },
  { session: 's1', principal: 'alice' },
);
await feed.until(() => feed.moves().length === 3 && feed.comments.length > 1);
feed.close();
await feed.ended;
await served.drained();
await gate.close();
await served.close();
await ledger.close();
console.log(JSON.stringify({ closed: true, moves: feed.moves().length }));
