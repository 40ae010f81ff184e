// The cost of deciding on a link: a call whose tool names one approver, proposed, told to that
// approver through a channel (its `asked` and `decided` notices written and delivered), and
// approved by a POST to its signed link through the handler, against today's in-page approval
// (the session's owner, serverGate.approve) of the same call, to committed. On an SQLite file and
// on PostgreSQL; both gates share one ledger and their rounds are interleaved.
import { compareAsync, report } from './measure.mjs';
import { args, schema, server, withScratchDatabase, withScratchFile } from './server-workload.mjs';

const { defineTool } = await import('../packages/core/dist/index.js');
const { approvalLinks, createServerGate, inputHash, postgresLedger, sqliteLedger, toolgateHandler } = server;
const TARGET = 1.2;
const failures = [];
const execute = (input) => ({ sent: input.amount_cents });

/** Today's: the session's owner approves in the page. */
const owned = defineTool({ name: 'transfer', inputSchema: schema, needsApproval: true, execute });
/** A manager is asked by name, and decides on a link. */
const asked = defineTool({ name: 'transfer', inputSchema: schema, approvers: () => ['boss'], execute });

/** A channel that takes each notice at once, as a queue in front of mail or Slack would. */
const delivered = { count: 0 };
const channel = {
  name: 'bench',
  deliver: async () => {
    delivered.count++;
  },
};

function inPage(gate, prefix) {
  let round = 0;
  return async (n) => {
    const batch = round++;
    for (let i = 0; i < n; i++) {
      const id = `${prefix}${batch}_${i}`;
      const call = await gate.propose(
        { id, name: 'transfer', arguments: args },
        { session: 'bench', principal: 'bench' },
      );
      const decision = await gate.approve(id, { principal: 'bench', inputHash: await inputHash(call.input) });
      if (!decision.ok) throw new Error(`in-page approval refused: ${decision.code}`);
      const ended = await gate.settled(id);
      if (ended.status !== 'committed') throw new Error(`bench call ended ${ended.status}`);
    }
  };
}

/**
 * Resolves once every notice the link side wrote is delivered and its delivery recorded: a round
 * on the link side ends then, so the notices' work is counted on its side and none of it runs on
 * into the other side's round.
 */
async function noticesDone(ledger, expected) {
  while (delivered.count < expected) await new Promise((resolve) => setTimeout(resolve, 1));
  for (;;) {
    const left = await ledger.read((db) =>
      db.selectFrom('toolgate_notices').select('id').where('delivered_at', 'is', null).limit(1).execute(),
    );
    if (left.length === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

function onLink(gate, handler, prefix, ledger) {
  let round = 0;
  return async (n) => {
    const expected = delivered.count + 2 * n;
    const batch = round++;
    for (let i = 0; i < n; i++) {
      const id = `${prefix}${batch}_${i}`;
      const call = await gate.propose(
        { id, name: 'transfer', arguments: args },
        { session: 'bench', principal: 'bench' },
      );
      const response = await handler(
        new Request(gate.linkFor(call, 'boss'), {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ callId: id, vote: 'approve' }).toString(),
        }),
      );
      if (response.status !== 200) throw new Error(`the link's vote answered ${response.status}`);
      await response.text();
      const ended = await gate.settled(id);
      if (ended.status !== 'committed') throw new Error(`bench call ended ${ended.status}`);
    }
    if (ledger !== undefined) await noticesDone(ledger, expected);
  };
}

async function measure(label, ledger) {
  const links = approvalLinks({ secret: 'b'.repeat(32), baseUrl: 'https://app.example/api/toolgate' });
  const today = createServerGate({ tools: [owned], ledger, recover: false });
  const linked = createServerGate({ tools: [asked], ledger, recover: false, links, channels: [channel] });
  const handler = toolgateHandler(linked, { authenticate: () => null, links });
  delivered.count = 0;
  const n = 50;
  const result = await compareAsync({
    subject: onLink(linked, handler, 'link', ledger),
    baseline: inPage(today, 'page'),
    n,
    statistic: 'quartile',
  });
  if (!report(`${label}: approved on a link vs in the page, per call`, result, TARGET)) failures.push(label);
  // Each call the link side ran asked its approver and told them how it ended: two notices a call.
  console.log(`  notices delivered: ${delivered.count} (2 per call on the link side)`);
  await linked.close();
  // Where the difference lies: the same link without channels (no notices), not held to the target.
  const quiet = createServerGate({ tools: [asked], ledger, recover: false, links });
  const alone = await compareAsync({
    subject: onLink(quiet, toolgateHandler(quiet, { authenticate: () => null, links }), 'quiet'),
    baseline: inPage(today, 'again'),
    n,
    statistic: 'quartile',
  });
  report(`${label}: the same, without notices (for reading)`, alone, Infinity);
  await quiet.close();
  await today.close();
}

console.log('\napproval on a link: one approver, notices and a POST to the link, against serverGate.approve');

await withScratchFile('toolgate-links-bench', async (path) => {
  const ledger = await sqliteLedger({ path });
  await measure('SQLite file', ledger);
  await ledger.close();
});

const reached = await withScratchDatabase('tg_links_bench', async (database) => {
  const ledger = await postgresLedger({ connectionString: database });
  await measure('PostgreSQL', ledger);
  await ledger.close();
});
if (!reached) failures.push('PostgreSQL');

if (failures.length > 0) {
  console.log(`links bench MISSED: ${failures.join(', ')}`);
  process.exitCode = 1;
}
