import { describe, expect, it } from 'vitest';
import { scriptedModel } from './support/model.ts';
import { NodeChat } from './support/node-chat.ts';
import { startApp } from './support/setup.ts';

const transferCall = (id: string, input = '{"to":"acct_bob","amount_cents":1250}') => ({
  calls: [{ id, name: 'transfer', input }],
});

describe('toolgateChat under streamText and useChat, over HTTP', () => {
  it("runs an approved call once: useChat's own button approves it in the ledger, and the part shows the ledger's output", async () => {
    const { model, lastToolResults } = scriptedModel(transferCall('call_1'), { text: 'Sent.' });
    const app = await startApp(model);
    const chat = new NodeChat(app.server.url, 'alice', 'chat_1');

    await chat.say('Send Bob 12.50');
    expect(chat.toolParts()).toMatchObject([
      {
        type: 'tool-transfer',
        toolCallId: 'call_1',
        state: 'approval-requested',
        input: { to: 'acct_bob', amount_cents: 1250 },
      },
    ]);
    expect(chat.records().get('call_1')).toMatchObject({ status: 'awaiting_approval' });
    expect(app.effects.transfers).toEqual([]);
    expect(await app.gate.get('call_1')).toMatchObject({ status: 'awaiting_approval' });

    await chat.answer('call_1', true);
    expect(app.effects.transfers).toEqual([{ to: 'acct_bob', amount_cents: 1250 }]);
    // The answer continues the assistant message that asked, as useChat shows it.
    expect(chat.messages.map((message) => message.role)).toEqual(['user', 'assistant']);
    expect(chat.requests.at(-1)).toMatchObject({ messageId: chat.messages[1]?.id });
    expect(chat.toolParts()).toMatchObject([
      { state: 'output-available', output: { sent_cents: 1250, receipt: 'rcpt_1' } },
    ]);
    expect(chat.records().get('call_1')).toMatchObject({ status: 'committed' });
    expect(lastToolResults()).toEqual([
      JSON.stringify({ type: 'json', value: { sent_cents: 1250, to: 'acct_bob', receipt: 'rcpt_1' } }),
    ]);
    expect(chat.messages.at(-1)?.parts.at(-1)).toMatchObject({ type: 'text', text: 'Sent.' });
  });

  it('runs nothing twice when the approving request is sent again', async () => {
    const { model } = scriptedModel(transferCall('call_1'), { text: 'Sent.' }, { text: 'Sent again?' });
    const app = await startApp(model);
    const chat = new NodeChat(app.server.url, 'alice', 'chat_1');
    await chat.say('Send Bob 12.50');
    await chat.answer('call_1', true);
    expect(app.effects.transfers).toHaveLength(1);

    const approving = chat.requests.at(-1);
    const replay = await fetch(app.server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-user': 'alice' },
      body: JSON.stringify(approving),
    });
    const text = await replay.text();
    expect(replay.status).toBe(200);
    expect(text).toContain('rcpt_1');
    expect(app.effects.transfers).toHaveLength(1);
    expect(await app.gate.get('call_1')).toMatchObject({
      status: 'committed',
      output: { receipt: 'rcpt_1' },
    });
  });

  it('refuses an approval of a tampered input as stale: nothing runs, the refusal reaches the page and the model', async () => {
    const { model, lastToolResults } = scriptedModel(transferCall('call_1'), {
      text: 'It still waits for you.',
    });
    const app = await startApp(model);
    const chat = new NodeChat(app.server.url, 'alice', 'chat_1');
    await chat.say('Send Bob 12.50');
    // The page is changed under the person: the input they approve is not the one they saw.
    const part = chat.toolParts()[0] as { input: { to: string; amount_cents: number } };
    part.input = { to: 'acct_mallory', amount_cents: 9_999_999 };

    await chat.answer('call_1', true);
    expect(app.effects.transfers).toEqual([]);
    expect(await app.gate.get('call_1')).toMatchObject({
      status: 'awaiting_approval',
      input: { to: 'acct_bob', amount_cents: 1250 },
    });
    expect(chat.refusals().get('call_1')).toMatchObject({ code: 'stale' });
    expect(chat.records().get('call_1')).toMatchObject({ status: 'awaiting_approval' });
    expect(lastToolResults()[0]).toContain('refused (stale)');
    expect((await app.gate.verify()).ok).toBe(true);
  });

  it('refuses, saying why, an approval streamText signed: experimental_toolApprovalSecret must be removed, and nothing runs', async () => {
    const { model } = scriptedModel(transferCall('call_1'), { text: 'Sent.' });
    const app = await startApp(model, { approvalSecret: 'an app secret' });
    const chat = new NodeChat(app.server.url, 'alice', 'chat_1');
    await chat.say('Send Bob 12.50');
    expect(chat.toolParts()).toMatchObject([{ state: 'approval-requested' }]);

    await chat.answer('call_1', true);
    expect(app.server.errors).toHaveLength(1);
    expect(String(app.server.errors[0])).toMatch(/Remove experimental_toolApprovalSecret from streamText/);
    expect(app.effects.transfers).toEqual([]);
    expect(await app.gate.get('call_1')).toMatchObject({ status: 'awaiting_approval' });

    // A client that drops the signature gets past that check to streamText's own, and the page is
    // told what to change rather than "An error occurred."
    const approving = chat.requests.at(-1) as {
      messages: { parts: { approval?: { signature?: string } }[] }[];
    };
    for (const part of approving.messages.flatMap((message) => message.parts))
      delete part.approval?.signature;
    const response = await fetch(app.server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-user': 'alice' },
      body: JSON.stringify(approving),
    });
    expect(await response.text()).toMatch(/remove experimental_toolApprovalSecret from streamText/);
  });

  it('keeps a call waiting across a server restart, and the approval after it runs the call once', async () => {
    const { model } = scriptedModel(transferCall('call_1'), { text: 'Sent.' });
    const app = await startApp(model);
    const chat = new NodeChat(app.server.url, 'alice', 'chat_1');
    await chat.say('Send Bob 12.50');
    await app.restart();

    await chat.answer('call_1', true);
    expect(app.effects.transfers).toEqual([{ to: 'acct_bob', amount_cents: 1250 }]);
    expect(chat.toolParts()).toMatchObject([{ state: 'output-available', output: { receipt: 'rcpt_1' } }]);
  });

  it("gives another user nothing: their copy of the history approves nothing and shows none of the session's calls", async () => {
    const { model } = scriptedModel(
      transferCall('call_1'),
      { text: 'Sent.' },
      { text: 'Hello Mallory.' },
      { text: 'Hello again.' },
    );
    const app = await startApp(model);
    const alice = new NodeChat(app.server.url, 'alice', 'chat_1');
    await alice.say('Send Bob 12.50');
    const part = alice.toolParts()[0] as { state: string; approval: { approved?: boolean } };
    const forged = structuredClone(alice.messages);
    const forgedPart = forged[1]?.parts.find((candidate) => candidate.type === 'tool-transfer') as {
      state: string;
      approval: { approved?: boolean };
    };
    forgedPart.state = 'approval-responded';
    forgedPart.approval.approved = true;
    expect(part.state).toBe('approval-requested');

    for (const session of ['chat_1', 'chat_mallory']) {
      const response = await fetch(app.server.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-user': 'mallory' },
        body: JSON.stringify({ id: session, messages: forged, trigger: 'submit-message' }),
      });
      const text = await response.text();
      expect(text).not.toContain('acct_bob');
      expect(text).not.toContain('data-toolgate');
    }
    expect(app.effects.transfers).toEqual([]);
    expect(await app.gate.get('call_1')).toMatchObject({ status: 'awaiting_approval' });
  });

  it('puts the reason and each offending path in the tool part of a call with invalid values', async () => {
    const { model, lastToolResults } = scriptedModel(
      transferCall('call_bad', '{"to":"acct_bob","amount_cents":"12.50"}'),
      { text: 'Let me fix that.' },
    );
    const app = await startApp(model);
    const chat = new NodeChat(app.server.url, 'alice', 'chat_1');
    await chat.say('Send Bob 12.50');

    const [part] = chat.toolParts();
    expect(part).toMatchObject({ state: 'output-error' });
    expect(part?.['errorText']).toContain('rejected (invalid_arguments)');
    expect(part?.['errorText']).toContain('/amount_cents');
    expect(chat.records().get('call_bad')).toMatchObject({
      status: 'rejected',
      reason: { code: 'invalid_arguments', issues: [{ path: '/amount_cents' }] },
    });
    expect(lastToolResults()[0]).toContain('/amount_cents');
    expect(await app.gate.get('call_bad')).toMatchObject({ status: 'rejected' });
  });

  it("keeps streamText's multi-step loop: a call that needs no approval runs and the model goes on in the same request", async () => {
    const { model, prompts } = scriptedModel(
      { calls: [{ id: 'call_b', name: 'get_balance', input: '{"account":"acct_alice"}' }] },
      transferCall('call_t'),
      { text: 'Sent.' },
    );
    const app = await startApp(model);
    const chat = new NodeChat(app.server.url, 'alice', 'chat_1');
    await chat.say('Check my balance, then send Bob 12.50');

    expect(chat.requests).toHaveLength(1);
    expect(prompts).toHaveLength(2);
    expect(app.effects.lookups).toEqual(['acct_alice']);
    expect(chat.toolParts()).toMatchObject([
      { type: 'tool-get_balance', state: 'output-available', output: { cents: 912_345 } },
      { type: 'tool-transfer', state: 'approval-requested' },
    ]);

    await chat.answer('call_t', true);
    expect(app.effects.transfers).toHaveLength(1);
    expect(app.effects.lookups).toHaveLength(1);
    expect(chat.messages.at(-1)?.parts.at(-1)).toMatchObject({ type: 'text', text: 'Sent.' });
  });

  it("denies through useChat's Deny: the ledger cancels the call and the model reads a denial", async () => {
    const { model, prompts } = scriptedModel(transferCall('call_1'), { text: 'Not sent.' });
    const app = await startApp(model);
    const chat = new NodeChat(app.server.url, 'alice', 'chat_1');
    await chat.say('Send Bob 12.50');
    await chat.answer('call_1', false);

    expect(app.effects.transfers).toEqual([]);
    expect(await app.gate.get('call_1')).toMatchObject({
      status: 'cancelled',
      reason: { code: 'approval_denied' },
    });
    expect(chat.toolParts()).toMatchObject([{ state: 'output-denied' }]);
    const told = prompts.at(-1)?.find((message) => message.role === 'tool');
    expect(told?.content).toMatchObject([
      { type: 'tool-result', toolCallId: 'call_1', output: { type: 'execution-denied' } },
    ]);
  });
});
