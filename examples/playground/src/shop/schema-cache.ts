import { ajvJsonSchema, type JsonSchemaCompiler } from '@toolgate/core';

const compiled = new WeakMap<object, ReturnType<JsonSchemaCompiler>>();

/**
 * Ajv, compiling each schema object once. Every conversation builds a fresh gate (fresh records, a
 * fresh audit log) over the same schema objects; compiling six schemas again on each scenario pick
 * would cost the click tens of milliseconds.
 */
export const cachedJsonSchema: JsonSchemaCompiler = (schema) => {
  let validate = compiled.get(schema);
  if (validate === undefined) {
    validate = ajvJsonSchema(schema);
    compiled.set(schema, validate);
  }
  return validate;
};
