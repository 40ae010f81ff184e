export {
  toolgateChat,
  type ToolgateChat,
  type ToolgateChatOptions,
  type UIMessageStreamSource,
} from './chat.ts';
export type {
  ToolgateData,
  ToolgateDataChunk,
  ToolgateDataTypes,
  ToolgatePartChunk,
  ToolgateRefusal,
  ToolgateWriter,
} from './data-part.ts';
export { ToolCallOutcomeError, toolErrorText } from './outcome-error.ts';
export type { ToolgateToolSet, ToolgateUIMessage } from './tool-set.ts';
