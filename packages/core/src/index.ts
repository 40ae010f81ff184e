import { createToolGateWith } from './gate/gate.ts';
import { cfworkerJsonSchema, createCfworkerJsonSchema } from './schema/cfworker.ts';

export * from './api.ts';
export { cfworkerJsonSchema, createCfworkerJsonSchema };

/**
 * Creates a gate for the given tools. JSON Schemas are checked by @cfworker/json-schema, an
 * interpreter that never uses `eval` (so it runs under a strict Content-Security-Policy) and adds
 * about 6 kB to an app; Ajv, which generates code and is faster on large arguments but adds about
 * 35 kB, is one import away: `createToolGate` from `@toolgate/core/ajv`.
 *
 * @example
 * const gate = createToolGate({ tools: [charge], store: shopStore });
 * const call = await gate.run({ name: 'charge', arguments: '{"amount_cents":1250,"currency":"USD"}' });
 * call.status; // 'committed'
 */
export const createToolGate = createToolGateWith(cfworkerJsonSchema);
