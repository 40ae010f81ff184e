import { openaiChatReply } from '@toolgate/core/openai';
import { describe, expect, it } from 'vitest';
import { createPageResults, settledFrom } from '../src/server/page-calls.ts';

describe('settledFrom: what the page reports for its own tool, as the model will read it', () => {
  it('keeps a committed output', () => {
    const call = settledFrom('p1.call_1', 'show_product', {
      status: 'committed',
      input: { sku: 'mug' },
      output: { sku: 'mug', shown: true },
    });
    expect(call).toMatchObject({
      id: 'p1.call_1',
      name: 'show_product',
      status: 'committed',
      output: { sku: 'mug', shown: true },
    });
  });

  it('keeps a refusal the page gate could give, with its issues', () => {
    const call = settledFrom('c', 'show_product', {
      status: 'rejected',
      reason: {
        code: 'invalid_arguments',
        message: 'the arguments do not match the schema',
        issues: [{ path: '/sku', message: 'must be one of the catalog' }],
      },
    });
    expect(call).toMatchObject({
      status: 'rejected',
      reason: {
        code: 'invalid_arguments',
        issues: [{ path: '/sku', message: 'must be one of the catalog' }],
      },
    });
    expect(openaiChatReply([call])[0]?.content).toContain('/sku: must be one of the catalog');
  });

  it.each([
    ['an unknown status', { status: 'approved' }],
    ['a code its status cannot have', { status: 'rejected', reason: { code: 'tool_error', message: 'x' } }],
    ['a code no gate gives', { status: 'failed', reason: { code: 'totally_fine', message: 'x' } }],
    ['no reason at all', { status: 'cancelled' }],
    ['nothing', {}],
  ])('fails closed on %s: failed / tool_error, and the reply says so', (_label, report) => {
    const call = settledFrom('c', 'show_product', report);
    expect(call).toMatchObject({
      status: 'failed',
      reason: { code: 'tool_error', message: 'the page answered with a result that could not be read' },
    });
    expect(openaiChatReply([call])[0]?.content).toContain('failed (tool_error)');
  });
});

describe("settledFrom: the page's moves, for the audit timeline of a page loaded later", () => {
  const moves = [
    { status: 'pending', at: 10 },
    { status: 'validated', at: 11 },
    { status: 'executing', at: 12 },
    { status: 'committed', at: 15 },
  ];

  it('keeps the moves the page reported, with their times', () => {
    const call = settledFrom('c', 'show_product', {
      status: 'committed',
      output: { shown: true },
      history: moves,
    });
    expect(call.history).toEqual(moves);
    expect(call).toMatchObject({ createdAt: 10, updatedAt: 15 });
  });

  it("puts the record's own checked reason on the last move, and no other", () => {
    const reason = { code: 'invalid_arguments', message: 'the arguments do not match the schema' };
    const call = settledFrom('c', 'show_product', {
      status: 'rejected',
      reason,
      history: [
        { status: 'pending', at: 1, reason: { code: 'made_up', message: 'x' } },
        { status: 'rejected', at: 2, reason: { code: 'other', message: 'y' } },
      ],
    });
    expect(call.history).toEqual([
      { status: 'pending', at: 1 },
      { status: 'rejected', at: 2, reason },
    ]);
  });

  it.each([
    ['not from pending', moves.slice(1)],
    ['ending elsewhere than the record', moves.slice(0, 3)],
    ['an end in the middle', [moves[0], { status: 'failed', at: 11 }, moves[3]]],
    ['out of time order', [moves[0], { status: 'validated', at: 9 }, moves[3]]],
    ['an unknown status', [moves[0], { status: 'approved', at: 11 }, moves[3]]],
    ['a time that is not a number', [moves[0], { status: 'validated', at: '11' }, moves[3]]],
    ['not a list', { pending: 1 }],
  ])('keeps only its own two moves when the reported ones are %s', (_label, history) => {
    const call = settledFrom('c', 'show_product', { status: 'committed', output: { shown: true }, history });
    expect(call.history.map((step) => step.status)).toEqual(['pending', 'committed']);
  });
});

describe('createPageResults', () => {
  it('answers a waiting call once; a second answer, or one for a call nobody waits for, is refused', async () => {
    const results = createPageResults();
    const waiting = results.wait({ id: 'c1', name: 'show_product' });
    expect(results.answer('c2', { status: 'committed', output: {} })).toBe(false);
    expect(results.answer('c1', { status: 'committed', output: { shown: true } })).toBe(true);
    expect(results.answer('c1', { status: 'committed', output: { shown: false } })).toBe(false);
    await expect(waiting).resolves.toMatchObject({ status: 'committed', output: { shown: true } });
  });
});
