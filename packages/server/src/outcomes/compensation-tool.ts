import type { ToolContext, ToolDefinition } from '@toolgate/core';
import type { ToolEntry } from '@toolgate/core/kit';

/**
 * How a compensation's call id ends: the call it undoes is the id before it. Ids with this ending
 * are kept for compensations (a proposal of one is refused), so a model can never name one.
 *
 * @example
 * `${id}${COMPENSATION}`; // 'call_1:compensate'
 */
export const COMPENSATION = ':compensate';

/**
 * Whether a call id names a compensation.
 *
 * @example
 * isCompensationId('call_1:compensate'); // true
 */
export function isCompensationId(id: string | undefined): id is string {
  return id !== undefined && id.endsWith(COMPENSATION);
}

/**
 * The input of a compensation call: the call it undoes, the output that call committed (what
 * `compensate` receives), and why it is undone. What an approver sees and approves by its hash.
 *
 * @example
 * const input: CompensationInput = { call: 'call_1', output: { charge: 'ch_42' }, reason: 'the customer returned it' };
 */
export interface CompensationInput {
  readonly call: string;
  readonly output: unknown;
  readonly reason?: string;
}

const derived = new WeakMap<ToolEntry, ToolEntry>();

const DROPPED = [
  'outputSchema',
  'commit',
  'reconcile',
  'onUnknown',
  'idempotencyKey',
  'authorize',
  'repair',
  'compensate',
] as const;

/**
 * The tool a compensation call of `entry`'s tool runs: its `compensate` on the output it undoes,
 * with the tool's name, kind (`idempotent`, `transactional`: how a crash is recovered) and
 * approval rules, and nothing of its own model-facing checks. Its input is the gate's, never a
 * person's: an approver's edit is refused. `undefined` when the tool has no `compensate`.
 *
 * @example
 * const entry = compensationEntry(tools.entry('charge'));
 */
export function compensationEntry(entry: ToolEntry | undefined): ToolEntry | undefined {
  if (entry === undefined) return undefined;
  const known = derived.get(entry);
  if (known !== undefined) return known;
  const tool = entry.tool;
  if (tool.compensate === undefined) return undefined;
  // The tool's kind and approval rules stay; what speaks to the model or to its own run goes.
  const kept: Record<string, unknown> = { ...tool };
  for (const key of DROPPED) delete kept[key];
  const undo = Object.freeze({
    ...kept,
    description: `Undoes a committed call of "${tool.name}"`,
    inputSchema: { type: 'object', required: ['call', 'output'] } as const,
    execute: (input: CompensationInput, ctx: ToolContext) => tool.compensate?.(input.output, ctx),
  }) as unknown as ToolDefinition;
  const made: ToolEntry = {
    tool: undo,
    validateInput: () => ({
      ok: false,
      issues: [{ path: '', message: 'a compensation undoes what was committed; its input cannot be edited' }],
    }),
    validateOutput: undefined,
  };
  derived.set(entry, made);
  return made;
}
