import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServerGate, sqliteLedger, type Ledger, type ServerGate } from '@toolgate/server';
import type { LanguageModel } from 'ai';
import { afterAll, afterEach } from 'vitest';
import { startChatServer, type ChatServer } from './chat-server.ts';
import { createTools, newEffects, type Effects } from './tools.ts';

const directory = mkdtempSync(join(tmpdir(), 'toolgate-ai-sdk-'));
const open: { ledgers: Ledger[]; gates: ServerGate[]; servers: ChatServer[] } = { ledgers: [], gates: [], servers: [] };
let files = 0;

afterEach(async () => {
  await Promise.all(open.servers.splice(0).map((server) => server.close()));
  await Promise.all(open.gates.splice(0).map((gate) => gate.close()));
  await Promise.all(open.ledgers.splice(0).map((ledger) => ledger.close()));
});
afterAll(() => rmSync(directory, { recursive: true, force: true }));

export interface App {
  readonly server: ChatServer;
  readonly effects: Effects;
  readonly path: string;
  gate: ServerGate<ReturnType<typeof createTools>>;
  /** Closes the gate and its ledger and opens both again on the same file, as a restarted server does. */
  readonly restart: () => Promise<void>;
}

export async function openGate(path: string, effects: Effects) {
  const ledger = await sqliteLedger({ path });
  const gate = createServerGate({ tools: createTools(effects), ledger });
  open.ledgers.push(ledger);
  open.gates.push(gate);
  return { ledger, gate };
}

/** A chat server over a fresh SQLite ledger file, with the tools' effects to count. */
export async function startApp(model: LanguageModel): Promise<App> {
  const path = join(directory, `ledger-${++files}.db`);
  const effects = newEffects();
  let { ledger, gate } = await openGate(path, effects);
  const server = await startChatServer(gate, model);
  open.servers.push(server);
  const app: App = {
    server,
    effects,
    path,
    gate,
    async restart() {
      await gate.close();
      await ledger.close();
      ({ ledger, gate } = await openGate(path, effects));
      app.gate = gate;
      server.gate = gate;
    },
  };
  return app;
}
