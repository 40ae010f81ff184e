// useRemoteGate against the real thing: a server gate over a SQLite file, its toolgateHandler served
// on loopback, and a page that follows one chat at a time.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineTool } from '@toolgate/core';
import type { RemoteGate } from '@toolgate/core/remote';
import { createServerGate, sqliteLedger, toolgateHandler } from '@toolgate/server';
import { act, render, screen } from '@testing-library/react';
import { afterEach, expect, it } from 'vitest';
import { createStore } from 'zustand/vanilla';
import { bearer, serve } from '../../server/test/support/http.ts';
import { ToolGateProvider, useRemoteGate, useToolCallIds } from '../src/index.ts';

let cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

const note = defineTool({
  name: 'note',
  inputSchema: {
    type: 'object',
    properties: { text: { type: 'string' } },
    required: ['text'],
    additionalProperties: false,
  },
  execute: (input) => ({ noted: input.text }),
});

/** A server gate where alice owns the chats `s1` and `s2`, each holding one call. */
async function server() {
  const directory = mkdtempSync(join(tmpdir(), 'toolgate-react-'));
  const ledger = await sqliteLedger({ path: join(directory, 'ledger.db') });
  const gate = createServerGate({ tools: [note], ledger, recover: false });
  const served = await serve(toolgateHandler(gate, { authenticate: bearer }));
  cleanup.push(
    () => rmSync(directory, { recursive: true, force: true }),
    () => ledger.close(),
    () => gate.close(),
    () => served.close(),
  );
  for (const [id, session] of [
    ['first_call', 's1'],
    ['second_call', 's2'],
  ] as const) {
    await gate.settled(
      (await gate.propose({ id, name: 'note', arguments: { text: id } }, { session, principal: 'alice' })).id,
    );
  }
  return `${served.origin}/api/toolgate`;
}

function Chat({ url, chatId, seen }: { url: string; chatId: string; seen: (gate: RemoteGate) => void }) {
  // A new options object on every render, as an app writes it inline.
  const gate = useRemoteGate({
    url,
    session: chatId,
    tools: [note],
    store: createStore(() => ({})),
    headers: { Authorization: 'Bearer alice' },
  });
  if (gate === undefined) return <p>Connecting</p>;
  seen(gate);
  return (
    <ToolGateProvider gate={gate}>
      <Calls />
    </ToolGateProvider>
  );
}

function Calls() {
  return <p aria-label="calls">{useToolCallIds().join(' ') || 'none yet'}</p>;
}

it('follows the chat it is given, makes one gate per chat however often the page renders, and closes each one it leaves', async () => {
  const url = await server();
  const gates = new Set<RemoteGate>();
  const seen = (gate: RemoteGate) => void gates.add(gate);
  const { rerender, unmount } = render(<Chat url={url} chatId="s1" seen={seen} />);
  expect(await screen.findByText('first_call')).toBeTruthy();
  rerender(<Chat url={url} chatId="s1" seen={seen} />);
  rerender(<Chat url={url} chatId="s1" seen={seen} />);
  expect(gates.size).toBe(1);
  const [first] = gates;

  rerender(<Chat url={url} chatId="s2" seen={seen} />);
  expect(await screen.findByText('second_call')).toBeTruthy();
  expect(screen.queryByText('first_call')).toBeNull();
  expect(gates.size).toBe(2);
  expect(first?.connection.getState().state).toBe('closed');

  const second = [...gates][1];
  await act(async () => {
    unmount();
    await Promise.resolve();
  });
  expect(second?.connection.getState().state).toBe('closed');
});
