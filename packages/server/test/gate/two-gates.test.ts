import { defineTool, type ToolDefinition } from '@toolgate/core';
import { expect, it } from 'vitest';
import { createServerGate } from '../../src/index.ts';
import { describeLedgers, type Target } from '../support/ledgers.ts';

/**
 * Two gates as two app servers would have them: on PostgreSQL, each with a ledger object of its
 * own; on SQLite, sharing one, as one process should (two connections of one process to one file
 * would wait for each other's locks with the whole process blocked).
 */
async function twoGates(target: Target, tool: ToolDefinition) {
  const store = await target.fresh();
  const first = await store.open();
  const second = target.dialect === 'sqlite' ? first : await store.open();
  return [
    createServerGate({ tools: [tool], ledger: first, recover: false }),
    createServerGate({ tools: [tool], ledger: second, recover: false }),
  ] as const;
}

/** A tool whose `authorize` holds every proposal until `expected` of them have reached it. */
function meetingTool(expected: number) {
  let arrived = 0;
  let meet!: () => void;
  const met = new Promise<void>((resolve) => {
    meet = resolve;
  });
  const runs: number[] = [];
  const tool = defineTool({
    name: 'charge',
    inputSchema: {
      type: 'object',
      properties: { amount_cents: { type: 'integer' } },
      required: ['amount_cents'],
      additionalProperties: false,
    },
    async authorize() {
      arrived += 1;
      if (arrived === expected) meet();
      await met;
      return true;
    },
    execute: (input) => {
      runs.push(input.amount_cents);
      return { charged: input.amount_cents };
    },
  });
  return { tool, runs };
}

describeLedgers(
  'two server gates on one ledger',
  (target) => {
    it('both answer one id proposed to each at the same instant, and run it once', async () => {
      const { tool, runs } = meetingTool(2);
      const gates = await twoGates(target, tool);
      const proposal = { id: 'c1', name: 'charge', arguments: '{"amount_cents":100}' };
      // Both have checked the call in memory before either writes it: one write wins, and the
      // other gate answers with the call the winner wrote.
      const answers = await Promise.all(
        gates.map((gate) => gate.propose(proposal, { session: 's1', principal: 'alice' })),
      );
      expect(answers.map((answer) => answer.id)).toEqual(['c1', 'c1']);
      expect(
        answers
          .map((answer) => answer.status)
          .filter((status) => status !== 'executing' && status !== 'committed'),
      ).toEqual([]);
      expect(await gates[1].settled('c1')).toMatchObject({ status: 'committed', output: { charged: 100 } });
      expect(runs).toEqual([100]);
      await Promise.all(gates.map((gate) => gate.close()));
    });

    it('answers id_conflict on the gate that lost the race with other arguments', async () => {
      const { tool, runs } = meetingTool(2);
      const gates = await twoGates(target, tool);
      const answers = await Promise.all(
        [100, 200].map((amount, index) =>
          gates[index as 0 | 1].propose(
            { id: 'c1', name: 'charge', arguments: { amount_cents: amount } },
            { session: 's1', principal: 'alice' },
          ),
        ),
      );
      const [won, lost] =
        answers[0]?.status === 'rejected' ? [answers[1], answers[0]] : [answers[0], answers[1]];
      expect(lost).toMatchObject({ id: 'c1', status: 'rejected', reason: { code: 'id_conflict' } });
      expect(await gates[0].settled('c1')).toMatchObject({ status: 'committed', input: won?.input });
      expect(runs).toEqual([(won?.input as { amount_cents: number }).amount_cents]);
      await Promise.all(gates.map((gate) => gate.close()));
    });
  },
  { shared: true },
);
