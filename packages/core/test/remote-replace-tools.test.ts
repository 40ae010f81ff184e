// The remote gate's tools only bring committed outputs into the page's store; replacing them must
// not change how a call the page already shows is committed.
import { afterEach, describe, expect, it } from 'vitest';
import { defineTool } from '../src/index.ts';
import { createRemoteGate } from '../src/remote.ts';
import { chargeSchema, createShop, type Shop, startLoopbackServer, when } from '@toolgate/test-utils';

let cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

/** The page's `charge`, version `version`: it notes the version in the charges it commits. */
const charge = (version: number) =>
  defineTool({
    name: 'charge',
    inputSchema: chargeSchema,
    execute: (input) => input,
    commit: (state: Shop, output) => ({
      charges: [...state.charges, { ...output, currency: `${output.currency} v${version}` }],
    }),
  });

async function page() {
  const server = await startLoopbackServer();
  cleanup.push(() => server.close());
  const shop = createShop();
  const gate = createRemoteGate<Shop>({
    url: server.url,
    session: server.session,
    tools: [charge(1)],
    store: shop,
    onError: () => {},
  });
  cleanup.push(() => gate.close());
  await when(gate.connection, (state) => state.state === 'live');
  return { server, shop, gate };
}

const input = { amount_cents: 100, currency: 'USD' };

describe('remote gate: replaceTools', () => {
  it('commits a call it already showed with the definition it had, and a later one with the new set', async () => {
    const { server, shop, gate } = await page();
    server.call('c1', 'charge', input, 'executing');
    await when(gate.calls, () => gate.get('c1')?.status === 'executing');

    gate.replaceTools([charge(2)]);
    expect(gate.tools).toHaveLength(1);
    server.moveTo('c1', 'committed', { output: input });
    await when(gate.calls, () => gate.get('c1')?.status === 'committed');
    server.call('c2', 'charge', input, 'executing');
    server.moveTo('c2', 'committed', { output: input });
    await when(gate.calls, () => gate.get('c2')?.status === 'committed');
    expect(shop.getState().charges.map((charged) => charged.currency)).toEqual(['USD v1', 'USD v2']);
  });

  it('refuses an invalid set with a clear error and keeps the set it had', async () => {
    const { server, shop, gate } = await page();
    const before = gate.tools;
    expect(() => gate.replaceTools([charge(2), charge(3)])).toThrow(
      /gate\.replaceTools: two tools are named "charge"/,
    );
    expect(() => gate.replaceTools([{ name: 'charge' } as never])).toThrow(
      /gate\.replaceTools: tools\[0\] is not a tool/,
    );
    expect(gate.tools).toBe(before);
    server.call('c1', 'charge', input, 'executing');
    server.moveTo('c1', 'committed', { output: input });
    await when(gate.calls, () => gate.get('c1')?.status === 'committed');
    expect(shop.getState().charges.map((charged) => charged.currency)).toEqual(['USD v1']);
  });
});
