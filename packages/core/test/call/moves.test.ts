/** The moves the pipeline's steps ask of a keeper. */
import { describe, expect, it, vi } from 'vitest';
import { createMoves } from '../../src/call/steps/moves.ts';
import type { CallEvent } from '../../src/call/machine.ts';
import type { CallKeeper } from '../../src/call/pipeline-host.ts';
import type { ToolCallRecord } from '../../src/record/record.ts';

const note = { actor: 'user_42' };

function keeperOf(answer: (event: CallEvent) => unknown) {
  const events: CallEvent[] = [];
  const keeper: CallKeeper = {
    move: (_id, event) => {
      events.push(event);
      return answer(event) as ToolCallRecord | undefined;
    },
    open: () => undefined,
  };
  return { keeper, events };
}

describe('moves', () => {
  it('say why in the event: a rejection, a failure (issues only when there are some), a cancellation', () => {
    const { keeper, events } = keeperOf(() => undefined);
    const moves = createMoves(keeper, vi.fn());
    moves.reject('a', { code: 'unknown_tool', message: 'no such tool' }, note);
    moves.fail('a', 'tool_error', 'it threw', note);
    moves.fail('a', 'output_invalid', 'bad output', note, [{ path: '/x', message: 'must be a number' }]);
    moves.cancel('a', 'timeout', 'too slow', note);
    expect(events).toEqual([
      { type: 'reject', reason: { code: 'unknown_tool', message: 'no such tool' } },
      { type: 'fail', reason: { code: 'tool_error', message: 'it threw' } },
      {
        type: 'fail',
        reason: {
          code: 'output_invalid',
          message: 'bad output',
          issues: [{ path: '/x', message: 'must be a number' }],
        },
      },
      { type: 'cancel', reason: { code: 'timeout', message: 'too slow' } },
    ]);
  });

  it('go on with the record the keeper answers, once it has answered', async () => {
    const next = { id: 'a', status: 'executing' } as ToolCallRecord;
    const { keeper } = keeperOf(() => Promise.resolve(next));
    const seen: unknown[] = [];
    createMoves(keeper, vi.fn()).move('a', { type: 'execute' }, note, (record) => seen.push(record));
    expect(seen).toEqual([]);
    await Promise.resolve();
    await Promise.resolve();
    expect(seen).toEqual([next]);
  });

  it('report a keeper that rejects, and go no further', async () => {
    const { keeper } = keeperOf(() => Promise.reject(new Error('ledger down')));
    const onError = vi.fn();
    const then = vi.fn();
    createMoves(keeper, onError).move('a', { type: 'execute' }, note, then);
    await vi.waitFor(() => expect(onError).toHaveBeenCalledWith(new Error('ledger down')));
    expect(then).not.toHaveBeenCalled();
  });
});
