import { outcomeText } from '@toolgate/core/kit';
import { type SettledCall, type ToolCallRecord } from '@toolgate/core';

/**
 * The `_meta` key a client sets on `tools/call` to name the call (and finds on every answer): the
 * same id asked again answers that call, which runs once.
 *
 * @example
 * await client.callTool({ name: 'write_file', arguments, _meta: { [CALL_ID]: 'turn-7-call-2' } });
 */
export const CALL_ID = 'toolgate/callId';

/** A `CallToolResult` as the gateway answers it. */
export type Answer = Record<string, unknown> & {
  content: unknown[];
  isError?: boolean;
  _meta?: Record<string, unknown>;
};

/**
 * What the client gets for a settled call: the upstream's result exactly as the upstream sent it
 * (every content block, `structuredContent`, `isError`, its `_meta`), with the call id added to
 * `_meta`, for a committed call and for one that failed on the upstream's own `isError` result
 * (`upstreamError`, while the gateway keeps it); any other ending as an `isError` text saying
 * what happened and why.
 */
export function answerSettled(call: SettledCall, upstreamError?: Record<string, unknown>): Answer {
  const meta = { [CALL_ID]: call.id, 'toolgate/status': call.status };
  if (call.status === 'committed') return withMeta(call.output as Answer, meta);
  if (call.status === 'failed' && call.reason.code === 'tool_error' && upstreamError !== undefined)
    return withMeta(upstreamError as Answer, { ...meta, 'toolgate/reason': call.reason.code });
  return {
    content: [{ type: 'text', text: outcomeText(call) }],
    isError: true,
    _meta: { ...meta, 'toolgate/reason': call.reason.code },
  };
}

function withMeta(result: Answer, meta: Record<string, unknown>): Answer {
  const upstreamMeta = typeof result._meta === 'object' && result._meta !== null ? result._meta : {};
  return { ...result, _meta: { ...upstreamMeta, ...meta } };
}

/**
 * What the client gets for a call still waiting for a person: where to decide, and how to ask
 * for the outcome later. It is an error result, since the tool has not run. A client that named
 * the call (`named`) asks again by its id; one that did not asks again with the same arguments,
 * which joins the call in its session (a model there cannot set `_meta`, so it is not told to).
 */
export function answerWaiting(call: ToolCallRecord, approvalUrl: string, named: boolean): Answer {
  const again = named
    ? `call "${call.name}" again with the same arguments and _meta {"${CALL_ID}": ${JSON.stringify(call.id)}}`
    : `call "${call.name}" again with exactly the same arguments: that joins this call, which runs at most once`;
  return {
    content: [
      {
        type: 'text',
        text:
          `The call to "${call.name}" has not run: it waits for a person's approval. ` +
          `Approve or deny it at ${approvalUrl} (call ${call.id}). ` +
          `To get its outcome once they have decided, ${again}.`,
      },
    ],
    isError: true,
    _meta: { [CALL_ID]: call.id, 'toolgate/status': call.status, 'toolgate/approvalUrl': approvalUrl },
  };
}

/** An answer for a `tools/call` the gateway cannot take up at all (a bad call id, say). */
export function answerRefused(text: string): Answer {
  return { content: [{ type: 'text', text }], isError: true };
}
