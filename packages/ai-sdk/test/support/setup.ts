import { createServerGate, type Ledger, type ServerGate } from '@toolgate/server';
import type { LanguageModel } from 'ai';
import { afterEach } from 'vitest';
import { startChatServer, type ChatServer, type ChatServerOptions } from './chat-server.ts';
import { freshStore, type Store } from './stores.ts';
import { createTools, newEffects, type Effects } from './tools.ts';

const open: { ledgers: Ledger[]; gates: ServerGate[]; servers: ChatServer[] } = {
  ledgers: [],
  gates: [],
  servers: [],
};

afterEach(async () => {
  await Promise.all(open.servers.splice(0).map((server) => server.close()));
  await Promise.all(open.gates.splice(0).map((gate) => gate.close()));
  await Promise.all(open.ledgers.splice(0).map((ledger) => ledger.close()));
});

export interface App {
  readonly server: ChatServer;
  readonly effects: Effects;
  gate: ServerGate<ReturnType<typeof createTools>>;
  /** Closes the gate and its ledger and opens both again on the same store, as a restarted server does. */
  readonly restart: () => Promise<void>;
}

/** The test tools' gate over a ledger on `store` (a fresh one unless given); closed after the test. */
export async function openGate(effects: Effects, store?: Store) {
  const ledger = await (store ?? (await freshStore())).open();
  const gate = createServerGate({ tools: createTools(effects), ledger });
  open.ledgers.push(ledger);
  open.gates.push(gate);
  return { ledger, gate };
}

/** A chat server over a fresh ledger, with the tools' effects to count. */
export async function startApp(model: LanguageModel, options: ChatServerOptions = {}): Promise<App> {
  const store = await freshStore();
  const effects = newEffects();
  let { ledger, gate } = await openGate(effects, store);
  const server = await startChatServer(gate, model, options);
  open.servers.push(server);
  const app: App = {
    server,
    effects,
    gate,
    async restart() {
      await gate.close();
      await ledger.close();
      ({ ledger, gate } = await openGate(effects, store));
      app.gate = gate;
      server.gate = gate;
    },
  };
  return app;
}
