import { createToolRegistry, type ToolEntry, type ToolProblem, type ToolRegistry } from '@toolgate/core/kit';
import { type JsonSchemaCompiler, type ToolDefinition } from '@toolgate/core';
import { compensationEntry, isCompensationId } from '../outcomes/compensation-tool.ts';
import { checkTimes } from '../timers/plan.ts';

/**
 * The gate's tools, which `replaceTools` may change: later proposals see the new set, while each
 * call proposed here keeps the set it was proposed under until it ends, so that it is checked,
 * approved and run with one definition.
 *
 * @example
 * const tools = createToolSet([charge], ajvJsonSchema);
 * tools.pin('call_1');
 * tools.replace([charge2]);
 * tools.entry('charge', 'call_1'); // still the first charge
 */
export interface ToolSet {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each tool has its own input and output
  readonly list: () => readonly ToolDefinition<any, any, any>[];
  /**
   * The entry for `name`: of the set call `id` was proposed under, or of the current set. For a
   * compensation's id (`…:compensate`), the entry that runs the tool's `compensate`.
   */
  readonly entry: (name: string, id?: string) => ToolEntry | undefined;
  readonly names: () => readonly string[];
  readonly check: () => readonly ToolProblem[];
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each tool has its own input and output
  readonly replace: (tools: readonly ToolDefinition<any, any, any>[]) => void;
  /** Call `id` was proposed now, under the current set. */
  readonly pin: (id: string) => void;
  /** Call `id` has ended. */
  readonly unpin: (id: string) => void;
}

const PINNED = 10_000;

/**
 * Builds the tool set; throws at once when two tools share a name.
 *
 * @example
 * const tools = createToolSet(options.tools, options.jsonSchema ?? ajvJsonSchema);
 */
export function createToolSet(
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each tool has its own input and output
  initial: readonly ToolDefinition<any, any, any>[],
  compileJson: JsonSchemaCompiler,
): ToolSet {
  let tools = initial;
  let registry = createToolRegistry(tools, compileJson, 'createServerGate');
  checkTimes(tools, 'createServerGate');
  const pinned = new Map<string, ToolRegistry>();
  return {
    list: () => tools,
    entry(name, id) {
      const found = ((id === undefined ? undefined : pinned.get(id)) ?? registry).entry(name);
      // A compensation runs its tool's `compensate`, never its `execute`.
      return isCompensationId(id) ? compensationEntry(found) : found;
    },
    names: () => registry.names,
    check: () => registry.check(),
    replace(next) {
      if (!Array.isArray(next as unknown))
        throw new TypeError('serverGate.replaceTools: pass the tools as an array of defineTool objects.');
      checkTimes(next, 'serverGate.replaceTools');
      registry = createToolRegistry(next, compileJson, 'serverGate.replaceTools');
      tools = [...next];
    },
    pin(id) {
      pinned.delete(id);
      pinned.set(id, registry);
      if (pinned.size > PINNED) pinned.delete(pinned.keys().next().value as string);
    },
    unpin: (id) => pinned.delete(id),
  };
}
