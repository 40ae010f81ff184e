// Outcomes nobody saw, on the page: a call held in doubt shows "Outcome unknown — check, then
// settle" with a form for the person who checked (it went through, with the output; it did not
// happen, run again), and a committed call whose tool can be undone shows Undo. First against a
// real server gate (SQLite, served on loopback) mirrored by a remote gate, reading what the page
// sent and what the server recorded; then the page's own gate, for the press delay on a fake clock.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createToolGate, defineTool, type ToolCallRecord } from '@toolgate/core';
import { createRemoteGate, type RemoteGate } from '@toolgate/core/remote';
import { createServerGate, sqliteLedger, toolgateHandler, type ServerGate } from '@toolgate/server';
import { act, render, screen, within } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createFakeClock, when } from '@toolgate/test-utils';
import { bearer, serve } from '../../server/test/support/http.ts';
import {
  ToolCallStatus,
  ToolCallStatusLabel,
  ToolCallStatusRefusal,
  ToolCallStatusSettle,
  ToolGateProvider,
  useToolCall,
  showRemoteParts,
} from '../src/index.ts';

// The page mirrors a server gate made with createRemoteGate, so it shows the parts such calls need.
showRemoteParts();

let cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

const payInput = {
  type: 'object',
  properties: { order: { type: 'string' }, amount_cents: { type: 'integer', minimum: 1 } },
  required: ['order', 'amount_cents'],
  additionalProperties: false,
} as const;
const receipt = {
  type: 'object',
  properties: { charge: { type: 'string' }, amount_cents: { type: 'integer' } },
  required: ['charge', 'amount_cents'],
  additionalProperties: false,
} as const;

interface Receipt {
  readonly charge: string;
  readonly amount_cents: number;
}

/**
 * A payment whose provider answers as `answers` says, one per run (`lost`: the answer never came
 * back, and the provider cannot be asked), and whose refunds are counted.
 */
function payment(answers: ('lost' | 'ok')[], options: { undo?: boolean } = {}) {
  const refunds: string[] = [];
  const pay = defineTool({
    name: 'pay',
    inputSchema: payInput,
    outputSchema: receipt,
    execute: (input): Receipt => {
      if (answers.shift() === 'lost') throw new Error('the provider dropped the connection');
      return { charge: `ch_${input.order}`, amount_cents: input.amount_cents };
    },
    reconcile: () => ({ outcome: 'unknown' }),
    onUnknown: 'hold',
    ...(options.undo === false
      ? {}
      : {
          compensate: (output: Receipt) => {
            refunds.push(output.charge);
            return { refund: `re_${output.charge}` };
          },
        }),
  });
  return { pay, refunds };
}

interface Sent {
  readonly path: string;
  readonly body: unknown;
}

/** A server gate over a SQLite file with `pay`, served on loopback, and alice's page mirroring her session. */
async function mirror(tool: ReturnType<typeof payment>['pay'], pageTool = tool) {
  const directory = mkdtempSync(join(tmpdir(), 'toolgate-react-outcomes-'));
  const ledger = await sqliteLedger({ path: join(directory, 'ledger.db') });
  const server = createServerGate({ tools: [tool], ledger, recover: false, onError: () => undefined });
  const served = await serve(toolgateHandler(server, { authenticate: bearer }));
  cleanup.push(
    () => rmSync(directory, { recursive: true, force: true }),
    () => ledger.close(),
    () => server.close(),
    () => served.close(),
  );
  const sent: Sent[] = [];
  const gate = createRemoteGate({
    url: `${served.origin}/api/toolgate`,
    session: 's1',
    tools: [pageTool],
    headers: { Authorization: 'Bearer alice' },
    clock: createFakeClock(),
    fetch: (url, init) => {
      // The remote gate posts a URL string and a JSON string body.
      if (init?.method === 'POST')
        sent.push({ path: new URL(url as string).pathname, body: JSON.parse(init.body as string) });
      return fetch(url, init);
    },
  });
  cleanup.push(() => gate.close());
  await when(gate.connection, (state) => state.state === 'live');
  return { server, gate, sent };
}

