/**
 * Listeners are app code: one that throws cannot keep the others from being told, and each event
 * reaches each listener once, in the order things happened, whatever listeners do while told.
 */
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { createToolGate, defineTool, type AuditEvent, type ToolGate } from '../src/index.ts';

const quick = defineTool({ name: 'quick', inputSchema: { type: 'object' }, execute: () => 'done' });
const ask = defineTool({
  name: 'ask',
  inputSchema: { type: 'object' },
  needsApproval: true,
  execute: () => 'done',
});

type Channel = 'calls' | 'call' | 'audit';

/** Subscribes to one of the gate's three kinds of listener. */
function subscribe(gate: ToolGate, channel: Channel, listener: () => void): () => void {
  if (channel === 'calls') return gate.calls.subscribe(listener);
  if (channel === 'call') return gate.subscribeCall('a', listener);
  return gate.audit.subscribe(listener);
}

const channels: [string, Channel][] = [
  ['gate.calls', 'calls'],
  ['gate.subscribeCall', 'call'],
  ['gate.audit', 'audit'],
];

describe('one listener cannot starve the others', () => {
  it.each(channels)(
    'tells every listener of %s after one that throws, and reports the error',
    (_name, channel) => {
      const onError = vi.fn();
      const gate = createToolGate({ tools: [ask], onError });
      subscribe(gate, channel, () => {
        throw new Error('listener bug');
      });
      const later = vi.fn();
      subscribe(gate, channel, later);
      gate.propose({ id: 'a', name: 'ask', arguments: '{}' });
      gate.approve('a');
      expect(later).toHaveBeenCalled();
      expect(later.mock.calls.length).toBe(onError.mock.calls.length);
      expect(onError).toHaveBeenCalledWith(expect.objectContaining({ message: 'listener bug' }));
    },
  );

  it('keeps the state of gate.calls right after a subscriber throws', () => {
    const gate = createToolGate({ tools: [quick], onError: () => undefined });
    gate.calls.subscribe(() => {
      throw new Error('listener bug');
    });
    const versions: number[] = [];
    gate.calls.subscribe((state) => versions.push(state.version));
    gate.propose({ id: 'a', name: 'quick', arguments: '{}' });
    gate.propose({ id: 'b', name: 'quick', arguments: '{}' });
    expect(versions).toEqual([1, 2]);
    expect(gate.calls.getState().records.get('b')?.status).toBe('committed');
  });

  it('survives an onError that throws', () => {
    const gate = createToolGate({
      tools: [quick],
      onError: () => {
        throw new Error('onError bug');
      },
    });
    gate.calls.subscribe(() => {
      throw new Error('listener bug');
    });
    const later = vi.fn();
    gate.calls.subscribe(later);
    expect(gate.propose({ id: 'a', name: 'quick', arguments: '{}' }).status).toBe('committed');
    expect(later).toHaveBeenCalledTimes(1);
  });
});

describe('each event reaches each listener once', () => {
  it.each(channels)(
    'a listener of %s that unsubscribes and subscribes again while told gets the event once',
    (_name, channel) => {
      const gate = createToolGate({ tools: [ask] });
      let told = 0;
      let unsubscribe = () => {};
      const listener = () => {
        told++;
        // Bounded, so that a gate that re-tells a re-subscribed listener fails here instead of hanging.
        if (told > 50) return;
        unsubscribe();
        unsubscribe = subscribe(gate, channel, listener);
      };
      unsubscribe = subscribe(gate, channel, listener);
      gate.propose({ id: 'a', name: 'ask', arguments: '{}' });
      // One store update for the propose; three audit events (pending, validated, awaiting_approval).
      expect(told).toBe(channel === 'audit' ? 3 : 1);
    },
  );

  it('does not tell a listener that another listener unsubscribed before its turn', () => {
    const gate = createToolGate({ tools: [quick] });
    const second = vi.fn();
    let unsubscribeSecond = () => {};
    gate.calls.subscribe(() => unsubscribeSecond());
    unsubscribeSecond = gate.calls.subscribe(second);
    gate.propose({ id: 'a', name: 'quick', arguments: '{}' });
    expect(second).not.toHaveBeenCalled();
  });

  it('tells later listeners of an event before the one a listener caused while told', () => {
    const gate = createToolGate({ tools: [ask] });
    const seen: string[] = [];
    gate.audit.subscribe((event) => {
      if (event.to === 'awaiting_approval') gate.deny(event.callId, 'not now');
    });
    gate.audit.subscribe((event) => seen.push(`${event.from}→${event.to}`));
    gate.propose({ id: 'a', name: 'ask', arguments: '{}' });
    expect(seen).toEqual([
      'null→pending',
      'pending→validated',
      'validated→awaiting_approval',
      'awaiting_approval→cancelled',
    ]);
  });
});

