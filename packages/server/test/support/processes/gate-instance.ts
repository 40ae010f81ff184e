// One of several app servers sharing one ledger. Runs a server gate over the ledger given as
// `sqlite:<path>` or `postgres:<url>`, with the crash app's tools (effects in the file `effects`),
// and follows the live feed of each session named after it, from the moment it starts. Then
// answers requests, one JSON line each on its standard input, as they come (not one at a time):
//   { ref, op: 'propose', id, tool, arguments, session }  → { ref, status, reason?, input? }
//   { ref, op: 'approve', id, inputHash } / { ref, op: 'cancel', id }  → { ref, decision }
//   { ref, op: 'settled', id }  → { ref, status }
//   { ref, op: 'report' }  → { ref, appended, seen, feedErrors }: the seqs of the events this
//     process committed (found in the chain, as any process may have chained them), and of those its feeds delivered (once they have caught up with the ledger, or
//     after ten seconds)
//   { op: 'exit' }
// A request that throws is answered { ref, error: { name, code, message } }.
import { setTimeout as delay } from 'node:timers/promises';
import { createServerGate, type LedgerEvent, type NewLedgerEvent } from '../../../src/index.ts';
import { crashTools, ledgerAt, watchLedger } from '../crash-app.ts';
import { openEffects } from '../effects.ts';
import { serveLines } from './line-protocol.ts';

const [where = '', effectsPath = '', name = 'app', ...sessions] = process.argv.slice(2);
const committed: NewLedgerEvent[] = [];
const ledger = watchLedger(await ledgerAt(where), { committed: (events) => committed.push(...events) });
const sameEvent = (a: NewLedgerEvent, b: LedgerEvent) =>
  a.callId === b.callId && a.from === b.from && a.to === b.to && a.at === b.at && a.actor === b.actor;
const effects = openEffects(effectsPath);
const gate = createServerGate({
  tools: crashTools(effects, () => undefined),
  ledger,
  leaseMs: 2000,
  instance: name,
});
const principal = 'alice';

const seen = new Map<string, LedgerEvent[]>();
const after = await ledger.head();
const feedErrors: string[] = [];
const following = sessions.map(async (session) => {
  const events: LedgerEvent[] = [];
  seen.set(session, events);
  try {
    for await (const event of gate.events(session, { principal, after })) events.push(event);
  } catch (error) {
    feedErrors.push(`${session}: ${error instanceof Error ? error.message : String(error)}`);
  }
});

async function answer(request: Record<string, unknown>): Promise<Record<string, unknown>> {
  const id = String(request.id);
  switch (request.op) {
    case 'propose': {
      const call = await gate.propose(
        { id, name: request.tool, arguments: request.arguments },
        { session: String(request.session), principal },
      );
      return { status: call.status, reason: call.reason?.code, input: call.input };
    }
    case 'approve':
      return { decision: await gate.approve(id, { principal, inputHash: String(request.inputHash) }) };
    case 'cancel':
      return { decision: await gate.cancel(id, { principal }) };
    case 'settled':
      return { status: (await gate.settled(id))?.status };
    case 'report': {
      // Waits (ten seconds at most) for each feed to deliver the session's last event.
      const deadline = Date.now() + 10_000;
      for (const session of sessions) {
        const last = (await ledger.eventsAfter(0, { session, limit: 1_000_000 })).at(-1)?.seq ?? after;
        while ((seen.get(session)?.at(-1)?.seq ?? after) < last && Date.now() < deadline) await delay(20);
      }
      const chain = await ledger.eventsAfter(0, { limit: 1_000_000 });
      const taken = new Set<number>();
      const appended = committed.flatMap((event) => {
        const found = chain.find((candidate) => !taken.has(candidate.seq) && sameEvent(event, candidate));
        if (found === undefined) return [];
        taken.add(found.seq);
        return [found.seq];
      });
      return { appended, seen: [...seen.values()].flat().map((event) => event.seq), feedErrors };
    }
    default:
      throw new Error(`unknown op ${String(request.op)}`);
  }
}

await serveLines(answer, (error) => {
  const { name, code, message } = error as { name?: string; code?: string; message?: string };
  return { name, code, message };
});
await gate.close();
await Promise.all(following);
await ledger.close();
effects.close();
