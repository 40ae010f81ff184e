import type { StandardJSONSchemaV1 } from '@standard-schema/spec';
import { isStandardSchema } from '../schema/schema.ts';
import { jsonSchemaAs2020 } from '../schema/dialect.ts';
import type { ToolDefinition, ToolSchema } from './tool.ts';

/**
 * The JSON Schema (draft 2020-12) a tool's input is described with to a model: the schema itself
 * when it is a JSON Schema, or the one a Standard Schema library generates (Zod 4, Valibot with
 * `@valibot/to-json-schema`, ArkType). A draft-07 schema is rewritten as the 2020-12 schema that
 * accepts the same values (`jsonSchemaAs2020`), so that a provider reading 2020-12 reads what the
 * gate enforces. The top-level `$schema` is left out, since providers do not want it. Throws,
 * naming the tool, when the schema cannot be described.
 *
 * @example
 * toolJsonSchema(defineTool({ name: 'search', inputSchema: z.object({ q: z.string() }), execute }));
 * // { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] }
 */
export function toolJsonSchema(tool: ToolDefinition, who = 'toolJsonSchema'): Record<string, unknown> {
  return exportSchema(tool.inputSchema, `${who}: tool "${tool.name}"`);
}

function exportSchema(schema: ToolSchema, where: string): Record<string, unknown> {
  let json: Record<string, unknown>;
  if (isStandardSchema(schema)) {
    const converter = (schema['~standard'] as Partial<StandardJSONSchemaV1.Props>).jsonSchema;
    if (converter === undefined) {
      throw new Error(
        `${where} has a Standard Schema that cannot produce a JSON Schema; use a library that implements Standard JSON Schema (Zod 4, ArkType) or give the tool a JSON Schema.`,
      );
    }
    try {
      json = converter.input({ target: 'draft-2020-12' });
    } catch (error) {
      throw new Error(
        `${where}: its schema could not be turned into JSON Schema: ${(error as Error).message}`,
        { cause: error },
      );
    }
  } else json = schema;
  try {
    return jsonSchemaAs2020(json);
  } catch (error) {
    throw new Error(`${where}: ${(error as Error).message}`, { cause: error });
  }
}

/**
 * Checks tool names against a provider's rule and that no two tools share one; throws a message
 * that names the tool and the rule.
 *
 * @example
 * checkToolNames(gate.tools, /^[a-zA-Z0-9_-]{1,64}$/, 'openaiChatTools', 'OpenAI');
 */
export function checkToolNames(
  tools: readonly ToolDefinition[],
  rule: RegExp,
  who: string,
  provider: string,
): void {
  const seen = new Set<string>();
  for (const tool of tools) {
    if (!rule.test(tool.name)) {
      throw new Error(
        `${who}: tool name "${tool.name}" is not allowed by ${provider}, which requires ${String(rule)}; rename the tool.`,
      );
    }
    if (seen.has(tool.name))
      throw new Error(`${who}: two tools are named "${tool.name}"; tool names must be unique.`);
    seen.add(tool.name);
  }
}
