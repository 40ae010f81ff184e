// One app server of several sharing one ledger, given as `sqlite:<path>` or `postgres:<url>`, with
// a tool whose calls wait for manager_1: escalated to director_1 after 400 ms, a reminder after
// 600 ms, expired after 2.5 s. In mode `hang` the escalation's approvers prints { escalating } and
// never answers (the process is killed while it holds the escalation's claim). Given a fifth
// argument, a URL, its notices are POSTed there ({ kind, to, by }, the notice's id in `notice-id`).
// Requests, one JSON line each on its standard input:
//   { ref, op: 'propose', id } → { ref, record }
//   { ref, op: 'settled', id } → { ref, record }
//   { op: 'exit' }
import { defineTool } from '@toolgate/core';
import { createServerGate, type Channel } from '../../../src/index.ts';
import { ledgerAt } from '../crash-app.ts';
import { serveLines } from './line-protocol.ts';

const [where = '', name = 'app', mode = 'answer', lease = '1000', hook] = process.argv.slice(2);
const ledger = await ledgerAt(where);
const wire = defineTool({
  name: 'wire',
  inputSchema: {
    type: 'object',
    properties: { amount_cents: { type: 'integer', minimum: 1 } },
    required: ['amount_cents'],
    additionalProperties: false,
  },
  approvers: () => ['manager_1'],
  escalate: [
    {
      afterMs: 400,
      approvers: () => {
        console.log(JSON.stringify({ escalating: name }));
        return mode === 'hang' ? new Promise<string[]>(() => undefined) : ['director_1'];
      },
    },
  ],
  remindAfterMs: 600,
  approvalTtlMs: 2500,
  execute: (input) => ({ sent: input.amount_cents }),
});
const channels: Channel[] =
  hook === undefined
    ? []
    : [
        {
          name: 'hook',
          async deliver(notice, { signal }) {
            const response = await fetch(hook, {
              method: 'POST',
              headers: { 'content-type': 'application/json', 'notice-id': notice.id },
              body: JSON.stringify({ kind: notice.kind, to: notice.to, by: name }),
              signal,
            });
            if (!response.ok) throw new Error(`the hook answered ${response.status}`);
          },
        },
      ];
const gate = createServerGate({
  tools: [wire],
  channels,
  ledger,
  instance: name,
  leaseMs: Number(lease),
  onError: (error) =>
    console.log(JSON.stringify({ error: error instanceof Error ? error.message : String(error) })),
});

async function answer(request: Record<string, unknown>): Promise<Record<string, unknown>> {
  const id = String(request.id);
  switch (request.op) {
    case 'propose': {
      const call = { id, name: 'wire', arguments: { amount_cents: 500 } };
      return { record: await gate.propose(call, { session: 'chat_1', principal: 'alice' }) };
    }
    case 'settled':
      return { record: await gate.settled(id) };
    default:
      throw new Error(`unknown op ${String(request.op)}`);
  }
}

await serveLines(answer, (error) => (error instanceof Error ? error.message : String(error)));
await gate.close();
await ledger.close();
