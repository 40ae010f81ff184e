import { heldText, type ToolCallRecord } from '@toolgate/core';
import { outcomeText } from '@toolgate/core/kit';

/**
 * What a toolgate tool's `execute` throws for a call that did not commit: rejected (with each
 * offending argument path), denied, cancelled, failed or interrupted, or held because nobody knows
 * whether it took effect (a person will check). The message is the text the
 * model reads; `record` is the call as the ledger has it. The AI SDK turns it into the tool part's
 * `output-error`.
 *
 * @example
 * onError: (error) => (error instanceof ToolCallOutcomeError ? error.message : 'An error occurred.')
 */
export class ToolCallOutcomeError extends Error {
  override readonly name = 'ToolCallOutcomeError';
  readonly record: ToolCallRecord;

  constructor(record: ToolCallRecord, message: string = outcomeTextOf(record)) {
    super(message);
    this.record = record;
  }
}

/** The model's text for any record: the outcome of a settled call, or why an open one has not run. */
export function outcomeTextOf(record: ToolCallRecord): string {
  switch (record.status) {
    case 'committed':
    case 'rejected':
    case 'cancelled':
    case 'failed':
      return outcomeText(record);
    case 'awaiting_approval':
      return `The call to "${record.name}" is waiting for the user's approval; it has not run. Do not call it again: the user can still approve or deny it.`;
    case 'executing':
      return heldText(record) ?? `The call to "${record.name}" is executing; it has not finished.`;
    default:
      return `The call to "${record.name}" is ${record.status}; it has not finished.`;
  }
}

/**
 * The `errorText` to show in a tool part for an error a tool threw: toolgate's reason for a call
 * that did not commit (the status, the reason code, each offending path), and the AI SDK's own
 * masked text for anything else, so no server detail leaks to the page. Pass it as `onError` to
 * `toUIMessageStream` / `toUIMessageStreamResponse`.
 *
 * @example
 * writer.merge(result.toUIMessageStream({ onError: toolErrorText }));
 */
export function toolErrorText(error: unknown): string {
  if (error instanceof ToolCallOutcomeError) return error.message;
  // streamText's own check, left on beside toolgate's: say what to change rather than mask it.
  if (
    error instanceof Error &&
    error.name === 'AI_InvalidToolApprovalSignatureError' &&
    error.message.endsWith('missing signature')
  )
    return 'Tool approvals fail: remove experimental_toolApprovalSecret from streamText (toolgate binds each approval to its input).';
  return 'An error occurred.';
}
