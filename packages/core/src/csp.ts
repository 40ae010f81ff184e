import { createToolGateWith } from './gate/gate.ts';
import { cfworkerJsonSchema, createCfworkerJsonSchema } from './schema/cfworker.ts';

export * from './api.ts';
export { cfworkerJsonSchema, createCfworkerJsonSchema };

/**
 * Creates a gate whose JSON Schemas are checked by @cfworker/json-schema, which never uses
 * `eval`, so it runs under a strict Content-Security-Policy. Otherwise the same as the default
 * `createToolGate`.
 *
 * @example
 * import { createToolGate } from '@toolgate/core/csp';
 * const gate = createToolGate({ tools: [charge], store: shopStore });
 */
export const createToolGate = createToolGateWith(cfworkerJsonSchema);
