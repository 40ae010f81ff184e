import { defineTool, inputHash, type ToolCallRecord } from '@toolgate/core';
import { createFakeClock } from '@toolgate/test-utils';
import { createServerGate, type Ledger, type ServerGateOptions } from '../../src/index.ts';

type Wire = { iban: string; amount_cents: number };

export const TTL = 60_000;

/**
 * A gate with a wire transfer whose approvers are the requester's manager, and finance too from
 * 10 000 € (two of them then), and a refund that only support is asked about.
 */
export function inboxGate(ledger: Ledger, options: Partial<ServerGateOptions> = {}) {
  const clock = createFakeClock(1_767_225_600_000);
  const wireTool = <Name extends string>(
    name: Name,
    approvals: number,
    approvers: (input: Wire) => string[],
  ) =>
    defineTool({
      name,
      inputSchema: {
        type: 'object',
        properties: { iban: { type: 'string' }, amount_cents: { type: 'integer', minimum: 1 } },
        required: ['iban', 'amount_cents'],
        additionalProperties: false,
      },
      approvals,
      approvers: ({ input }) => approvers(input),
      execute: (input) => ({ sent: input.amount_cents }),
    });
  const wire = wireTool('wire', 1, (input) =>
    input.amount_cents >= 1_000_000 ? ['manager_1', 'finance_1'] : ['manager_1'],
  );
  const bigWire = wireTool('big_wire', 2, () => ['manager_1', 'finance_1']);
  const refund = defineTool({
    name: 'refund',
    inputSchema: {
      type: 'object',
      properties: { order: { type: 'string' } },
      required: ['order'],
      additionalProperties: false,
    },
    approvers: () => ['support_1'],
    execute: (input: { order: string }) => ({ refunded: input.order }),
  });
  const gate = createServerGate({
    tools: [wire, bigWire, refund],
    ledger,
    recover: false,
    clock,
    approvalTtlMs: TTL,
    ...options,
  });
  const propose = (id: string, name: string, args: unknown, session: string, principal = 'alice') =>
    gate.propose({ id, name, arguments: args }, { session, principal });
  return { gate, clock, propose };
}

export const ids = (calls: readonly ToolCallRecord[]) => calls.map((call) => call.id);

export const hashOf = (call: ToolCallRecord | undefined) => inputHash(call?.input);
