import { defineTool, inputHash } from '@toolgate/core';
import { readOpenAIChatStream } from '@toolgate/core/openai';
import { expect, it } from 'vitest';
import { createFakeClock } from '@toolgate/test-utils';
import { createServerGate } from '../../src/index.ts';
import { describeLedgers } from '../support/ledgers.ts';

const ran: string[] = [];

/** Version `version` of the same tool: what it accepts, whether it asks a person, and what it does. */
const transfer = (version: number, options: { readonly max: number; readonly needsApproval: boolean }) =>
  defineTool({
    name: 'transfer',
    description: `transfer, version ${version}`,
    inputSchema: {
      type: 'object',
      properties: { cents: { type: 'integer', minimum: 1, maximum: options.max } },
      required: ['cents'],
      additionalProperties: false,
    },
    needsApproval: options.needsApproval,
    execute: (input) => {
      ran.push(`v${version}:${input.cents}`);
      return { version, cents: input.cents };
    },
  });
const lookup = defineTool({
  name: 'lookup',
  inputSchema: { type: 'object' },
  execute: () => ({ found: true }),
});
const search = defineTool({ name: 'search', inputSchema: { type: 'object' }, execute: () => ({ hits: 3 }) });

const session = { session: 'chat_1', principal: 'alice' };

describeLedgers(
  'replaceTools',
  (target) => {
    it('later proposals see the new set; a call proposed before keeps the definition it was proposed with', async () => {
      ran.length = 0;
      const gate = createServerGate({
        tools: [transfer(1, { max: 1000, needsApproval: true }), lookup],
        ledger: await (await target.fresh()).open(),
        recover: false,
        clock: createFakeClock(Date.now()),
      });
      const waiting = await gate.propose({ id: 'old', name: 'transfer', arguments: { cents: 900 } }, session);
      expect(waiting.status).toBe('awaiting_approval');

      gate.replaceTools([transfer(2, { max: 100, needsApproval: false }), search]);
      expect(gate.tools.map((tool) => tool.description ?? tool.name)).toEqual([
        'transfer, version 2',
        'search',
      ]);

      // The old call runs as version 1 approved it: 900 cents, over version 2's maximum.
      expect(
        await gate.approve('old', { principal: 'alice', inputHash: await inputHash(waiting.input) }),
      ).toEqual({ ok: true });
      expect(await gate.settled('old')).toMatchObject({
        status: 'committed',
        output: { version: 1, cents: 900 },
      });

      expect(
        await gate.run({ id: 'new', name: 'transfer', arguments: { cents: 50 } }, session),
      ).toMatchObject({ status: 'committed', output: { version: 2 } });
      expect(
        await gate.run({ id: 'big', name: 'transfer', arguments: { cents: 900 } }, session),
      ).toMatchObject({ status: 'rejected', reason: { code: 'invalid_arguments' } });
      expect(await gate.run({ id: 'gone', name: 'lookup', arguments: {} }, session)).toMatchObject({
        status: 'rejected',
        reason: { code: 'unknown_tool', message: expect.stringContaining('search') },
      });
      expect(await gate.run({ id: 'added', name: 'search', arguments: {} }, session)).toMatchObject({
        status: 'committed',
        output: { hits: 3 },
      });
      expect(ran).toEqual(['v1:900', 'v2:50']);
      await gate.close();
    });

    it('a turn view made before the change proposes its later calls with the new set', async () => {
      const gate = createServerGate({
        tools: [lookup],
        ledger: await (await target.fresh()).open(),
        recover: false,
      });
      const view = gate.turn(session);
      gate.replaceTools([search]);
      expect(view.tools.map((tool) => tool.name)).toEqual(['search']);
      const reader = readOpenAIChatStream(view);
      reader.push({
        id: 'chatcmpl-1',
        choices: [
          {
            index: 0,
            delta: {
              tool_calls: [
                { index: 0, id: 'c1', type: 'function', function: { name: 'search', arguments: '{}' } },
              ],
            },
            finish_reason: 'tool_calls',
          },
        ],
      } as never);
      reader.end();
      const turn = await reader.settled();
      expect(turn.answers[0]?.calls[0]).toMatchObject({ status: 'committed', output: { hits: 3 } });
      await gate.close();
    });

    it('refuses a set with two tools of one name, or that is not a list, and keeps the set it had', async () => {
      const gate = createServerGate({
        tools: [lookup],
        ledger: await (await target.fresh()).open(),
        recover: false,
      });
      expect(() => gate.replaceTools([search, search])).toThrow(/two tools are named "search"/);
      expect(() => gate.replaceTools(search as never)).toThrow(TypeError);
      expect(gate.tools).toEqual([lookup]);
      expect(await gate.run({ id: 'l1', name: 'lookup', arguments: {} }, session)).toMatchObject({
        status: 'committed',
      });
      await gate.close();
    });
  },
  { shared: true },
);
