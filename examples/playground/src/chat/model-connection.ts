import OpenAI from 'openai';
import { SCRIPTED_MODEL, createScriptedFetch, type ScriptedPace } from '../model/scripted-fetch.ts';

/** Where the assistant's turns come from. */
export type ModelConnection =
  | { readonly kind: 'scripted'; readonly pace: ScriptedPace }
  | { readonly kind: 'remote'; readonly baseURL: string; readonly model: string; readonly apiKey: string };

export interface ConnectedModel {
  readonly client: OpenAI;
  readonly model: string;
  /** A short name for the header: which model is answering. */
  readonly label: string;
}

/**
 * An `openai` client for either mode. The scripted model is served by a `fetch` handed to the
 * SDK, so both modes share every step after the HTTP request: SSE parsing, stream reading, the gate.
 */
export function connect(connection: ModelConnection): ConnectedModel {
  if (connection.kind === 'scripted') {
    return {
      client: new OpenAI({
        apiKey: 'offline',
        baseURL: 'https://scripted.model.invalid/v1',
        fetch: createScriptedFetch(connection.pace),
        dangerouslyAllowBrowser: true,
        maxRetries: 0,
      }),
      model: SCRIPTED_MODEL,
      label: 'Scripted model (offline)',
    };
  }
  return {
    client: new OpenAI({
      // Local servers (llama.cpp, Ollama, vLLM) accept any key; the SDK insists on one.
      apiKey: connection.apiKey === '' ? 'no-key' : connection.apiKey,
      baseURL: connection.baseURL.replace(/\/+$/, ''),
      dangerouslyAllowBrowser: true,
      maxRetries: 0,
    }),
    model: connection.model,
    label: `${connection.model} at ${connection.baseURL}`,
  };
}
