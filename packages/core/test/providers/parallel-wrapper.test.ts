import { describe, expect, it } from 'vitest';
import { createToolGate } from '../../src/index.ts';
import { readParallelWrapper } from '../../src/proposal/parallel-wrapper.ts';
import { DEFAULT_LIMITS } from '../../src/kit.ts';
import { createWorkspace, getTime, getWeather, WRAPPER } from '@toolgate/test-utils';

describe('multi_tool_use.parallel', () => {
  it('is rejected with a reason naming the wrapped calls when it arrives whole, in any provider shape', () => {
    const gate = createToolGate({ tools: [getWeather(), getTime()], store: createWorkspace() });
    const chat = gate.propose({
      id: 'call_1',
      type: 'function',
      function: { name: 'multi_tool_use.parallel', arguments: WRAPPER },
    });
    const responses = gate.propose({
      type: 'function_call',
      call_id: 'call_2',
      name: 'multi_tool_use.parallel',
      arguments: WRAPPER,
    });
    for (const call of [chat, responses]) {
      expect(call).toMatchObject({ status: 'rejected', reason: { code: 'invalid_shape' } });
      expect(call.reason?.message).toContain('the model wrapped 2 calls (get_weather, get_time) in it');
    }
  });

  it('says what is wrong with a wrapper it cannot read', () => {
    const gate = createToolGate({ tools: [getWeather()], store: createWorkspace() });
    const call = gate.propose({
      id: 'call_1',
      name: 'multi_tool_use.parallel',
      arguments: '{"tool_uses":[{"parameters":{}}]}',
    });
    expect(call.reason?.message).toBe(
      '"multi_tool_use.parallel" is not a tool: the model wrapped its calls in it, and tool_uses[0] has no "recipient_name"; send each as its own tool call',
    );
    expect(readParallelWrapper('{"tool_uses":[]}', DEFAULT_LIMITS)).toEqual({
      ok: false,
      message: 'it has no "tool_uses" list',
    });
  });
});
