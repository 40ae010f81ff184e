import {
  defineTool,
  type CancelledCode,
  type FailedCode,
  type ConnectionState,
  type Issue,
  type RejectedCode,
  type ToolCallRecord,
} from '@toolgate/core';
import type { ComponentProps } from 'react';
import { describe, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import {
  useGateConnection,
  useToolCall,
  useToolCallIds,
  useToolCalls,
  type ToolCallControls,
  type ToolCallStatus,
  type UseToolCallResult,
} from '../src/index.ts';

const charge = defineTool({
  name: 'charge',
  inputSchema: {
    type: 'object',
    properties: {
      amount_cents: { type: 'integer', minimum: 0 },
      currency: { enum: ['USD', 'EUR'] },
      memo: { type: 'string' },
    },
    required: ['amount_cents', 'currency'],
    additionalProperties: false,
  },
  execute: async (input) => ({ receipt: `r_${input.amount_cents}`, charged: input.amount_cents }),
});

const search = defineTool({
  name: 'search',
  inputSchema: z.object({ query: z.string(), limit: z.number().int().default(10) }),
  execute: ({ query, limit }) => ({ hits: [query], limit }),
});

const part = {
  type: 'tool_use',
  id: 'toolu_1',
  name: 'charge',
  input: { amount_cents: 1250, currency: 'USD' },
};

describe('useToolCall narrows the record by status', () => {
  it('returns the record or undefined, and stable controls', () => {
    const result = useToolCall('call_1');
    expectTypeOf(result).toEqualTypeOf<UseToolCallResult>();
    expectTypeOf(result.call).toEqualTypeOf<ToolCallRecord | undefined>();
    expectTypeOf(result).toExtend<ToolCallControls>();
    expectTypeOf(result.approve).toEqualTypeOf<() => boolean>();
    expectTypeOf(result.deny).toEqualTypeOf<(reason?: string) => boolean>();
    expectTypeOf(result.cancel).toEqualTypeOf<(reason?: string) => boolean>();
  });

  it('pending carries the preview and nothing settled', () => {
    const { call } = useToolCall(part);
    if (call?.status === 'pending') {
      expectTypeOf(call.preview).toBeUnknown();
      expectTypeOf(call.input).toBeUndefined();
      expectTypeOf(call.output).toBeUndefined();
      expectTypeOf(call.reason).toBeUndefined();
    }
  });

  it('active statuses carry the input, no output and no reason', () => {
    const { call } = useToolCall(part, { tool: charge });
    if (
      call?.status === 'awaiting_approval' ||
      call?.status === 'executing' ||
      call?.status === 'validated'
    ) {
      expectTypeOf(call.input.amount_cents).toEqualTypeOf<number>();
      expectTypeOf(call.output).toBeUndefined();
      expectTypeOf(call.reason).toBeUndefined();
    }
  });

  it('committed carries the output', () => {
    const { call } = useToolCall(part, { tool: charge });
    if (call?.status === 'committed') {
      expectTypeOf(call.output).toEqualTypeOf<{ receipt: string; charged: number }>();
      expectTypeOf(call.reason).toBeUndefined();
    }
  });

  it('each way a call ends carries its own reason codes, with issues', () => {
    const { call } = useToolCall('call_1');
    if (call?.status === 'rejected') {
      expectTypeOf(call.reason.code).toEqualTypeOf<RejectedCode>();
      expectTypeOf(call.reason.issues).toEqualTypeOf<readonly Issue[] | undefined>();
      expectTypeOf(call.output).toBeUndefined();
    }
    if (call?.status === 'cancelled') expectTypeOf(call.reason.code).toEqualTypeOf<CancelledCode>();
    if (call?.status === 'failed') expectTypeOf(call.reason.code).toEqualTypeOf<FailedCode>();
  });

  it('an unnarrowed record has no output or reason to read without a check', () => {
    const { call } = useToolCall('call_1');
    expectTypeOf(call?.output).toBeUnknown();
    expectTypeOf(call?.reason).toEqualTypeOf<ToolCallRecord['reason']>();
    // @ts-expect-error a reason exists only once the call has ended badly
    void call?.reason.code;
  });
});

describe('tool input types flow from the schema', () => {
  it('from a JSON Schema', () => {
    const { call } = useToolCall(part, { tool: charge });
    if (call?.status === 'awaiting_approval') {
      expectTypeOf(call.input).toEqualTypeOf<{
        amount_cents: number;
        currency: 'USD' | 'EUR';
        memo?: string;
      }>();
    }
    if (call?.status === 'rejected') {
      // Present only when the arguments were valid (the app refused the call).
      expectTypeOf(call.input).toEqualTypeOf<
        { amount_cents: number; currency: 'USD' | 'EUR'; memo?: string } | undefined
      >();
    }
  });

  it('from a Zod schema, after defaults', () => {
    const { call } = useToolCall('call_2', { tool: search, turn: 'turn_1' });
    if (call?.status === 'executing')
      expectTypeOf(call.input).toEqualTypeOf<{ query: string; limit: number }>();
    if (call?.status === 'committed')
      expectTypeOf(call.output).toEqualTypeOf<{ hits: string[]; limit: number }>();
  });

  it('takes only tool definitions and the gate’s propose options', () => {
    // @ts-expect-error not a tool definition
    useToolCall('call_1', { tool: { name: 'charge' } });
    // @ts-expect-error ids are strings
    useToolCall(part, { id: 7 });
    useToolCall(part, { id: 'message_1:0', turn: 'message_1', signal: new AbortController().signal });
    // @ts-expect-error a proposal is an object (or its id, a string)
    useToolCall(42);
  });
});

describe('lists and the status component', () => {
  it('useToolCalls and useToolCallIds return read-only arrays', () => {
    expectTypeOf(useToolCalls()).toEqualTypeOf<readonly ToolCallRecord[]>();
    expectTypeOf(useToolCalls((call) => call.status === 'awaiting_approval')).toEqualTypeOf<
      readonly ToolCallRecord[]
    >();
    expectTypeOf(useToolCallIds((call) => call.turn === 't')).toEqualTypeOf<readonly string[]>();
  });

  it('<ToolCallStatus> takes an id or a record, words by status, and <div> attributes', () => {
    type Props = ComponentProps<typeof ToolCallStatus>;
    expectTypeOf<Props['id']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<Props['call']>().toEqualTypeOf<ToolCallRecord | undefined>();
    expectTypeOf<Props>().toHaveProperty('className');
    expectTypeOf<{ labels: { awaiting_approval: string; denied: string } }>().toExtend<
      Pick<Props, 'labels'>
    >();
    expectTypeOf<{ labels: { awaiting: string } }>().not.toExtend<Pick<Props, 'labels'>>();
  });
});

describe('useGateConnection', () => {
  it('narrows nothing away: every connection state, and numbers or nothing for the times', () => {
    const connection = useGateConnection();
    expectTypeOf(connection.state).toEqualTypeOf<ConnectionState>();
    expectTypeOf(connection.state).toEqualTypeOf<
      'connecting' | 'live' | 'reconnecting' | 'offline' | 'closed'
    >();
    expectTypeOf(connection.lastEventAt).toEqualTypeOf<number | undefined>();
    expectTypeOf(connection.retryAt).toEqualTypeOf<number | undefined>();
  });
});
