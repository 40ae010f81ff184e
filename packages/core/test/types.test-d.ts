import * as v from 'valibot';
import { describe, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import {
  cancel,
  createToolGate,
  defineTool,
  isCallOf,
  type InputOf,
  type OutputOf,
  type Reason,
  type RejectedCode,
  type SettledCall,
  type ToolCallRecord,
} from '../src/index.ts';

interface Shop {
  balance_cents: number;
  tags: string[];
}

describe('input types flow from the schema', () => {
  it('gives approvers the validated input, and takes a list of principals or a Promise of one', () => {
    defineTool({
      name: 'wire',
      inputSchema: {
        type: 'object',
        properties: { amount_cents: { type: 'integer' } },
        required: ['amount_cents'],
        additionalProperties: false,
      },
      approvers: ({ input, principal, onBehalfOf }) => {
        expectTypeOf(input.amount_cents).toEqualTypeOf<number>();
        expectTypeOf(onBehalfOf).toEqualTypeOf<string | undefined>();
        return input.amount_cents > 100_000 ? Promise.resolve(['cfo']) : [`manager_of_${principal}`];
      },
      execute: () => 1,
    });
    defineTool({
      name: 'wire',
      inputSchema: { type: 'object' },
      // @ts-expect-error approvers answers principals, not a single one
      approvers: () => 'manager_1',
      execute: () => 1,
    });
  });

  it('gives the approvers of an escalation step the validated input, or takes a list of principals', () => {
    defineTool({
      name: 'wire',
      inputSchema: {
        type: 'object',
        properties: { amount_cents: { type: 'integer' } },
        required: ['amount_cents'],
        additionalProperties: false,
      },
      approvers: () => ['manager_1'],
      remindAfterMs: 60_000,
      approvalTtlMs: 86_400_000,
      escalate: [
        { afterMs: 3_600_000, approvers: ['on_call_lead'] },
        {
          afterMs: 14_400_000,
          approvers: ({ input }) => {
            expectTypeOf(input.amount_cents).toEqualTypeOf<number>();
            return Promise.resolve(['cfo']);
          },
        },
      ],
      execute: () => 1,
    });
    defineTool({
      name: 'wire',
      inputSchema: { type: 'object' },
      approvers: () => ['manager_1'],
      // @ts-expect-error an escalation step says after how long
      escalate: [{ approvers: ['on_call_lead'] }],
      execute: () => 1,
    });
  });

  it('infers from a JSON Schema written inline', () => {
    const charge = defineTool({
      name: 'charge',
      inputSchema: {
        type: 'object',
        properties: {
          amount_cents: { type: 'integer' },
          currency: { enum: ['USD', 'EUR'] },
          memo: { type: 'string' },
        },
        required: ['amount_cents', 'currency'],
        additionalProperties: false,
      },
      execute: (input) => {
        expectTypeOf(input.amount_cents).toEqualTypeOf<number>();
        expectTypeOf(input.currency).toEqualTypeOf<'USD' | 'EUR'>();
        expectTypeOf(input.memo).toEqualTypeOf<string | undefined>();
        return { receipt: 'r_1', amount_cents: input.amount_cents };
      },
    });
    expectTypeOf<InputOf<typeof charge>>().toEqualTypeOf<{
      amount_cents: number;
      currency: 'USD' | 'EUR';
      memo?: string;
    }>();
    expectTypeOf<OutputOf<typeof charge>>().toEqualTypeOf<{ receipt: string; amount_cents: number }>();
  });

  it('infers from a JSON Schema declared `as const`', () => {
    const schema = {
      type: 'object',
      properties: {
        items: {
          type: 'array',
          items: {
            type: 'object',
            properties: { sku: { type: 'string' } },
            required: ['sku'],
            additionalProperties: false,
          },
        },
      },
      required: ['items'],
      additionalProperties: false,
    } as const;
    const tool = defineTool({ name: 'order', inputSchema: schema, execute: (input) => input.items.length });
    expectTypeOf<InputOf<typeof tool>>().toEqualTypeOf<{ items: { sku: string }[] }>();
  });

  it('infers from Zod 4, after transforms', () => {
    const tool = defineTool({
      name: 'zod',
      inputSchema: z.object({ cents: z.number().int(), when: z.string().transform((s) => new Date(s)) }),
      execute: (input) => {
        expectTypeOf(input).toEqualTypeOf<{ cents: number; when: Date }>();
        return input.when.getTime();
      },
    });
    expectTypeOf<OutputOf<typeof tool>>().toEqualTypeOf<number>();
  });

  it('infers from Valibot', () => {
    defineTool({
      name: 'valibot',
      inputSchema: v.object({ currency: v.picklist(['USD', 'EUR']), cents: v.number() }),
      execute: (input) => {
        expectTypeOf(input).toEqualTypeOf<{ currency: 'USD' | 'EUR'; cents: number }>();
      },
    });
  });

  it('types commit and authorize from the input, the output and the app state', () => {
    defineTool({
      name: 'tag',
      inputSchema: z.object({ tag: z.string() }),
      execute: async (input) => (input.tag === 'x' ? cancel('no x') : { added: input.tag }),
      authorize: (input, ctx: { state: Shop; call: { id: string; name: string } }) => {
        expectTypeOf(input).toEqualTypeOf<{ tag: string }>();
        return ctx.state.tags.length < 10 || 'too many tags';
      },
      commit: (state: Shop, output, input) => {
        expectTypeOf(output).toEqualTypeOf<{ added: string }>();
        expectTypeOf(input).toEqualTypeOf<{ tag: string }>();
        return { tags: [...state.tags, output.added] };
      },
      needsApproval: (input) => input.tag.startsWith('admin'),
    });
  });

  it('refuses a commit that returns keys the state does not have', () => {
    defineTool({
      name: 'bad',
      inputSchema: z.object({}),
      execute: () => 1,
      // @ts-expect-error `balance` is not a key of Shop
      commit: (_state: Shop, output) => ({ balance: output }),
    });
  });

  it('refuses a tool whose execute expects a different input than its schema gives', () => {
    defineTool({
      name: 'bad',
      inputSchema: z.object({ cents: z.number() }),
      // @ts-expect-error cents is a number, not a string
      execute: (input: { cents: string }) => input.cents,
    });
  });
});

describe('a record narrows by status', () => {
  it('has output only when committed and reason only when rejected, cancelled or failed', () => {
    const record = {} as ToolCallRecord<{ cents: number }, { receipt: string }>;
    if (record.status === 'committed') {
      expectTypeOf(record.output).toEqualTypeOf<{ receipt: string }>();
      expectTypeOf(record.input).toEqualTypeOf<{ cents: number }>();
    }
    if (record.status === 'rejected') {
      expectTypeOf(record.reason).toEqualTypeOf<Reason<RejectedCode>>();
      expectTypeOf(record.input).toEqualTypeOf<{ cents: number } | undefined>();
    }
    if (record.status === 'cancelled' || record.status === 'failed') {
      expectTypeOf(record.reason.code).toEqualTypeOf<
        | 'tool_cancelled'
        | 'user_cancelled'
        | 'approval_denied'
        | 'approval_expired'
        | 'timeout'
        | 'tool_error'
        | 'output_invalid'
        | 'commit_error'
        | 'interrupted'
      >();
    }
    if (
      record.status === 'executing' ||
      record.status === 'awaiting_approval' ||
      record.status === 'validated'
    ) {
      expectTypeOf(record.input).toEqualTypeOf<{ cents: number }>();
      expectTypeOf(record.output).toEqualTypeOf<undefined>();
      expectTypeOf(record.reason).toEqualTypeOf<undefined>();
    }
    if (record.status === 'pending') {
      expectTypeOf(record.input).toEqualTypeOf<undefined>();
      expectTypeOf(record.preview).toEqualTypeOf<unknown>();
    }
    // @ts-expect-error output is not known before narrowing to committed
    const _output: { receipt: string } = record.output;
  });

  it('settled resolves to a terminal record', async () => {
    const gate = createToolGate({ tools: [] });
    const call = await gate.run({ name: 'x' });
    expectTypeOf(call).toEqualTypeOf<SettledCall>();
    expectTypeOf(call.status).toEqualTypeOf<'committed' | 'cancelled' | 'rejected' | 'failed'>();
  });

  it('answers each format with that provider’s type', () => {
    const gate = createToolGate({ tools: [] });
    expectTypeOf(gate.toolResult('x', 'openai-chat')).toEqualTypeOf<{
      role: 'tool';
      tool_call_id: string;
      content: string;
    }>();
    expectTypeOf(gate.toolResult('x', 'anthropic').is_error).toEqualTypeOf<boolean | undefined>();
  });
});

describe('isCallOf', () => {
  it('narrows a record to a tool’s input and output', () => {
    const charge = defineTool({
      name: 'charge',
      inputSchema: z.object({ cents: z.number() }),
      execute: (input) => ({ receipt: `r_${input.cents}` }),
    });
    const call = {} as ToolCallRecord | undefined;
    if (isCallOf(charge, call) && call.status === 'committed') {
      expectTypeOf(call.input).toEqualTypeOf<{ cents: number }>();
      expectTypeOf(call.output).toEqualTypeOf<{ receipt: string }>();
    }
  });
});