type Behaviour = 'nothing' | 'throw' | 'resubscribe' | 'approve' | 'deny' | 'cancel' | 'propose';

describe('whatever listeners do while told', () => {
  it('every listener gets each store version and each audit event at most once and in order; steady ones get all', () => {
    const behaviour = fc.constantFrom<Behaviour>(
      'nothing',
      'throw',
      'resubscribe',
      'approve',
      'deny',
      'cancel',
      'propose',
    );
    const listenerArb = fc.record({
      channel: fc.constantFrom<'calls' | 'audit'>('calls', 'audit'),
      script: fc.array(behaviour, { minLength: 1, maxLength: 8 }),
    });
    fc.assert(
      fc.property(
        fc.array(listenerArb, { minLength: 1, maxLength: 5 }),
        fc.array(fc.constantFrom('quick', 'ask'), { minLength: 1, maxLength: 4 }),
        (listeners, proposals) => {
          const gate = createToolGate({ tools: [quick, ask], onError: () => undefined });
          let proposed = 0;
          const act = (what: Behaviour) => {
            const ids = [...gate.calls.getState().records.keys()];
            const target = ids[ids.length - 1] ?? 'none';
            if (what === 'throw') throw new Error('listener bug');
            if (what === 'approve') gate.approve(target);
            if (what === 'deny') gate.deny(target);
            if (what === 'cancel') gate.cancel(target);
            // Bounded, so that listeners that propose on every event still come to rest.
            if (what === 'propose' && proposed < 20)
              gate.propose({ id: `l${++proposed}`, name: 'ask', arguments: '{}' });
          };
          const received = listeners.map(() => [] as number[]);
          listeners.forEach(({ channel, script }, index) => {
            let turn = 0;
            let unsubscribe = () => {};
            const listener = (state: { version: number } | AuditEvent) => {
              received[index]?.push(
                channel === 'calls'
                  ? (state as { version: number }).version
                  : gate.audit.export().indexOf(state as AuditEvent),
              );
              // Bounded, so that a gate that re-tells a re-subscribed listener fails instead of hanging.
              if (turn > 200) return;
              const what = script[turn++ % script.length] ?? 'nothing';
              if (what === 'resubscribe') {
                unsubscribe();
                unsubscribe =
                  channel === 'calls' ? gate.calls.subscribe(listener) : gate.audit.subscribe(listener);
                return;
              }
              act(what);
            };
            unsubscribe =
              channel === 'calls' ? gate.calls.subscribe(listener) : gate.audit.subscribe(listener);
          });
          proposals.forEach((name, i) => gate.propose({ id: `p${i}`, name, arguments: '{}' }));
          const versions = gate.calls.getState().version;
          const events = gate.audit.size();
          listeners.forEach(({ channel }, index) => {
            const got = received[index] ?? [];
            // Strictly increasing: never the same event twice, never an older one after a newer one.
            for (let i = 1; i < got.length; i++) expect(got[i]).toBeGreaterThan(got[i - 1] ?? -1);
            const all =
              channel === 'calls'
                ? Array.from({ length: versions }, (_, i) => i + 1)
                : Array.from({ length: events }, (_, i) => i);
            // A listener that stays subscribed hears everything; one that re-subscribes at worst misses nothing either.
            expect(got).toEqual(all);
          });
        },
      ),
      { numRuns: 300 },
    );
  });
});