async function heldCall(server: ServerGate, gate: RemoteGate) {
  await server.propose(
    { id: 'p1', name: 'pay', arguments: { order: 'o_1', amount_cents: 1250 } },
    { session: 's1', principal: 'alice' },
  );
  await act(() => when(gate.calls, () => gate.get('p1')?.doubt !== undefined));
}

const moved = (gate: RemoteGate, check: (call: ToolCallRecord | undefined) => boolean) =>
  act(() => when(gate.calls, () => check(gate.get('p1'))));
const answered = (gate: RemoteGate, check: () => boolean) =>
  act(() =>
    when(
      {
        getState: () => gate.requestOf('p1'),
        subscribe: (listener) => gate.subscribeCall('p1', () => listener(gate.requestOf('p1'))),
      },
      check,
    ),
  );

describe('<ToolCallStatus> for a call held in doubt (a real server gate)', () => {
  it('says the outcome is unknown, offers no Cancel, and settles it committed with the output and note the person gives', async () => {
    const { pay } = payment(['lost']);
    const { server, gate, sent } = await mirror(pay);
    await heldCall(server, gate);
    const { container } = render(
      <ToolGateProvider gate={gate}>
        <ToolCallStatus pressDelayMs={0} id="p1" />
      </ToolGateProvider>,
    );
    const status = screen.getByRole('status');
    expect(status).toHaveAttribute('data-status', 'executing');
    expect(within(status).getByText('Outcome unknown — check, then settle')).toBeInTheDocument();
    expect(container.querySelector('[data-toolgate="doubt"]')).toHaveTextContent(
      'the provider dropped the connection',
    );
    expect(within(status).queryByRole('button', { name: 'Cancel' })).toBeNull();
    const user = userEvent.setup();
    const output = within(status).getByLabelText('What the tool returned (JSON)');
    const wentThrough = within(status).getByRole('button', { name: 'It went through' });

    // Not JSON: the page says so and sends nothing.
    await user.type(output, 'ch_o_1 for 12.50');
    await user.click(wentThrough);
    expect(container.querySelector('[data-toolgate="settle-error"]')).toHaveTextContent('That is not JSON (');
    expect(output).toHaveAttribute('aria-invalid', 'true');
    expect(sent).toEqual([]);

    // JSON the tool's schema refuses: the server says why, and the call stays held.
    await user.clear(output);
    await user.type(output, '{{"charge": "ch_o_1"}');
    await user.click(wentThrough);
    await answered(gate, () => gate.requestOf('p1')?.state === 'refused');
    const refusal = container.querySelector('[data-toolgate="refusal"]');
    expect(refusal).toHaveAttribute('data-code', 'invalid_output');
    expect(refusal).toHaveTextContent(
      /^Not settled: the output you gave is not one this tool returns: .+\. The call is still held; correct it, then settle again\.$/,
    );
    expect(container.querySelector('[data-toolgate="settle-error"]')).toBeNull();
    expect((await server.get('p1'))?.doubt).toBeDefined();

    await user.clear(output);
    await user.type(output, '{{"charge": "ch_o_1", "amount_cents": 1250}');
    await user.type(within(status).getByLabelText('How you know'), 'ch_o_1 is in the dashboard');
    await user.click(wentThrough);
    await moved(gate, (call) => call?.status === 'committed');
    expect(status).toHaveAttribute('data-status', 'committed');
    expect(status).toHaveTextContent('pay Done (settled by alice)');
    expect(container.querySelector('[data-toolgate="settle"]')).toBeNull();
    expect(sent).toEqual([
      {
        path: '/api/toolgate/calls/p1/resolve',
        body: { outcome: 'committed', output: { charge: 'ch_o_1' } },
      },
      {
        path: '/api/toolgate/calls/p1/resolve',
        body: {
          outcome: 'committed',
          output: { charge: 'ch_o_1', amount_cents: 1250 },
          note: 'ch_o_1 is in the dashboard',
        },
      },
    ]);
    expect(await server.get('p1')).toMatchObject({
      status: 'committed',
      output: { charge: 'ch_o_1', amount_cents: 1250 },
      evidence: { source: 'person', by: 'alice', note: 'ch_o_1 is in the dashboard' },
    });
  });

  it('"It did not happen — run again" runs the call again once, and it commits on its own answer', async () => {
    const { pay } = payment(['lost', 'ok']);
    const { server, gate, sent } = await mirror(pay);
    await heldCall(server, gate);
    render(
      <ToolGateProvider gate={gate}>
        <ToolCallStatus pressDelayMs={0} id="p1" />
      </ToolGateProvider>,
    );
    const status = screen.getByRole('status');
    const user = userEvent.setup();
    await user.type(within(status).getByLabelText('How you know'), 'no charge with this key');
    await user.click(within(status).getByRole('button', { name: 'It did not happen — run again' }));
    await moved(gate, (call) => call?.status === 'committed');
    expect(status).toHaveTextContent('pay Done');
    expect(status.querySelector('[data-toolgate="evidence"]')).toBeNull();
    expect(sent).toEqual([
      {
        path: '/api/toolgate/calls/p1/resolve',
        body: { outcome: 'not_executed', note: 'no charge with this key' },
      },
    ]);
    expect(await server.get('p1')).toMatchObject({
      status: 'committed',
      attempt: 2,
      output: { charge: 'ch_o_1', amount_cents: 1250 },
    });
  });

  it('a headless settle form: the app renders it, and the settlements go through the same rules', async () => {
    const { pay } = payment(['lost']);
    const { server, gate, sent } = await mirror(pay);
    await heldCall(server, gate);
    render(
      <ToolGateProvider gate={gate}>
        <ToolCallStatus pressDelayMs={0} id="p1">
          <ToolCallStatusLabel nameOf={(principal) => (principal === 'alice' ? 'Alice (ops)' : principal)} />
          <ToolCallStatusRefusal />
          <ToolCallStatusSettle>
            {({ doubt, ready, committed }) => (
              <p>
                Unsure since {doubt.message}.{' '}
                <button
                  aria-disabled={!ready}
                  onClick={() => committed({ charge: 'ch_o_1', amount_cents: 1250 }, 'checked')}
                >
                  Charged
                </button>
              </p>
            )}
          </ToolCallStatusSettle>
        </ToolCallStatus>
      </ToolGateProvider>,
    );
    await userEvent.setup().click(screen.getByRole('button', { name: 'Charged' }));
    await moved(gate, (call) => call?.status === 'committed');
    expect(screen.getByRole('status')).toHaveTextContent('pay Done (settled by Alice (ops))');
    expect(sent.map((request) => request.body)).toEqual([
      { outcome: 'committed', output: { charge: 'ch_o_1', amount_cents: 1250 }, note: 'checked' },
    ]);
  });
});

