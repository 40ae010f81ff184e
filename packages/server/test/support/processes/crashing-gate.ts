// An app server that gets killed. Runs a server gate over the ledger given as `sqlite:<path>` or
// `postgres:<url>`, with the crash app's tools (effects in the file `effects`); proposes the
// `count` calls of its generation, `<lane>g<generation>_<n>`, and the previous generation's of its
// lane again, as a client does when its server died under it; approves the calls that wait for a person; and says
// `done` once every one of them has settled. With `TOOLGATE_KILL=<point>:<tool>:<n>` it kills
// itself at that point (see crash-app.ts); otherwise the test may kill it at any instant.
import { inputHash } from '@toolgate/core';
import { createServerGate } from '../../../src/index.ts';
import {
  crashTools,
  KINDS,
  killSwitch,
  LEASE_MS,
  ledgerAt,
  reachingJsonSchema,
  reachingLedger,
} from '../crash-app.ts';
import { openEffects } from '../effects.ts';

const [where = '', effectsPath = '', lane = 'a', generation = '1', count = '8'] = process.argv.slice(2);
const reach = killSwitch(process.env.TOOLGATE_KILL);
const ledger = reachingLedger(await ledgerAt(where), reach);
const effects = openEffects(effectsPath);
const gate = createServerGate({
  tools: crashTools(effects, reach),
  ledger,
  leaseMs: LEASE_MS,
  jsonSchema: reachingJsonSchema(reach),
  instance: `${lane}g${generation}`,
});

const calls: { id: string; tool: string; n: number }[] = [];
for (const g of [Number(generation) - 1, Number(generation)]) {
  if (g < 1) continue;
  for (let n = 0; n < Number(count); n += 1)
    calls.push({ id: `${lane}g${g}_${n}`, tool: KINDS[n % KINDS.length] ?? 'plain', n });
}
calls.sort(() => Math.random() - 0.5);
console.log(JSON.stringify({ ready: true }));

async function drive({ id, tool, n }: { id: string; tool: string; n: number }): Promise<void> {
  const call = await gate.propose(
    { id, name: tool, arguments: JSON.stringify({ n }) },
    { session: 'crash', principal: 'alice' },
  );
  if (call.status === 'awaiting_approval') {
    const decision = await gate.approve(id, { principal: 'alice', inputHash: await inputHash(call.input) });
    if (!decision.ok) throw new Error(`approving ${id}: ${decision.code}`);
  }
  await gate.settled(id);
}

// Four calls at a time, so that a kill finds several of them in flight.
const queue = [...calls];
await Promise.all(
  Array.from({ length: 4 }, async () => {
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) await drive(next);
  }),
);
console.log(JSON.stringify({ done: true }));
await gate.close();
await ledger.close();
effects.close();
