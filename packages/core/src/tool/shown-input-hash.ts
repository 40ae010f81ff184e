import { inputHash } from '../record/input-hash.ts';
import { isStandardSchema, standardValidate } from '../schema/schema.ts';
import type { ToolDefinition } from './tool.ts';

/**
 * The hash of an input a person was shown, as the tool reads it: a Standard Schema that transforms
 * its input (a default, a trim) gave the ledger its output, so the shown input is read through the
 * same schema before it is hashed. Any other input reads as another value either way, and an input
 * with no JSON form hashes to a value no call holds — so an approval carrying it is refused, never
 * thrown.
 *
 * @example
 * const hash = await shownInputHash(transfer, part.input);
 * await serverGate.approve(part.toolCallId, { principal, inputHash: hash });
 */
export async function shownInputHash(
  tool: Pick<ToolDefinition, 'inputSchema'> | undefined,
  input: unknown,
): Promise<string> {
  const schema = tool?.inputSchema;
  if (schema !== undefined && isStandardSchema(schema)) {
    try {
      const read = await standardValidate(schema)(input);
      if (read.ok) return await hashOf(read.value);
    } catch {
      // A schema that throws reads nothing: the input is hashed as it is, and refused.
    }
  }
  return hashOf(input);
}

async function hashOf(input: unknown): Promise<string> {
  try {
    return await inputHash(input);
  } catch {
    return 'no-json-form';
  }
}
