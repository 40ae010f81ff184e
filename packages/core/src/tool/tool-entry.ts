import { messageOf } from '../record/text.ts';
import { compileSchema, type JsonSchemaCompiler, type Validate } from '../schema/schema.ts';
import type { ToolDefinition } from './tool.ts';

/**
 * A registered tool with its compiled checks.
 *
 * @example
 * const entry: ToolEntry = { tool: charge, validateInput, validateOutput: undefined };
 */
export interface ToolEntry {
  readonly tool: ToolDefinition;
  readonly validateInput: Validate;
  readonly validateOutput: Validate | undefined;
  /**
   * Why the tool cannot be used (a schema of it does not compile), naming the tool; a call of it
   * is rejected with `tool_unavailable` before anything runs.
   */
  readonly problem?: string;
}

/**
 * Compiles a tool's schemas into its entry. A schema that does not compile does not throw: the
 * entry carries the problem, so that a gate can be built before its schemas are compiled (on a
 * tool's first call) and a broken tool refuses its calls while the others work.
 *
 * @example
 * const entry = compileEntry(charge, ajvJsonSchema);
 * if (entry.problem) console.error(entry.problem);
 */
export function compileEntry(tool: ToolDefinition, compileJson: JsonSchemaCompiler): ToolEntry {
  let part = 'input';
  try {
    const validateInput = compileSchema(tool.inputSchema, compileJson);
    part = 'output';
    const validateOutput =
      tool.outputSchema === undefined ? undefined : compileSchema(tool.outputSchema, compileJson);
    return { tool, validateInput, validateOutput };
  } catch (error) {
    const problem = `the ${part} schema of tool "${tool.name}" does not compile: ${messageOf(error)}`;
    return {
      tool,
      validateInput: () => ({ ok: false, issues: [{ path: '', message: problem }] }),
      validateOutput: undefined,
      problem,
    };
  }
}
