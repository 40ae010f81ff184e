export type { ChatHandle, ChatToolPart } from './chat-calls.ts';
export { ToolCallStatus, type ChatToolCallStatusProps } from './tool-call-status.tsx';
export { toolgateSendAutomaticallyWhen } from './send-automatically.ts';
