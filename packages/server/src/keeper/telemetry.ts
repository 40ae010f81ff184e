import { SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import type { ToolCallRecord } from '@toolgate/core';

/**
 * One execution's span, ended with how the call settled.
 *
 * @example
 * const span = startToolSpan(call);
 * span.end(settled);
 */
export interface ToolSpan {
  readonly end: (settled: ToolCallRecord | undefined) => void;
}

const tracer = () => trace.getTracer('@toolgate/server');

/**
 * Starts the span of one tool execution, named and tagged as the OpenTelemetry GenAI semantic
 * conventions say (`execute_tool {name}`, `gen_ai.tool.name`, `gen_ai.tool.call.id`); a no-op
 * unless the app installs an OpenTelemetry SDK.
 *
 * @example
 * const span = startToolSpan({ id: 'call_1', name: 'charge' });
 */
export function startToolSpan(call: Pick<ToolCallRecord, 'id' | 'name'>): ToolSpan {
  const span: Span = tracer().startSpan(`execute_tool ${call.name}`, {
    kind: SpanKind.INTERNAL,
    attributes: {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': call.name,
      'gen_ai.tool.call.id': call.id,
    },
  });
  let ended = false;
  return {
    end(settled) {
      if (ended) return;
      ended = true;
      if (settled === undefined) {
        // This process stopped running the call (its lease ended); another may finish it.
        span.setAttribute('error.type', 'lease_lost');
        span.setStatus({
          code: SpanStatusCode.ERROR,
          message: 'the claim on this call ended before the tool finished',
        });
      } else if (settled.status !== 'committed') {
        const code =
          settled.doubt !== undefined ? 'outcome_unknown' : (settled.reason?.code ?? settled.status);
        span.setAttribute('error.type', code);
        span.setStatus({
          code: SpanStatusCode.ERROR,
          message: settled.doubt?.message ?? settled.reason?.message ?? settled.status,
        });
      }
      span.end();
    },
  };
}
