// An app server that charges through the test's payment provider: a server gate over the ledger
// given as `sqlite:<path>` or `postgres:<url>`, with the Stripe-style charge tool at `<api url>`,
// a lease of `<lease ms>`, recovering what dead processes left on start and every lease.
//   args: <ledger> <api url> <instance> <lease ms>
//   env:  TOOLGATE_KILL=<request|reconcile|refund>  SIGKILL itself when a run reaches that point
//         TOOLGATE_ON_UNKNOWN=<interrupt|hold>      the tool's onUnknown
//         TOOLGATE_IDEMPOTENT=1                     the tool is idempotent (its refunds are re-run after a crash)
// Requests, one JSON line each on standard input, answered as they come:
//   { ref, op: 'propose', id, order, amount_cents }  → { ref, status }
//   { ref, op: 'settled' | 'stopped', id }  → { ref, record }
//   { ref, op: 'recover' }  → { ref, recovery }
//   { ref, op: 'resolve', id, outcome, output? }  → { ref, decision }
//   { ref, op: 'compensate', id }  → { ref, decision }
//   { op: 'exit' }
import { createServerGate } from '../../../src/index.ts';
import { ledgerAt } from '../crash-app.ts';
import { chargeTool, type PaymentReach } from '../payment-tool.ts';
import { serveLines } from './line-protocol.ts';

const [where = '', url = '', instance = 'app', lease = '500'] = process.argv.slice(2);
const kill = process.env.TOOLGATE_KILL;
const reach: PaymentReach = (point, key) => {
  if (point !== kill) return;
  // Writes to a pipe are synchronous on Linux: the line is out before the process is gone.
  process.stdout.write(`${JSON.stringify({ killed: point, key })}\n`);
  process.kill(process.pid, 'SIGKILL');
};
const onUnknown = process.env.TOOLGATE_ON_UNKNOWN === 'hold' ? 'hold' : 'interrupt';
const idempotent = process.env.TOOLGATE_IDEMPOTENT === '1';
const ledger = await ledgerAt(where);
const gate = createServerGate({
  tools: [chargeTool(url, { onUnknown, idempotent }, reach)],
  ledger,
  leaseMs: Number(lease),
  instance,
  canApprove: () => true,
});
const principal = 'alice';

async function answer(request: Record<string, unknown>): Promise<Record<string, unknown>> {
  const id = String(request.id);
  switch (request.op) {
    case 'propose': {
      const call = await gate.propose(
        { id, name: 'charge', arguments: { order: request.order, amount_cents: request.amount_cents } },
        { session: 'shop', principal },
      );
      return { status: call.status };
    }
    case 'settled':
      return { record: await gate.settled(id) };
    case 'stopped':
      return { record: await gate.stopped(id) };
    case 'recover':
      return { recovery: await gate.recover() };
    case 'resolve':
      return {
        decision: await gate.resolve(id, {
          principal,
          outcome: request.outcome as 'committed' | 'not_executed',
          ...('output' in request ? { output: request.output } : {}),
        }),
      };
    case 'compensate':
      return { decision: await gate.compensate(id, { principal }) };
    default:
      throw new Error(`unknown op ${String(request.op)}`);
  }
}

await serveLines(answer, (error) => {
  const { name, message } = error as { name?: string; message?: string };
  return { name, message };
});
await gate.close();
await ledger.close();
