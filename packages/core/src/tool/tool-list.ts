import type { ToolDefinition } from './tool.ts';

/**
 * Checks the tools a gate is given (at creation or by `replaceTools`) and throws at once, naming
 * `where`, when they are not a list, when one of them is not a tool, or when two share a name:
 * a programmer's mistake, found before any call is made with the list.
 *
 * @example
 * checkToolList(next, 'gate.replaceTools'); // throws: tools[1] is not a tool …
 */
export function checkToolList(tools: unknown, where: string): asserts tools is readonly ToolDefinition[] {
  if (!Array.isArray(tools))
    throw new TypeError(
      `${where}: pass the tools as an array of defineTool(...) results (got ${kindOf(tools)}).`,
    );
  const names = new Set<string>();
  tools.forEach((tool: unknown, index) => {
    if (!isTool(tool)) {
      throw new TypeError(
        `${where}: tools[${index}] is not a tool (got ${kindOf(tool)}); make each tool with defineTool({ name, inputSchema, execute }).`,
      );
    }
    if (names.has(tool.name))
      throw new Error(`${where}: two tools are named "${tool.name}"; tool names must be unique.`);
    names.add(tool.name);
  });
}

function isTool(value: unknown): value is ToolDefinition {
  if (typeof value !== 'object' || value === null) return false;
  const { name, execute, inputSchema } = value as Partial<ToolDefinition>;
  return (
    typeof name === 'string' &&
    name !== '' &&
    typeof execute === 'function' &&
    typeof inputSchema === 'object' &&
    inputSchema !== null
  );
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value !== 'object') return typeof value;
  const name = (value as { name?: unknown }).name;
  return typeof name === 'string'
    ? `an object named "${name}" without an inputSchema object or an execute function`
    : 'an object';
}
