import type { ReactNode } from 'react';
import { ConnectionNote, keepRemoteParts, type RemoteParts } from './status-part.tsx';
import { ToolCallStatusUndo } from './tool-call-outcome.tsx';
import {
  ToolCallStatusApprovals,
  ToolCallStatusChanges,
  ToolCallStatusRefusal,
} from './tool-call-status.tsx';

const PARTS: RemoteParts = {
  Before: (): ReactNode => (
    <>
      <ToolCallStatusApprovals />
      <ToolCallStatusChanges />
      <ToolCallStatusRefusal />
    </>
  ),
  After: ToolCallStatusUndo,
  Note: ConnectionNote,
};

/**
 * Makes every `<ToolCallStatus>` without children show the parts only a server gate's calls need:
 * who approved and who is asked ({@link ToolCallStatusApprovals}), a person's edit
 * ({@link ToolCallStatusChanges}), a request the server refused ({@link ToolCallStatusRefusal}),
 * the connection's note beside the buttons, and Undo ({@link ToolCallStatusUndo}). A status under a
 * remote gate loads them by itself (a chunk of their own) and shows nothing until they are there;
 * calling this puts them in the main bundle so that no status waits. `useRemoteGate`,
 * `useApprovals` and `<ApprovalInbox />` call it. A local gate that shows records a server gate made
 * needs it. A gate that decides on the spot never needs them, so an app without one does not load them.
 *
 * @example
 * import { createRemoteGate } from '@toolgate/core/remote';
 * import { showRemoteParts } from '@toolgate/react';
 *
 * showRemoteParts();
 * const gate = createRemoteGate({ url: '/api/toolgate', session: chatId, tools, store });
 */
export function showRemoteParts(): void {
  keepRemoteParts(PARTS);
}
