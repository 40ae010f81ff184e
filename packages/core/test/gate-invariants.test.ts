import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createStore } from 'zustand/vanilla';
import { cancel, createToolGate, defineTool, isTerminal } from '../src/index.ts';

const NAMES = ['pay', 'quick', 'slow', 'picky', 'constructor', '__proto__', 'nope', ''];
const IDS = ['a', 'b', 'c', 'd', 'e'];

/** Proposals as models send them: every shape, valid and not, with ids from a small pool so duplicates happen. */
const argumentsArb = fc.oneof(
  fc.record({ cents: fc.integer({ min: -5, max: 50 }) }),
  fc.record({ cents: fc.oneof(fc.string(), fc.double(), fc.constant(null), fc.boolean()) }),
  fc.dictionary(fc.string(), fc.jsonValue()),
  fc.jsonValue(),
);
const argsText = argumentsArb.chain((value) =>
  fc.oneof(
    fc.constant(JSON.stringify(value) ?? ''),
    fc.constant(value),
    fc.string(),
    fc.constant(JSON.stringify(JSON.stringify(value))),
    fc.constant((JSON.stringify(value) ?? '').slice(0, 5)),
  ),
);
const idArb = fc.option(fc.constantFrom(...IDS), { nil: undefined });
const nameArb = fc.constantFrom(...NAMES);
const proposalArb = fc.oneof(
  fc.record({ id: idArb, name: nameArb, arguments: argsText }),
  fc.record({
    id: idArb,
    type: fc.constant('function'),
    function: fc.record({ name: nameArb, arguments: argsText }),
  }),
  fc.record({
    type: fc.constant('function_call'),
    call_id: idArb,
    name: nameArb,
    arguments: argsText,
    status: fc.constantFrom('completed', 'incomplete'),
  }),
  fc.record({ type: fc.constant('tool_use'), id: idArb, name: nameArb, input: argumentsArb }),
  fc.record({ functionCall: fc.record({ id: idArb, name: nameArb, args: argumentsArb }) }),
  fc.record({ type: fc.constant('tool-call'), toolCallId: idArb, toolName: nameArb, input: argumentsArb }),
  fc.tuple(nameArb, argsText).map(([name, args]) => JSON.stringify({ name, arguments: args })),
  fc.anything(),
  fc.string(),
);

type Op =
  | { kind: 'propose'; proposal: unknown }
  | { kind: 'approve' | 'deny' | 'cancel'; id: string }
  | { kind: 'release' }
  | { kind: 'tick' };

/** Well-formed calls to real tools, so that the interesting interleavings happen often. */
const goodProposalArb = fc.record({
  id: fc.constantFrom(...IDS),
  name: fc.constantFrom('pay', 'quick', 'slow', 'picky'),
  arguments: fc.integer({ min: 0, max: 30 }).map((cents) => JSON.stringify({ cents })),
});

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: goodProposalArb.map((proposal) => ({ kind: 'propose' as const, proposal })) },
  { weight: 2, arbitrary: proposalArb.map((proposal) => ({ kind: 'propose' as const, proposal })) },
  fc.record({
    kind: fc.constantFrom('approve' as const, 'deny' as const, 'cancel' as const),
    id: fc.constantFrom(...IDS, 'tg_1', 'tg_2'),
  }),
  fc.constant({ kind: 'release' as const }),
  fc.constant({ kind: 'tick' as const }),
);

