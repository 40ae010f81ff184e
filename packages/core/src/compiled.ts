import { createToolGateWith } from './gate/gate.ts';
import { buildTimeOnlyJsonSchema } from './schema/build-time.ts';

export * from './api.ts';
// Every name `@toolgate/core` has, since the plugin points that import here; unused, they are
// shaken out with the validator behind them.
export { cfworkerJsonSchema, createCfworkerJsonSchema } from './schema/cfworker.ts';

/**
 * Creates a gate that checks JSON Schemas only with the validators the Vite plugin of
 * `@toolgate/core/vite` generated at build time, so that the app ships no JSON Schema validator
 * of its own. The plugin points `@toolgate/core` here; an app does not import it by name. A tool
 * whose schema was not compiled is unavailable (`gate.check()` says why), and a gate given its own
 * `jsonSchema` compiler uses that one. Otherwise the same as the default `createToolGate`.
 *
 * @example
 * // vite.config.js: plugins: [react(), toolgate()]
 * import { createToolGate } from '@toolgate/core';
 * const gate = createToolGate({ tools: [charge], store: shopStore });
 */
export const createToolGate = createToolGateWith(buildTimeOnlyJsonSchema);
