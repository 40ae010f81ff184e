import { outputText } from '@toolgate/core';
import { ToolCallStatus, ToolCallStatusLabel, useToolCall } from '@toolgate/react';
import { memo, type ReactElement } from 'react';

/**
 * One tool call in the transcript: what the model asked for (its arguments as they stream, then
 * as validated), the live status with its reason and actions, and the result once committed.
 * Everything the model or a tool wrote is shown as text.
 */
export const ToolCallCard = memo(function ToolCallCard({ id }: { id: string }): ReactElement {
  const { call } = useToolCall(id);
  const args = call === undefined ? undefined : call.status === 'pending' ? call.preview : call.input;
  return (
    <li className="call-card" data-testid="tool-call" data-call-id={id}>
      <div className="call-head">
        <code className="call-name">{call?.name || 'tool call'}</code>
        <span className="call-id">{id}</span>
      </div>
      <pre className="call-args" aria-label="Arguments">
        {args === undefined ? (call?.status === 'pending' ? '…' : '(arguments not accepted)') : JSON.stringify(args)}
      </pre>
      <ToolCallStatus id={id} className="call-status" />
      {call?.status === 'committed' ? (
        <p className="call-output">
          <span className="call-output-label">Result</span> <code>{outputText(call.output)}</code>
        </p>
      ) : null}
    </li>
  );
});

/** A turn with many calls shows each as a compact status, so that hundreds stay readable and light. */
export const ToolCallChip = memo(function ToolCallChip({ id }: { id: string }): ReactElement {
  return (
    <li className="call-chip" data-testid="tool-call" data-call-id={id}>
      <ToolCallStatus id={id} className="call-status compact">
        <ToolCallStatusLabel />
      </ToolCallStatus>
    </li>
  );
});