function world() {
  const store = createStore<{ total: number; committed: string[] }>()(() => ({ total: 0, committed: [] }));
  let updates = 0;
  store.subscribe(() => updates++);
  const executions = new Map<string, number>();
  const releases: (() => void)[] = [];
  const count = (id: string) => executions.set(id, (executions.get(id) ?? 0) + 1);
  const commit = (state: { total: number; committed: string[] }, output: { id: string; cents: number }) => ({
    total: state.total + output.cents,
    committed: [...state.committed, output.id],
  });
  const schema = {
    type: 'object',
    properties: { cents: { type: 'integer', minimum: 0 } },
    required: ['cents'],
  } as const;
  const gate = createToolGate({
    store,
    tools: [
      defineTool({
        name: 'pay',
        inputSchema: schema,
        needsApproval: (input) => input.cents > 20,
        execute: async (input, { call }) => {
          count(call.id);
          return input.cents === 13 ? cancel('unlucky') : { id: call.id, cents: input.cents };
        },
        commit,
      }),
      defineTool({
        name: 'quick',
        inputSchema: schema,
        execute: (input, { call }) => {
          count(call.id);
          if (input.cents === 7) throw new Error('seven');
          return { id: call.id, cents: input.cents };
        },
        commit,
      }),
      defineTool({
        name: 'slow',
        inputSchema: schema,
        execute: (input, { call }) => {
          count(call.id);
          return new Promise<{ id: string; cents: number }>((resolve) =>
            releases.push(() => resolve({ id: call.id, cents: input.cents })),
          );
        },
        commit,
      }),
      defineTool({
        name: 'picky',
        inputSchema: schema,
        authorize: (input) => input.cents % 2 === 0 || 'odd amounts are not allowed',
        execute: (input, { call }) => {
          count(call.id);
          return { id: call.id, cents: input.cents };
        },
        commit: (state: { total: number; committed: string[] }, output: { id: string; cents: number }) => {
          if (output.cents === 4) throw new Error('commit refuses 4');
          return commit(state, output);
        },
      }),
    ],
  });
  return { gate, store, executions, releases, updates: () => updates };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('properties', () => {
  it('propose never throws, whatever it is given, and always answers with a record', () => {
    const { gate } = world();
    fc.assert(
      fc.property(proposalArb, (proposal) => {
        const call = gate.propose(proposal);
        expect(typeof call.id).toBe('string');
        expect(call.history[0]?.status).toBe('pending');
        if (call.status === 'rejected') expect(call.reason.message.length).toBeGreaterThan(0);
      }),
      { numRuns: 2_000 },
    );
  }, 60_000);

  it('for any proposals and any interleaving of approve, deny and cancel: nothing runs twice, the store changes only on commit and once per committed call, and every call ends exactly once', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { maxLength: 40 }), async (ops) => {
        const { gate, store, executions, releases, updates } = world();
        const before = store.getState();
        for (const op of ops) {
          switch (op.kind) {
            case 'propose':
              expect(() => gate.propose(op.proposal)).not.toThrow();
              break;
            case 'approve':
            case 'deny':
            case 'cancel':
              expect(typeof gate[op.kind](op.id)).toBe('boolean');
              break;
            case 'release':
              releases.splice(0).forEach((release) => release());
              break;
            case 'tick':
              await flush();
          }
        }
        // Finish what is left: a person decides every open approval, slow tools return.
        for (const call of gate.calls.getState().records.values())
          if (call.status === 'awaiting_approval') gate.approve(call.id);
        releases.splice(0).forEach((release) => release());
        await flush();
        releases.splice(0).forEach((release) => release());
        await flush();

        const records = [...gate.calls.getState().records.values()];
        for (const call of records) {
          expect(isTerminal(call.status)).toBe(true);
          expect(call.history.filter((h) => isTerminal(h.status))).toHaveLength(1);
          expect(call.history[0]?.status).toBe('pending');
          const events = gate.audit.export().filter((e) => e.callId === call.id);
          expect(events.map((e) => e.to)).toEqual(call.history.map((h) => h.status));
          expect(events[0]?.from).toBeNull();
        }
        for (const count of executions.values()) expect(count).toBe(1);

        const committed = records.filter((c) => c.status === 'committed').map((c) => c.id);
        expect([...store.getState().committed].sort()).toEqual(committed.sort());
        expect(updates()).toBe(committed.length);
        if (committed.length === 0) expect(store.getState()).toBe(before);
      }),
      { numRuns: 300 },
    );
  }, 60_000);
});
