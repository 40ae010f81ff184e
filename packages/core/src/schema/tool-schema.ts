import type { StandardSchemaV1 } from '@standard-schema/spec';
import type { JSONSchema } from 'json-schema-to-ts';

/**
 * A plain JSON Schema object (draft 2020-12). Write it `as const`, or inline in `defineTool`,
 * and the tool's input type is inferred from it.
 *
 * @example
 * const schema = { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } as const satisfies JsonSchemaObject;
 */
export type JsonSchemaObject = Exclude<JSONSchema, boolean>;

/**
 * What `inputSchema` and `outputSchema` accept: any Standard Schema (Zod 4, Valibot, ArkType)
 * or a plain JSON Schema object.
 *
 * @example
 * const a: ToolSchema = z.object({ q: z.string() });
 * const b: ToolSchema = { type: 'object', properties: { q: { type: 'string' } } };
 */
export type ToolSchema = StandardSchemaV1 | JsonSchemaObject;
