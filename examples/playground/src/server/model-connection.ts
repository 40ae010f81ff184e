import { STATUS_CODES } from 'node:http';
import OpenAI, { APIConnectionError, APIError } from 'openai';
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
    client: new OpenAI({
      apiKey: 'offline',
      baseURL: 'https://scripted.model.invalid/v1',
      fetch: createScriptedFetch(pace),
      maxRetries: 0,
    }),
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

export const remoteLabel = (settings: Pick<RemoteModel, 'baseURL' | 'model'>) =>
  `${settings.model} at ${settings.baseURL}`;

/** The longest part of a provider's error message a notice quotes. */
const QUOTED = 200;

/**
 * Why a turn could not begin, for the chat's notice: when the endpoint answered, its HTTP status and
 * what the provider said (a wrong key, model or path is then plain to see); "could not be reached"
 * only when no answer came at all (refused, no such host, timed out); "was not asked" when nothing
 * was sent.
 *
 * @example
 * modelFailure(new AuthenticationError(401, { message: 'Incorrect API key provided' }, undefined, new Headers()), 'Your model');
 * // 'Your model answered 401 Unauthorized: Incorrect API key provided'
 */
export function modelFailure(error: unknown, who: string): string {
  if (error instanceof APIError && typeof error.status === 'number') {
    const status: number = error.status;
    const body = error.error as { message?: unknown } | undefined;
    // The SDK's own message starts with the status; the provider's words are what follows it.
    const said = typeof body?.message === 'string' ? body.message : error.message.replace(/^\d{3}\s*/, '');
    return `${who} answered ${status} ${STATUS_CODES[status] ?? 'error'}: ${shorten(said.replace(/\s+/g, ' ').trim())}`;
  }
  if (error instanceof APIConnectionError) return `${who} could not be reached: ${networkCause(error)}`;
  // Nothing was sent: the server could not even ask (it holds no settings for the model, say).
  return `${who} was not asked: ${error instanceof Error ? error.message : String(error)}`;
}

function shorten(text: string): string {
  if (text.length <= QUOTED) return text;
  const cut = text.slice(0, QUOTED);
  const space = cut.lastIndexOf(' ');
  return `${(space > QUOTED / 2 ? cut.slice(0, space) : cut).replace(/[\s.,;:]+$/, '')}…`;
}

/** The SDK says only "Connection error."; the system's code under it (ECONNREFUSED, ENOTFOUND) says which. */
function networkCause(error: Error): string {
  const said = error.message;
  for (let cause: unknown = error; cause instanceof Error; cause = cause.cause) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === 'string' && code !== '') return `${said} (${code})`;
  }
  return said;
}
