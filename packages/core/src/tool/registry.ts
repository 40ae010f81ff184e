import { compileEntry, type ToolEntry } from './tool-entry.ts';
import { checkToolList } from './tool-list.ts';
import type { JsonSchemaCompiler } from '../schema/schema.ts';
import type { ToolDefinition } from './tool.ts';

/**
 * A tool that cannot be used, as `gate.check()` lists it: its name, and why (which of its schemas
 * does not compile, and the compiler's words).
 *
 * @example
 * const problem: ToolProblem = { tool: 'search', message: 'the input schema of tool "search" does not compile: …' };
 */
export interface ToolProblem {
  readonly tool: string;
  readonly message: string;
}

/**
 * The tools a gate may run, by name (own names only), with each one's schemas compiled on its
 * first call: compiling takes milliseconds a schema, and an MCP server can list hundreds of tools
 * the model never calls. Both gates keep their tools in one.
 *
 * @example
 * const registry = createToolRegistry(tools, ajvJsonSchema, 'createServerGate');
 * const entry = registry.entry('charge');
 */
export interface ToolRegistry {
  /** The tool's entry, compiled now if it was not; `undefined` for a name no tool has. */
  readonly entry: (name: string) => ToolEntry | undefined;
  readonly names: readonly string[];
  /** Compiles every tool's schemas and lists the tools whose schemas do not compile. */
  readonly check: () => readonly ToolProblem[];
}

/**
 * Builds a registry; throws at once, naming `where` it was asked, when `tools` is not a list of
 * tools or two of them share a name. `compiled` keeps entries across registries, so that a gate
 * whose tools are replaced compiles each definition it had already used only once.
 *
 * @example
 * const registry = createToolRegistry([charge, refund], ajvJsonSchema, 'createToolGate');
 */
export function createToolRegistry(
  tools: readonly ToolDefinition[],
  compileJson: JsonSchemaCompiler,
  where: string,
  compiled?: WeakMap<ToolDefinition, ToolEntry>,
): ToolRegistry {
  checkToolList(tools, where);
  const byName = new Map<string, ToolDefinition>();
  for (const tool of tools) byName.set(tool.name, tool);
  const names = [...byName.keys()];
  const entries = new Map<string, ToolEntry>();
  function entry(name: string): ToolEntry | undefined {
    let found = entries.get(name);
    if (found === undefined) {
      const tool = byName.get(name);
      if (tool === undefined) return undefined;
      found = compiled?.get(tool) ?? compileEntry(tool, compileJson);
      compiled?.set(tool, found);
      entries.set(name, found);
    }
    return found;
  }
  return {
    entry,
    names,
    check: () =>
      names.flatMap((name) => {
        const problem = entry(name)?.problem;
        return problem === undefined ? [] : [{ tool: name, message: problem }];
      }),
  };
}
