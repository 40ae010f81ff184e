// One app server for the server bench: a process with its own pool and gate on the PostgreSQL
// database named in argv[2] (or, with argv[3] = 'hand', the hand-written server on the same
// pool). Told `{ run, prefix, inFlight }` over IPC, it runs that many calls and answers `{ ms }`;
// told `{ close: true }`, it closes and exits.
import { byHand, drive, server, throughGate, transfer } from './server-workload.mjs';

const ledger = await server.postgresLedger({ connectionString: process.argv[2] });
const gate = server.createServerGate({
  tools: [transfer],
  ledger,
  recover: false,
  instance: `bench-${process.pid}`,
});
const hand = process.argv[3] === 'hand' ? byHand(ledger.db) : undefined;
const sessions = Array.from({ length: 16 }, (_, i) => throughGate(gate, `bench_${process.pid}_${i}`));
let turn = 0;
const one = hand ?? ((id) => sessions[turn++ % sessions.length](id));

process.on('message', async (message) => {
  if (message.close) {
    await gate.close();
    await ledger.close();
    process.disconnect();
    return;
  }
  try {
    const t0 = performance.now();
    await drive(one, message.prefix, message.run, message.inFlight);
    process.send({ ms: performance.now() - t0 });
  } catch (error) {
    process.send({ error: String(error?.stack ?? error) });
  }
});
process.send({ ready: true });
