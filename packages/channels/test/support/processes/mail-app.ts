// An app server whose approvers are reached by mail, for a browser to follow the link in one: an
// SMTP server (smtp-server) on 127.0.0.1 takes the gate's mail, and toolgate's handler serves the
// links under /api/toolgate, over a SQLite file (argv[2]). A wire needs manager_1's approval.
// POST /test/calls/:id proposes a wire as alice and answers the mail manager_1 received about it
// ({ to, subject, text, html }); GET /test/calls/:id answers { status, runs }.
// Prints { ready: true, origin } once it listens; stdin closing ends it.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import { defineTool } from '@toolgate/core';
import { approvalLinks, createServerGate, sqliteLedger, toolgateHandler } from '@toolgate/server';
import { emailChannel } from '../../../src/email/index.ts';
import { smtpServer } from '../smtp.ts';

const [path = ''] = process.argv.slice(2);
const ledger = await sqliteLedger({ path });
const smtp = await smtpServer();
const runs = new Map<string, number>();
const wire = defineTool({
  name: 'wire',
  inputSchema: {
    type: 'object',
    properties: {
      iban: { type: 'string' },
      amount_cents: { type: 'integer', minimum: 1 },
      memo: { type: 'string' },
    },
    required: ['iban', 'amount_cents'],
    additionalProperties: false,
  },
  approvers: () => ['manager_1'],
  execute: (input, ctx) => {
    runs.set(ctx.call.id, (runs.get(ctx.call.id) ?? 0) + 1);
    return { sent: input.amount_cents };
  },
});

// Requests come once it listens, and the links need its port: the handler is read when one comes.
const server = createServer((incoming, outgoing) => void getRequestListener(handle)(incoming, outgoing));
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const links = approvalLinks({
  secret: 'an e2e secret of at least thirty-two bytes',
  baseUrl: `${origin}/api/toolgate`,
});
const mail = emailChannel({
  transport: smtp.url,
  from: 'Approvals <approvals@app.example>',
  addressOf: (principal) => `${principal}@corp.example`,
});
const gate = createServerGate({ tools: [wire], ledger, links, channels: [mail] });
const toolgate = toolgateHandler(gate, { authenticate: () => null, links });

async function handle(request: Request): Promise<Response> {
  const url = new URL(request.url);
  const id = /^\/test\/calls\/([^/]+)$/.exec(url.pathname)?.[1];
  if (id === undefined) return toolgate(request);
  if (request.method === 'POST') {
    await gate.propose(
      {
        id,
        name: 'wire',
        arguments: {
          iban: 'DE02 1203 0000 0000 2020 51',
          amount_cents: 125_000,
          memo: 'Invoice <42> & "rent"',
        },
      },
      { session: `chat_${id}`, principal: 'alice' },
    );
    // The gate mails as soon as the call waits; the SMTP server says when a mail arrived.
    for (;;) {
      const received = smtp.received.find(({ mail: got }) => got.subject?.includes(`(call ${id})`));
      if (received !== undefined) {
        const { to, mail: got } = received;
        return Response.json({ to, subject: got.subject, text: got.text, html: got.html });
      }
      await smtp.state.reached.promise;
    }
  }
  return Response.json({ status: (await gate.get(id))?.status, runs: runs.get(id) ?? 0 });
}

console.log(JSON.stringify({ ready: true, origin }));
process.stdin.resume();
await new Promise((resolve) => process.stdin.on('close', resolve));
server.closeAllConnections();
server.close();
await gate.close();
await smtp.close();
await ledger.close();