describe('Undo for a committed call (a real server gate)', () => {
  it("undoes a committed call through its tool's compensate, once, and links the compensation", async () => {
    const { pay, refunds } = payment(['ok']);
    const { server, gate, sent } = await mirror(pay);
    await server.run(
      { id: 'p1', name: 'pay', arguments: { order: 'o_1', amount_cents: 1250 } },
      { session: 's1', principal: 'alice' },
    );
    await moved(gate, (call) => call?.status === 'committed');
    const { container } = render(
      <ToolGateProvider gate={gate}>
        <ToolCallStatus pressDelayMs={0} id="p1" />
      </ToolGateProvider>,
    );
    const status = screen.getByRole('status');
    const user = userEvent.setup();
    await user.click(within(status).getByRole('button', { name: 'Undo' }));
    await moved(gate, (call) => call?.compensation?.status === 'committed');
    expect(within(status).queryByRole('button', { name: 'Undo' })).toBeNull();
    const link = container.querySelector('[data-toolgate="compensation"]');
    expect(link).toHaveAttribute('data-status', 'committed');
    expect(link).toHaveTextContent('Undone p1:compensate');
    expect(sent).toEqual([{ path: '/api/toolgate/calls/p1/compensate', body: {} }]);
    expect(refunds).toEqual(['ch_o_1']);
    expect(await server.get('p1:compensate')).toMatchObject({
      status: 'committed',
      output: { refund: 're_ch_o_1' },
    });
  });

  it('ignores a press on Undo in the first 500 ms after it appears', async () => {
    const { pay, refunds } = payment(['ok']);
    const { server, gate, sent } = await mirror(pay);
    await server.run(
      { id: 'p1', name: 'pay', arguments: { order: 'o_1', amount_cents: 1250 } },
      { session: 's1', principal: 'alice' },
    );
    await moved(gate, (call) => call?.status === 'committed');
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      render(
        <ToolGateProvider gate={gate}>
          <ToolCallStatus id="p1" />
        </ToolGateProvider>,
      );
      const undo = screen.getByRole('button', { name: 'Undo' });
      expect(undo).toHaveAttribute('aria-disabled', 'true');
      act(() => undo.click());
      act(() => void vi.advanceTimersByTime(499));
      act(() => undo.click());
      expect(gate.requestOf('p1')).toBeUndefined();
      act(() => void vi.advanceTimersByTime(1));
      expect(undo).not.toHaveAttribute('aria-disabled');
      act(() => undo.click());
      // Sent at once: the request is on its way, and the button says so.
      expect(gate.requestOf('p1')).toEqual({ action: 'compensate', state: 'sending' });
      expect(screen.getByRole('button', { name: 'Undoing…' })).toHaveAttribute('aria-busy', 'true');
    } finally {
      vi.useRealTimers();
    }
    await moved(gate, (call) => call?.compensation?.status === 'committed');
    expect(sent).toEqual([{ path: '/api/toolgate/calls/p1/compensate', body: {} }]);
    expect(refunds).toEqual(['ch_o_1']);
  });

  it("shows no Undo when the page's definition of the tool has no compensate, and a refusal in words when the server has none", async () => {
    const { pay } = payment(['ok', 'ok'], { undo: false });
    const { pay: pageUndoes } = payment([]);
    const { server, gate } = await mirror(pay, pageUndoes);
    await server.run(
      { id: 'p1', name: 'pay', arguments: { order: 'o_1', amount_cents: 1250 } },
      { session: 's1', principal: 'alice' },
    );
    await moved(gate, (call) => call?.status === 'committed');
    const { container } = render(
      <ToolGateProvider gate={gate}>
        <ToolCallStatus pressDelayMs={0} id="p1" />
      </ToolGateProvider>,
    );
    await userEvent.setup().click(screen.getByRole('button', { name: 'Undo' }));
    await answered(gate, () => gate.requestOf('p1')?.state === 'refused');
    expect(container.querySelector('[data-toolgate="refusal"]')).toHaveTextContent(
      'Not undone: this tool has no way to undo what it did. Undo it where it was done.',
    );

    const { server: other, gate: plain } = await mirror(pay);
    await other.run(
      { id: 'p1', name: 'pay', arguments: { order: 'o_1', amount_cents: 1250 } },
      { session: 's1', principal: 'alice' },
    );
    await moved(plain, (call) => call?.status === 'committed');
    render(
      <ToolGateProvider gate={plain}>
        <ToolCallStatus pressDelayMs={0} id="p1" data-testid="plain" />
      </ToolGateProvider>,
    );
    expect(screen.getByTestId('plain')).toHaveAttribute('data-status', 'committed');
    expect(within(screen.getByTestId('plain')).queryByRole('button')).toBeNull();
  });
});

