/** Handing a turn's streamed calls to the gate, and ending the turn once. */
import { describe, expect, it, vi } from 'vitest';
import { createToolGate, defineTool } from '../../src/index.ts';
import { cancelOpen, close, truncate } from '../../src/stream/hand-off.ts';
import { createPreviews } from '../../src/stream/previews.ts';
import { createSlot } from '../../src/stream/slot.ts';
import { createStreamTurn, finish } from '../../src/stream/stream-turn.ts';
import { createFakeClock } from '@toolgate/test-utils';

const search = defineTool({
  name: 'search',
  inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
  repair: ['parallel_wrapper'],
  execute: () => 'found',
});

function setup() {
  const gate = createToolGate({ tools: [search] });
  const turn = createStreamTurn(gate, 'openai-chat', createPreviews(gate, createFakeClock(), 50), 'resp_1');
  return { gate, turn };
}

describe('handing streamed calls to the gate', () => {
  it('proposes a call that never got a name, so the gate rejects it and its id is answered', () => {
    const { gate, turn } = setup();
    const slot = createSlot('0', 0, 0, 64);
    slot.providerId = 'call_9';
    close(turn, slot, '{}');
    expect(gate.get('call_9')).toMatchObject({
      status: 'rejected',
      turn: 'resp_1',
      reason: { code: 'invalid_shape' },
    });
    expect(slot.phase).toBe('closed');
  });

  it('unwraps a parallel wrapper whose tools opted in, into calls of the turn with their repair', () => {
    const { gate, turn } = setup();
    const slot = createSlot('0', 0, 2, 64);
    slot.name = 'multi_tool_use.parallel';
    close(turn, slot, {
      tool_uses: [
        { recipient_name: 'functions.search', parameters: { q: 'a' } },
        { recipient_name: 'functions.search', parameters: { q: 'b' } },
      ],
    });
    expect(slot.callIds).toEqual(['multi_tool_use.parallel@2#1', 'multi_tool_use.parallel@2#2']);
    expect(gate.get('multi_tool_use.parallel@2#2')).toMatchObject({
      status: 'committed',
      input: { q: 'b' },
      repairs: [{ kind: 'parallel_wrapper' }],
    });
  });

  it('opens a call before truncating or cancelling it, and does nothing to a call already closed', () => {
    const { gate, turn } = setup();
    const cut = createSlot('0', 0, 0, 64);
    cut.providerId = 'c1';
    cut.name = 'search';
    truncate(turn, cut, 'cut off');
    expect(gate.get('c1')).toMatchObject({
      status: 'rejected',
      reason: { code: 'truncated', message: 'cut off' },
    });
    const cancel = vi.spyOn(gate, 'cancel');
    cancelOpen(turn, cut, 'stopped');
    expect(cancel).not.toHaveBeenCalled();
    const stopped = createSlot('1', 1, 1, 64);
    stopped.providerId = 'c2';
    stopped.name = 'search';
    cancelOpen(turn, stopped, 'stopped');
    expect(gate.get('c2')).toMatchObject({
      status: 'cancelled',
      reason: { code: 'user_cancelled', message: 'stopped' },
    });
  });

  it('ends a turn once', async () => {
    const { turn } = setup();
    let settled = 0;
    expect(finish(turn, () => settled++)).toBe(true);
    expect(finish(turn, () => settled++)).toBe(false);
    expect(settled).toBe(1);
    await expect(turn.over).resolves.toBeUndefined();
  });
});
