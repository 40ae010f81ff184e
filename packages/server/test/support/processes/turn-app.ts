// One of several app servers sharing one ledger, given as `sqlite:<path>` or `postgres:<url>`,
// with an `onTurnSettled` handler that prints { handling: turnId, attempt, calls } when it starts,
// then either resolves (`resolve`) or never does (`hang`, to be killed in the middle of it).
// Requests, one JSON line each on its standard input:
//   { ref, op: 'read', turn, session, calls: [{ id, amount }] } → { ref, stopped: [status…] }: a model
//     stream with these calls, read over serverGate.turn(...)
//   { ref, op: 'approve', id } → { ref, decision }
//   { ref, op: 'watch', ms } → { ref }: runs the sweep (recover) every 100 ms for `ms`
//   { op: 'exit' }
import { defineTool, inputHash } from '@toolgate/core';
import { readOpenAIChatStream, type OpenAIChatChunk } from '@toolgate/core/openai';
import { setTimeout as delay } from 'node:timers/promises';
import { createServerGate } from '../../../src/index.ts';
import { ledgerAt } from '../crash-app.ts';
import { serveLines } from './line-protocol.ts';

const [where = '', name = 'app', mode = 'resolve', lease = '1500'] = process.argv.slice(2);
const ledger = await ledgerAt(where);
const principal = 'alice';
const pay = defineTool({
  name: 'pay',
  inputSchema: {
    type: 'object',
    properties: { amount_cents: { type: 'integer', minimum: 1 } },
    required: ['amount_cents'],
    additionalProperties: false,
  },
  needsApproval: (input) => input.amount_cents > 1000,
  execute: (input) => ({ paid: input.amount_cents }),
});
const gate = createServerGate({
  tools: [pay],
  ledger,
  instance: name,
  leaseMs: Number(lease),
  onError: (error) =>
    console.log(JSON.stringify({ error: error instanceof Error ? error.message : String(error) })),
  onTurnSettled: async (turn) => {
    console.log(
      JSON.stringify({
        handling: turn.id,
        session: turn.session,
        attempt: turn.attempt,
        calls: turn.calls.map((call) => call.status),
        by: name,
      }),
    );
    if (mode === 'hang') await new Promise(() => undefined);
    console.log(JSON.stringify({ handled: turn.id, by: name }));
  },
});

const chunk = (index: number, id: string, amount: number): OpenAIChatChunk => ({
  id: 'chatcmpl-P',
  choices: [
    {
      index: 0,
      delta: {
        tool_calls: [
          { index, id, function: { name: 'pay', arguments: JSON.stringify({ amount_cents: amount }) } },
        ],
      },
      finish_reason: null,
    },
  ],
});

async function answer(request: Record<string, unknown>): Promise<Record<string, unknown>> {
  switch (request.op) {
    case 'read': {
      const calls = request.calls as { id: string; amount: number }[];
      const reader = readOpenAIChatStream(
        gate.turn({ session: String(request.session), principal, turn: String(request.turn) }),
      );
      await reader.read([
        ...calls.map((call, index) => chunk(index, call.id, call.amount)),
        { id: 'chatcmpl-P', choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
      ]);
      return { stopped: (await reader.stopped()).map((record) => record.status) };
    }
    case 'approve': {
      const id = String(request.id);
      const record = await gate.get(id, { principal });
      return { decision: await gate.approve(id, { principal, inputHash: await inputHash(record?.input) }) };
    }
    case 'watch': {
      const until = Date.now() + Number(request.ms);
      while (Date.now() < until) {
        await gate.recover();
        await delay(100);
      }
      return {};
    }
    default:
      throw new Error(`unknown op ${String(request.op)}`);
  }
}

await serveLines(answer, (error) => (error instanceof Error ? error.message : String(error)));
await gate.close();
await ledger.close();
