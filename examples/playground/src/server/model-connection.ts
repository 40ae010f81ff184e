import OpenAI from 'openai';
import type { Pace } from '../chat/transcript.ts';
import { SCRIPTED_MODEL, createScriptedFetch } from '../model/scripted-fetch.ts';

/** The visitor's own model, as they entered it. The key stays in this server's memory only. */
export interface RemoteModel {
  readonly baseURL: string;
  readonly model: string;
  readonly apiKey: string;
}

export interface ConnectedModel {
  readonly client: OpenAI;
  readonly model: string;
}

/**
 * An `openai` client for the scripted model: it is served by a `fetch` handed to the SDK, so the
 * offline mode takes every step a real model's stream takes (SSE parsing, the stream reader, the gate).
 */
export function scriptedModel(pace: Pace): ConnectedModel {
  return {
    client: new OpenAI({ apiKey: 'offline', baseURL: 'https://scripted.model.invalid/v1', fetch: createScriptedFetch(pace), maxRetries: 0 }),
    model: SCRIPTED_MODEL,
  };
}

/** An `openai` client for the visitor's endpoint, called from this server with their key. */
export function remoteModel(settings: RemoteModel): ConnectedModel {
  return {
    client: new OpenAI({
      // Local servers (llama.cpp, Ollama, vLLM) accept any key; the SDK insists on one.
      apiKey: settings.apiKey === '' ? 'no-key' : settings.apiKey,
      baseURL: settings.baseURL.replace(/\/+$/, ''),
      maxRetries: 0,
    }),
    model: settings.model,
  };
}

export const SCRIPTED_LABEL = 'Scripted model (offline)';

export const remoteLabel = (settings: Pick<RemoteModel, 'baseURL' | 'model'>) => `${settings.model} at ${settings.baseURL}`;
