import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  ElicitResultSchema,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import type { ToolCallRecord } from '@toolgate/core';

/** What a person answered in the client's dialog. */
export type Elicited = 'approve' | 'deny' | 'dismissed';

/**
 * The text the client's approval dialog shows: the tool, the exact input the call holds (the one
 * the approval is bound to) and that input's hash, which the ledger records with the approval.
 */
export function approvalMessage(call: ToolCallRecord, upstream: string, hash: string): string {
  return [
    `Allow the tool "${call.name}" (from the MCP server "${upstream}") to run with exactly this input?`,
    '',
    JSON.stringify(call.input ?? {}, null, 2),
    '',
    `Input SHA-256 (RFC 8785 JSON): ${hash}`,
    `Call id: ${call.id}`,
    'Accept runs it once with this input; Decline refuses it. Closing this leaves it waiting on the approval page.',
  ].join('\n');
}

/**
 * Asks the person through MCP elicitation (form mode, no fields: the decision is the action), on
 * the request that carries the call, so Streamable HTTP sends it on that request's stream.
 * `signal` withdraws the question (the call was decided elsewhere, or the client cancelled).
 */
export async function elicitApproval(
  extra: RequestHandlerExtra<ServerRequest, ServerNotification>,
  message: string,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<Elicited> {
  const result = await extra.sendRequest(
    {
      method: 'elicitation/create',
      params: { message, requestedSchema: { type: 'object', properties: {} } },
    },
    ElicitResultSchema,
    { signal, timeout: timeoutMs },
  );
  if (result.action === 'accept') return 'approve';
  if (result.action === 'decline') return 'deny';
  return 'dismissed';
}
