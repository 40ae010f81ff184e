/**
 * `<ToolCallStatus>` and its parts under short names, to import as one namespace as Radix's
 * primitives are: `Root`, `Label`, `Input`, `Reason`, `Approvals`, `Changes`, `Refusal`,
 * `Actions`, `Edit`, `Settle` and `Undo`. They are the very components `@toolgate/react` exports as
 * `ToolCallStatus`, `ToolCallStatusLabel`…; use whichever reads better.
 *
 * @example
 * import * as ToolCallStatus from '@toolgate/react/tool-call-status';
 *
 * <ToolCallStatus.Root id={id} className="call">
 *   <ToolCallStatus.Label />
 *   <ToolCallStatus.Input />
 *   <ToolCallStatus.Actions />
 * </ToolCallStatus.Root>
 *
 * @module
 */
export {
  ToolCallStatus as Root,
  ToolCallStatusLabel as Label,
  ToolCallStatusInput as Input,
  ToolCallStatusReason as Reason,
  ToolCallStatusApprovals as Approvals,
  ToolCallStatusChanges as Changes,
  ToolCallStatusRefusal as Refusal,
  ToolCallStatusActions as Actions,
  ToolCallStatusEdit as Edit,
  type ToolCallStatusProps as RootProps,
  type ToolCallStatusInputProps as InputProps,
  type NamedPartProps,
  type ToolCallEditor as Editor,
  type ToolCallStatusLabels as Labels,
} from './tool-call-status.tsx';
export {
  ToolCallStatusSettle as Settle,
  ToolCallStatusUndo as Undo,
  type ToolCallSettler as Settler,
  type ToolCallUndoer as Undoer,
} from './tool-call-outcome.tsx';
