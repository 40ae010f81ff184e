import { createToolGateWith } from './gate/gate.ts';
import { ajvJsonSchema } from './schema/ajv.ts';

export * from './api.ts';
export { createAjvJsonSchema } from './schema/ajv.ts';

/**
 * Creates a gate for the given tools. JSON Schemas are compiled with Ajv, the fastest correct
 * validator; under a Content-Security-Policy without `'unsafe-eval'`, import `createToolGate` from
 * `@toolgate/core/csp` instead.
 *
 * @example
 * const gate = createToolGate({ tools: [charge], store: shopStore });
 * const call = await gate.run({ name: 'charge', arguments: '{"amount_cents":1250,"currency":"USD"}' });
 * call.status; // 'committed'
 */
export const createToolGate = createToolGateWith(ajvJsonSchema);
