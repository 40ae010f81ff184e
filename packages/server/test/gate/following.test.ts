// A waiter (`settled`) or a feed (`moves`) that starts while the ledger is moving misses nothing.
// On PostgreSQL the gate's queries run side by side on a pool, so the ledger's head can be read
// after a commit that another read, started at the same time, did not see. The ledger here answers
// `head()` only once the test lets it, to put the commit in that gap on every run and dialect.
import { defineTool, inputHash } from '@toolgate/core';
import { afterEach, expect, it } from 'vitest';
import { createServerGate, type Ledger, type LedgerMove } from '../../src/index.ts';
import { describeLedgers } from '../support/ledgers.ts';

const charge = defineTool({
  name: 'charge',
  inputSchema: {
    type: 'object',
    properties: { amount_cents: { type: 'integer', minimum: 1 } },
    required: ['amount_cents'],
  },
  needsApproval: (input) => input.amount_cents > 5000,
  execute: (input) => ({ charged: input.amount_cents }),
});

const held = new Map<string, () => void>();
const started = new Map<string, () => void>();
/** Resolves, once the tool runs call `id`, with what lets it finish. */
const running = (id: string) =>
  new Promise<() => void>((resolve) => {
    const release = held.get(id);
    if (release !== undefined) resolve(release);
    else started.set(id, () => resolve(held.get(id) as () => void));
  });
const slow = defineTool({
  name: 'export_report',
  inputSchema: { type: 'object' },
  execute: (_input, { call }) =>
    new Promise<string>((resolve) => {
      held.set(call.id, () => resolve('exported'));
      started.get(call.id)?.();
    }),
});

let cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const release of held.values()) release();
  held.clear();
  started.clear();
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

/** The ledger, with a `head()` that waits for `release()` before it reads. */
function slowHead(ledger: Ledger): { ledger: Ledger; release: () => void; asked: Promise<void> } {
  let release!: () => void;
  let asked!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const askedPromise = new Promise<void>((resolve) => (asked = resolve));
  return {
    ledger: {
      ...ledger,
      head: async () => {
        asked();
        await released;
        return ledger.head();
      },
    },
    release,
    asked: askedPromise,
  };
}

/** Resolves once the ledger's events for `callId` reach `status`. */
async function committed(ledger: Ledger, callId: string, status: string): Promise<void> {
  for (;;) {
    const reached = new Promise<void>((resolve) => {
      const stop = ledger.onCommitted(() => {
        stop();
        resolve();
      });
    });
    if ((await ledger.eventsAfter(0)).some((event) => event.callId === callId && event.to === status)) return;
    await reached;
  }
}

describeLedgers('following the ledger while it moves', (target) => {
  it('settled(id) resolves for a call that ends while the gate starts following the ledger', async () => {
    const opened = await (await target.fresh()).open();
    const { ledger, release } = slowHead(opened);
    const gate = createServerGate({ tools: [slow], ledger, recover: false });
    cleanup.push(() => gate.close());
    const call = await gate.propose(
      { id: 'run', name: 'export_report', arguments: {} },
      { session: 's1', principal: 'alice' },
    );
    expect(call.status).toBe('executing');
    const outcome = gate.settled('run');
    // The call ends before the ledger's head is read: the head is then past its last move.
    (await running('run'))();
    await committed(opened, 'run', 'committed');
    release();
    await expect(outcome).resolves.toMatchObject({ id: 'run', status: 'committed', output: 'exported' });
  });

  it('moves(session, { after }) delivers the moves made between catching up and following live', async () => {
    const opened = await (await target.fresh()).open();
    const { ledger, release, asked } = slowHead(opened);
    const gate = createServerGate({ tools: [charge], ledger, recover: false });
    cleanup.push(() => gate.close());
    const first = await gate.propose(
      { id: 'c1', name: 'charge', arguments: { amount_cents: 9000 } },
      { session: 's1', principal: 'alice' },
    );
    const seen: LedgerMove[] = [];
    const feed = gate.moves('s1', { principal: 'alice', after: 0 });
    cleanup.push(async () => {
      await feed.return?.();
    });
    const reading = (async () => {
      for await (const move of feed) {
        seen.push(move);
        if (move.event.callId === 'c2' && move.event.to === 'awaiting_approval') return;
      }
    })();
    await asked;
    // c2 moves while the feed is between its catch-up reads and the live tail.
    await gate.propose(
      { id: 'c2', name: 'charge', arguments: { amount_cents: 7000 } },
      { session: 's1', principal: 'alice' },
    );
    release();
    await reading;
    expect(seen.map(({ event }) => `${event.callId}:${event.from}->${event.to}`)).toEqual([
      'c1:null->pending',
      'c1:pending->validated',
      'c1:validated->awaiting_approval',
      'c2:null->pending',
      'c2:pending->validated',
      'c2:validated->awaiting_approval',
    ]);
    expect(await gate.approve('c1', { principal: 'alice', inputHash: await inputHash(first.input) })).toEqual(
      { ok: true },
    );
  });

  it('settled(id) rejects while the ledger cannot be read to start following, and follows again once it can', async () => {
    const opened = await (await target.fresh()).open();
    const failure = new Error('connection refused');
    let down = true;
    const ledger: Ledger = {
      ...opened,
      head: () => (down ? Promise.reject(failure) : opened.head()),
    };
    const reported: unknown[] = [];
    let told!: () => void;
    const toldOnce = new Promise<void>((resolve) => (told = resolve));
    const gate = createServerGate({
      tools: [slow],
      ledger,
      recover: false,
      onError: (error) => (reported.push(error), told()),
    });
    cleanup.push(() => gate.close());
    await gate.propose(
      { id: 'run', name: 'export_report', arguments: {} },
      { session: 's1', principal: 'alice' },
    );
    await toldOnce;
    await expect(gate.settled('run')).rejects.toBe(failure);
    down = false;
    const outcome = gate.settled('run');
    (await running('run'))();
    await expect(outcome).resolves.toMatchObject({ id: 'run', status: 'committed' });
    expect(reported.every((error) => error === failure)).toBe(true);
  });

  it("a call this process ends is not stopped by its own ending: the tool's signal stays unaborted and its span ends committed", async () => {
    const signals: AbortSignal[] = [];
    const keep = defineTool({
      name: 'keep',
      inputSchema: { type: 'object' },
      execute: (_input, { signal }) => {
        signals.push(signal);
        return 'kept';
      },
    });
    const gate = createServerGate({
      tools: [keep],
      ledger: await (await target.fresh()).open(),
      recover: false,
    });
    cleanup.push(() => gate.close());
    // The first call starts the gate following the ledger; the next ones end while it follows.
    for (const id of ['k1', 'k2', 'k3']) {
      expect(
        await gate.run({ id, name: 'keep', arguments: {} }, { session: 's1', principal: 'alice' }),
      ).toMatchObject({ status: 'committed' });
    }
    expect(signals.map((signal) => signal.aborted)).toEqual([false, false, false]);
  });
});