describe("the settle form's presses land only on what the person sees (the page's own gate)", () => {
  it('ignores a press in the first 500 ms after the call is held, and the Cancel of the run again waits its own 500 ms', async () => {
    let release: (receipt: Receipt) => void = () => undefined;
    let runs = 0;
    const pay = defineTool({
      name: 'pay',
      inputSchema: payInput,
      execute: () => {
        runs += 1;
        if (runs === 1) throw new Error('the provider dropped the connection');
        return new Promise<Receipt>((resolve) => (release = resolve));
      },
      reconcile: () => ({ outcome: 'unknown' }),
      onUnknown: 'hold',
    });
    const gate = createToolGate({ tools: [pay] });
    gate.propose({ id: 'p1', name: 'pay', arguments: { order: 'o_1', amount_cents: 1250 } });
    await gate.stopped('p1');
    vi.useFakeTimers();
    try {
      render(
        <ToolGateProvider gate={gate}>
          <ToolCallStatus id="p1" />
        </ToolGateProvider>,
      );
      const status = screen.getByRole('status');
      const again = within(status).getByRole('button', { name: 'It did not happen — run again' });
      expect(again).toHaveAttribute('aria-disabled', 'true');
      act(() => again.click());
      act(() => void vi.advanceTimersByTime(499));
      act(() => again.click());
      expect(runs).toBe(1);
      act(() => void vi.advanceTimersByTime(1));
      expect(again).not.toHaveAttribute('aria-disabled');
      act(() => again.click());
      await act(async () => {});
      expect(runs).toBe(2);
      expect(gate.get('p1')).toMatchObject({ status: 'executing', attempt: 2 });
      expect(status).toHaveTextContent('pay Running');
      // Cancel took the settlement's place: for 500 ms it ignores a press too.
      const cancel = within(status).getByRole('button', { name: 'Cancel' });
      expect(cancel).toHaveAttribute('aria-disabled', 'true');
      act(() => cancel.click());
      expect(gate.get('p1')?.status).toBe('executing');
      release({ charge: 'ch_o_1', amount_cents: 1250 });
      await act(async () => {});
      expect(status).toHaveAttribute('data-status', 'committed');
    } finally {
      vi.useRealTimers();
    }
  });

  it('useToolCall exposes resolve and compensate beside approve, deny and cancel', async () => {
    const pay = defineTool({
      name: 'pay',
      inputSchema: payInput,
      execute: () => {
        throw new Error('the provider dropped the connection');
      },
      reconcile: () => ({ outcome: 'unknown' }),
      onUnknown: 'hold',
    });
    const gate = createToolGate({ tools: [pay] });
    gate.propose({ id: 'p1', name: 'pay', arguments: { order: 'o_1', amount_cents: 1250 } });
    await gate.stopped('p1');
    function Card() {
      const { call, resolve, compensate } = useToolCall('p1');
      return (
        <p>
          {call?.status} {call?.status === 'committed' ? JSON.stringify(call.output) : ''}
          <button onClick={() => resolve({ outcome: 'committed', output: 'ch_o_1', note: 'seen' })}>
            Settle
          </button>
          <button onClick={() => compensate('returned')}>Undo</button>
        </p>
      );
    }
    render(
      <ToolGateProvider gate={gate}>
        <Card />
      </ToolGateProvider>,
    );
    const user = userEvent.setup();
    // The page's own gate undoes nothing: only a gate that mirrors a server gate can.
    await user.click(screen.getByRole('button', { name: 'Undo' }));
    await user.click(screen.getByRole('button', { name: 'Settle' }));
    expect(screen.getByText(/committed/)).toHaveTextContent('committed "ch_o_1"');
    expect(gate.get('p1')).toMatchObject({ evidence: { source: 'person', note: 'seen' } });
  });
});
