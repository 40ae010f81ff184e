import { act, render, screen } from '@testing-library/react';
import { Profiler, type ReactNode } from 'react';
import { describe, expect, it } from 'vitest';
import {
  ToolCallStatus,
  ToolCallStatusLabel,
  ToolGateProvider,
  useToolCall,
  useToolCallIds,
} from '../src/index.ts';
import { createShop, openaiCall, renderWithGate } from './shop.tsx';

/** Counts the commits of each profiled subtree, by its id. */
function renderCounter() {
  const counts = new Map<string, number>();
  const Counted = ({ id, children }: { id: string; children: ReactNode }) => (
    <Profiler id={id} onRender={(name) => counts.set(name, (counts.get(name) ?? 0) + 1)}>
      {children}
    </Profiler>
  );
  return { counts, Counted, total: () => [...counts.values()].reduce((sum, n) => sum + n, 0) };
}

const charge = (id: string) => openaiCall(id, 'charge', { amount_cents: 100, currency: 'USD' });

describe('render counts', () => {
  it('with 500 calls on screen, one call moving re-renders exactly one <ToolCallStatus>, once', async () => {
    const shop = createShop();
    const ids = Array.from({ length: 500 }, (_, i) => `call_${i}`);
    for (const id of ids) shop.gate.propose(charge(id));
    const { counts, Counted, total } = renderCounter();
    const { container } = renderWithGate(
      shop.gate,
      ids.map((id) => (
        <Counted key={id} id={id}>
          <ToolCallStatus pressDelayMs={0} id={id} />
        </Counted>
      )),
    );
    // Role queries walk the whole tree per element; with 500 calls the attribute is the quick way in.
    const statuses = () => [...container.querySelectorAll<HTMLElement>('[data-toolgate="call"]')];
    expect(statuses()).toHaveLength(500);
    // Each status renders, then once more when its input is on screen and Approve may be enabled.
    expect(total()).toBe(1000);
    counts.clear();

    act(() => {
      shop.gate.approve('call_250');
    });
    expect([...counts]).toEqual([['call_250', 1]]);
    counts.clear();

    await act(() => shop.pay('call_250', { charged: 100 }));
    expect([...counts]).toEqual([['call_250', 1]]);
    counts.clear();

    act(() => {
      shop.gate.deny('call_499');
    });
    expect([...counts]).toEqual([['call_499', 1]]);
    expect(statuses().filter((el) => el.dataset['status'] === 'awaiting_approval')).toHaveLength(498);
    expect(statuses()[250]).toHaveTextContent('charge Done');
    expect(statuses()[499]).toHaveTextContent('charge Denied');
  });

  it('a transcript built from useToolCallIds stays still while its calls move, and skips them when one is added', () => {
    const shop = createShop();
    for (let i = 0; i < 100; i += 1) shop.gate.propose(charge(`call_${i}`));
    const { counts, Counted } = renderCounter();
    // Each status shows its label through a profiled child made once per call, so the count is of
    // the status's own renders (the label follows its context) and the element never breaks memo.
    const labels = new Map<string, ReactNode>();
    const labelOf = (id: string) => {
      if (!labels.has(id))
        labels.set(
          id,
          <Counted id={id}>
            <ToolCallStatusLabel />
          </Counted>,
        );
      return labels.get(id);
    };
    let transcriptRenders = 0;
    function Transcript() {
      transcriptRenders += 1;
      const ids = useToolCallIds();
      return ids.map((id) => (
        <ToolCallStatus pressDelayMs={0} key={id} id={id}>
          {labelOf(id)}
        </ToolCallStatus>
      ));
    }
    const { container } = renderWithGate(shop.gate, <Transcript />);
    expect(counts.size).toBe(100);
    counts.clear();
    transcriptRenders = 0;

    act(() => {
      shop.gate.approve('call_7');
    });
    expect(container.querySelectorAll('[data-toolgate="call"]')[7]).toHaveTextContent('charge Running');
    expect([...counts]).toEqual([['call_7', 1]]);
    expect(transcriptRenders).toBe(0);
    counts.clear();

    act(() => {
      shop.gate.propose(charge('call_new'));
    });
    expect(transcriptRenders).toBe(1);
    expect([...counts]).toEqual([['call_new', 1]]);
  });

  it("a call's whole lifecycle re-renders its status no more than once per status, streamed previews included", async () => {
    const shop = createShop();
    const { counts, Counted } = renderCounter();
    renderWithGate(
      shop.gate,
      <>
        <Counted id="streaming">
          <ToolCallStatus pressDelayMs={0} id="call_1" />
        </Counted>
        <Counted id="neighbour">
          <ToolCallStatus pressDelayMs={0} id="call_0" />
        </Counted>
      </>,
    );
    act(() => {
      shop.gate.propose(charge('call_0'));
    });
    counts.clear();

    act(() => {
      shop.gate.stream.open({ id: 'call_1', name: 'charge', source: 'openai-chat' });
    });
    for (let n = 1; n <= 30; n += 1) {
      act(() => {
        shop.gate.stream.preview('call_1', { amount_cents: n });
      });
    }
    act(() => {
      shop.gate.stream.close('call_1', '{"amount_cents":1250,"currency":"USD"}');
    });
    expect(screen.getAllByRole('status')[0]).toHaveAttribute('data-status', 'awaiting_approval');
    act(() => {
      shop.gate.approve('call_1');
    });
    await act(() => shop.pay('call_1', { charged: 1250 }));

    const history = shop.gate.get('call_1')?.history.map((step) => step.status);
    expect(history).toEqual(['pending', 'validated', 'awaiting_approval', 'executing', 'committed']);
    const renders = counts.get('streaming') ?? 0;
    expect(renders).toBeLessThanOrEqual(history?.length ?? 0);
    // pending; validated and awaiting_approval in one synchronous step, then once more as its input
    // is on screen (Approve is enabled only then); executing; committed.
    expect(renders).toBe(5);
    expect(counts.has('neighbour')).toBe(false);
  });

  it('useToolCall re-renders its own component for each streamed preview, and no other', () => {
    const shop = createShop();
    const { counts, Counted } = renderCounter();
    function Preview({ id }: { id: string }) {
      const { call } = useToolCall(id);
      return (
        <output data-testid={id}>
          {call?.status === 'pending' ? JSON.stringify(call.preview) : call?.status}
        </output>
      );
    }
    render(
      <ToolGateProvider gate={shop.gate}>
        <Counted id="a">
          <Preview id="call_a" />
        </Counted>
        <Counted id="b">
          <Preview id="call_b" />
        </Counted>
      </ToolGateProvider>,
    );
    act(() => {
      shop.gate.stream.open({ id: 'call_a', name: 'charge', source: 'openai-chat' });
      shop.gate.stream.open({ id: 'call_b', name: 'charge', source: 'openai-chat' });
    });
    counts.clear();
    for (const preview of [{ amount_cents: 1 }, { amount_cents: 12 }, { amount_cents: 125, currency: 'U' }]) {
      act(() => {
        shop.gate.stream.preview('call_a', preview);
      });
    }
    expect(screen.getByTestId('call_a')).toHaveTextContent('{"amount_cents":125,"currency":"U"}');
    expect(counts.get('a')).toBe(3);
    expect(counts.has('b')).toBe(false);
  });
});
