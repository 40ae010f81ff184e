export {
  ApprovalInbox,
  useApprovals,
  type ApprovalInboxLabels,
  type ApprovalInboxProps,
} from './approval-inbox.tsx';
export { ToolGateProvider, useToolGate, type ToolGateProviderProps } from './provider.tsx';
export {
  ToolCallStatus,
  ToolCallStatusActions,
  ToolCallStatusApprovals,
  ToolCallStatusChanges,
  ToolCallStatusEdit,
  ToolCallStatusInput,
  ToolCallStatusLabel,
  ToolCallStatusReason,
  ToolCallStatusRefusal,
  type NamedPartProps,
  type ToolCallEditor,
  type ToolCallStatusInputProps,
  type ToolCallStatusLabels,
  type ToolCallStatusProps,
} from './tool-call-status.tsx';
export {
  ToolCallStatusSettle,
  ToolCallStatusUndo,
  type ToolCallSettler,
  type ToolCallUndoer,
} from './tool-call-outcome.tsx';
export type { ToolCallRefusalWords } from './refusal-words.ts';
export { showRemoteParts } from './remote-parts.tsx';
export { useGateConnection } from './use-gate-connection.ts';
export { useGateTools } from './use-gate-tools.ts';
export { useRemoteGate } from './use-remote-gate.ts';
export {
  useToolCall,
  type ToolCallControls,
  type UseToolCallOptions,
  type UseToolCallResult,
} from './use-tool-call.ts';
export { useToolCallIds, useToolCalls } from './use-tool-calls.ts';
