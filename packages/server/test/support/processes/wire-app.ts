// The app server the approval-link processes share: toolgate's handler under /api/toolgate on
// 127.0.0.1 (a port of its own), over a SQLite file, with approval links and a wire that needs
// manager_1's approval. POST /test/calls/:id proposes a wire as alice and answers what `answer`
// makes of it; GET /test/calls/:id answers { status, runs } (how many times the wire ran). Prints
// { ready: true, origin } once it listens; stdin closing ends it.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import { defineTool, type ToolCallRecord } from '@toolgate/core';
import {
  approvalLinks,
  createServerGate,
  sqliteLedger,
  toolgateHandler,
  type Channel,
  type ServerGate,
} from '../../../src/index.ts';

/** The wire's input schema, for every test of links that moves money. */
export const wireSchema = {
  type: 'object',
  properties: {
    iban: { type: 'string' },
    amount_cents: { type: 'integer', minimum: 1 },
    memo: { type: 'string' },
  },
  required: ['iban', 'amount_cents'],
  additionalProperties: false,
} as const;

/** Runs the app until stdin closes: `channels` tell the approver, `answer` says what a proposal answers. */
export async function runWireApp({
  path,
  channels = [],
  answer,
  close,
}: {
  readonly path: string;
  readonly channels?: readonly Channel[];
  readonly answer: (gate: ServerGate, call: ToolCallRecord) => Promise<Response> | Response;
  readonly close?: () => Promise<void>;
}): Promise<void> {
  const ledger = await sqliteLedger({ path });
  const runs = new Map<string, number>();
  const wire = defineTool({
    name: 'wire',
    inputSchema: wireSchema,
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
  const gate = createServerGate({ tools: [wire], ledger, links, channels: [...channels] });
  const toolgate = toolgateHandler(gate, { authenticate: () => null, links });

  async function handle(request: Request): Promise<Response> {
    const id = /^\/test\/calls\/([^/]+)$/.exec(new URL(request.url).pathname)?.[1];
    if (id === undefined) return toolgate(request);
    if (request.method === 'POST') {
      const call = await gate.propose(
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
      return answer(gate, call);
    }
    return Response.json({ status: (await gate.get(id))?.status, runs: runs.get(id) ?? 0 });
  }

  console.log(JSON.stringify({ ready: true, origin }));
  process.stdin.resume();
  await new Promise((resolve) => process.stdin.on('close', resolve));
  server.closeAllConnections();
  server.close();
  await gate.close();
  await close?.();
  await ledger.close();
}
