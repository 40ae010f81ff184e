import { trace } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { defineTool } from '@toolgate/core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createServerGate } from '../../src/index.ts';
import { describeLedgers } from '../support/ledgers.ts';

const exporter = new InMemorySpanExporter();
beforeAll(() => {
  trace.setGlobalTracerProvider(
    new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
  );
});
afterAll(() => {
  trace.disable();
});

const lookUp = defineTool({
  name: 'look_up',
  inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  execute: (input) => {
    if (input.city === 'Atlantis') throw new Error('no such city');
    return { city: input.city, temperature_c: 21 };
  },
});

describeLedgers(
  'OpenTelemetry',
  (target) => {
    it('makes one execute_tool span per execution, named and tagged by the GenAI conventions, with error.type on failure', async () => {
      exporter.reset();
      const gate = createServerGate({
        tools: [lookUp],
        ledger: await (await target.fresh()).open(),
        recover: false,
      });
      await gate.run(
        { id: 'ok_1', name: 'look_up', arguments: '{"city":"Lisbon"}' },
        { session: 's', principal: 'p' },
      );
      await gate.run(
        { id: 'bad_1', name: 'look_up', arguments: '{"city":"Atlantis"}' },
        { session: 's', principal: 'p' },
      );
      await gate.run(
        { id: 'rejected_1', name: 'look_up', arguments: '{}' },
        { session: 's', principal: 'p' },
      );
      const spans = exporter
        .getFinishedSpans()
        .map((span) => ({ name: span.name, attributes: span.attributes, status: span.status.code }));
      expect(spans).toEqual([
        {
          name: 'execute_tool look_up',
          attributes: {
            'gen_ai.operation.name': 'execute_tool',
            'gen_ai.tool.name': 'look_up',
            'gen_ai.tool.call.id': 'ok_1',
          },
          status: 0,
        },
        {
          name: 'execute_tool look_up',
          attributes: {
            'gen_ai.operation.name': 'execute_tool',
            'gen_ai.tool.name': 'look_up',
            'gen_ai.tool.call.id': 'bad_1',
            'error.type': 'tool_error',
          },
          status: 2,
        },
      ]);
      await gate.close();
    });
  },
  { dialects: ['sqlite'] },
);
