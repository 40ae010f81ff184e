/** `reader.stopped()`: the turn's records once each call has ended or waits for a person, never waiting for that person. */
import { describe, expect, it } from 'vitest';
import { createToolGate, defineTool } from '../../src/index.ts';
import { readAnthropicStream, type AnthropicStreamEvent } from '../../src/anthropic.ts';
import { readOpenAIChatStream, type OpenAIChatChunk } from '../../src/openai.ts';

const schema = {
  type: 'object',
  properties: { to: { type: 'string' } },
  required: ['to'],
  additionalProperties: false,
} as const;

/** A tool whose run ends when the test says so. */
function heldTool(
  name: string,
  options: { needsApproval?: boolean; authorize?: () => Promise<boolean> } = {},
) {
  const runs: { to: string; finish: (output: string) => void }[] = [];
  const tool = defineTool({
    name,
    inputSchema: schema,
    ...(options.needsApproval === undefined ? {} : { needsApproval: options.needsApproval }),
    ...(options.authorize === undefined ? {} : { authorize: options.authorize }),
    execute: (input) =>
      new Promise<string>((resolve) => {
        runs.push({ to: input.to, finish: resolve });
      }),
  });
  return { tool, runs };
}

const call = (index: number, id: string, name: string, args: string): OpenAIChatChunk => ({
  id: 'chatcmpl-T',
  choices: [
    {
      index: 0,
      delta: { tool_calls: [{ index, id, function: { name, arguments: args } }] },
      finish_reason: null,
    },
  ],
});
const finish: OpenAIChatChunk = {
  id: 'chatcmpl-T',
  choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }],
};

/** Which of two promises is done after every pending job has run. */
async function isDone(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(
    () => (done = true),
    () => (done = true),
  );
  for (let i = 0; i < 20; i++) await Promise.resolve();
  return done;
}

describe('reader.stopped() on a browser gate', () => {
  it('resolves with a call that waits for a person, without approving it, and with a refused one, in the provider order', async () => {
    const mail = heldTool('send_mail', { needsApproval: true });
    const gate = createToolGate({ tools: [mail.tool] });
    const reader = readOpenAIChatStream(gate);
    await reader.read([
      call(0, 'call_mail', 'send_mail', '{"to":"ana"}'),
      call(1, 'call_bad', 'nope', '{}'),
      call(2, 'call_args', 'send_mail', '{"to":1}'),
      finish,
    ]);
    const records = await reader.stopped();
    expect(records.map((record) => [record.id, record.status, record.reason?.code])).toEqual([
      ['call_mail', 'awaiting_approval', undefined],
      ['call_bad', 'rejected', 'unknown_tool'],
      ['call_args', 'rejected', 'invalid_arguments'],
    ]);
    // Nobody decided: the call still waits, and nothing ran.
    expect(gate.get('call_mail')?.status).toBe('awaiting_approval');
    expect(mail.runs).toEqual([]);
    expect(await isDone(reader.settled())).toBe(false);
  });

  it('waits for a running call to end, and not before', async () => {
    const lookup = heldTool('lookup');
    const gate = createToolGate({ tools: [lookup.tool] });
    const reader = readOpenAIChatStream(gate);
    await reader.read([call(0, 'call_run', 'lookup', '{"to":"bo"}'), finish]);
    const stopped = reader.stopped();
    expect(gate.get('call_run')?.status).toBe('executing');
    expect(await isDone(stopped)).toBe(false);
    lookup.runs[0]?.finish('found');
    const [record] = await stopped;
    expect(record).toMatchObject({ id: 'call_run', status: 'committed', output: 'found' });
  });

  it('waits for the stream to end: a call opened but not complete has not stopped', async () => {
    const mail = heldTool('send_mail', { needsApproval: true });
    const gate = createToolGate({ tools: [mail.tool] });
    const reader = readOpenAIChatStream(gate);
    reader.push(call(0, 'call_mail', 'send_mail', '{"to":"a'));
    const stopped = reader.stopped();
    expect(await isDone(stopped)).toBe(false);
    reader.end();
    // The provider never finished its arguments: cut off, and the turn has stopped.
    const [record] = await stopped;
    expect(record).toMatchObject({ id: 'call_mail', status: 'rejected' });
  });

  it('resolves once an authorization that takes its time leads to a person', async () => {
    let allow!: (yes: boolean) => void;
    const mail = heldTool('send_mail', {
      needsApproval: true,
      authorize: () => new Promise<boolean>((resolve) => (allow = resolve)),
    });
    const gate = createToolGate({ tools: [mail.tool] });
    const reader = readOpenAIChatStream(gate);
    await reader.read([call(0, 'call_mail', 'send_mail', '{"to":"ana"}'), finish]);
    const stopped = reader.stopped();
    expect(gate.get('call_mail')?.status).toBe('validated');
    expect(await isDone(stopped)).toBe(false);
    allow(true);
    const [record] = await stopped;
    expect(record?.status).toBe('awaiting_approval');
  });

  it('answers a call proposed again under a known id, and a turn with no calls, at once', async () => {
    const mail = heldTool('send_mail', { needsApproval: true });
    const gate = createToolGate({ tools: [mail.tool] });
    gate.propose({ id: 'toolu_1', name: 'send_mail', arguments: { to: 'ana' } });
    expect(gate.deny('toolu_1')).toBe(true);
    const events: AnthropicStreamEvent[] = [
      {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'tool_use', id: 'toolu_1', name: 'send_mail', input: {} },
      },
      {
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'input_json_delta', partial_json: '{"to":"ana"}' },
      },
      { type: 'content_block_stop', index: 0 },
      { type: 'message_delta', delta: { stop_reason: 'tool_use' } },
      { type: 'message_stop' },
    ];
    const reader = readAnthropicStream(gate);
    await reader.read(events);
    expect((await reader.stopped()).map((record) => [record.id, record.status, record.reason?.code])).toEqual(
      [['toolu_1', 'cancelled', 'approval_denied']],
    );
    const empty = readOpenAIChatStream(gate);
    await empty.read([finish]);
    expect(await empty.stopped()).toEqual([]);
  });

  it('gate.stopped(id) rejects for an id the gate never saw, as settled does', async () => {
    const gate = createToolGate({ tools: [heldTool('lookup').tool] });
    await expect(gate.stopped('call_nowhere')).rejects.toThrow(/no call with id "call_nowhere"/);
  });
});
