import type { JsonSchemaCompiler } from '../schema/schema.ts';
import { createToolRegistry, type ToolProblem, type ToolRegistry } from '../tool/registry.ts';
import type { ToolEntry } from '../tool/tool-entry.ts';
import { checkToolList } from '../tool/tool-list.ts';
import { createToolVersions } from '../tool/tool-versions.ts';
import type { ToolDefinition } from '../tool/tool.ts';

/**
 * The browser gate's tools, which `replaceTools` may change: later proposals see the new set,
 * and a call proposed before keeps the definition it was proposed with until it ends.
 *
 * @example
 * const tools = createGateTools(options.tools, ajvJsonSchema, store !== undefined);
 * tools.replace([charge2], ['call_1']);
 * tools.entry('charge', 'call_1'); // still the first charge
 */
export interface GateTools {
  readonly list: () => readonly ToolDefinition[];
  /** The entry for `name` in the set call `id` was proposed under. */
  readonly entry: (name: string, id: string) => ToolEntry | undefined;
  readonly names: () => readonly string[];
  readonly check: () => readonly ToolProblem[];
  /** Throws, and changes nothing, when `tools` is not a valid set for this gate. */
  readonly replace: (tools: unknown, open: Iterable<string>) => void;
  readonly release: (id: string) => void;
}

interface ToolSetVersion {
  readonly tools: readonly ToolDefinition[];
  readonly registry: ToolRegistry;
}

/**
 * Builds the gate's tools; throws at once for a set it could not use (see `checkToolList`, and a
 * tool with a `commit` on a gate with no store).
 *
 * @example
 * const tools = createGateTools(options.tools, compileJson, options.store !== undefined);
 */
export function createGateTools(
  first: unknown,
  compileJson: JsonSchemaCompiler,
  hasStore: boolean,
): GateTools {
  const compiled = new WeakMap<ToolDefinition, ToolEntry>();
  function version(tools: unknown, where: string): ToolSetVersion {
    checkToolList(tools, where);
    for (const tool of tools) {
      if (tool.commit && !hasStore) {
        throw new Error(
          `${where}: tool "${tool.name}" has a commit but the gate has no store; pass your Zustand store as \`store\`.`,
        );
      }
    }
    return { tools, registry: createToolRegistry(tools, compileJson, where, compiled) };
  }
  const versions = createToolVersions(version(first, 'createToolGate'));
  return {
    list: () => versions.current().tools,
    entry: (name, id) => versions.of(id).registry.entry(name),
    names: () => versions.current().registry.names,
    check: () => versions.current().registry.check(),
    // A copy: the app may change its own array later without changing the gate's tools.
    replace: (tools, open) =>
      versions.replace(
        version(Array.isArray(tools) ? [...(tools as unknown[])] : tools, 'gate.replaceTools'),
        open,
      ),
    release: versions.release,
  };
}
